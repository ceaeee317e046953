// How long an open stream must be quiet before the failure it holds is closed, for every reader
// of open streams: the daemon's tails (tail.h), `analyze --follow`, an open pipe and `watch -`
// (cli/live.h). One set of numbers, so that they close alike (docs/log-formats.md).
#pragma once

namespace triage::daemon {

struct SettleTimes {
  // After a fatal line (a fatal signature): the process has stopped. Long enough that the rest
  // of the same crash written by a later write (the traceback after an OOM kill line, a
  // launcher's summary) still joins it.
  double fatal_seconds = 0.5;
  // After a traceback (no fatal line), and for a multi-line event still open when the stream
  // goes quiet (flushed to the analyzer then).
  double traceback_seconds = 1;
  // Either extends to this (at most the quiet gap) while the last line written is the inside of
  // a multi-line event still open (a traceback's frame, a dump's frame).
  double unfinished_seconds = 10;
  // A failure left open by a stream that never goes quiet is closed after this long.
  double max_unsettled_seconds = 30;
};

inline constexpr SettleTimes kSettle{};

}  // namespace triage::daemon

// How long an open stream must be quiet before the failure it holds is closed, for every reader
// of open streams: the daemon's tails (tail.h), `analyze --follow`, an open pipe and `watch -`
// (cli/live.h). One set of numbers, so that they close alike (docs/log-formats.md).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "triage/core/analyzer.h"
#include "triage/core/incident.h"

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
  // What the stream still says of a failure already closed (EchoGuard) may come this long after
  // it: torchrun's monitor, for one, looks at its workers every 5 s before it prints its summary.
  double echo_seconds = 30;
};

inline constexpr SettleTimes kSettle{};

// A failure closed by its settle time may still be reported by the stream after it: the
// process's exit line, the launcher's summary of its child ("ChildFailedError ... Root Cause").
// Read whole, the analyzer folds those lines into the failure (core::kCascadeLines); read live,
// they come after the failure was closed, as an incident that names no cause of its own. Such an
// incident, within kCascadeLines of the last failure closed and echo_seconds after it, is that
// failure's echo, not a new one: the reader drops it, so that a stream read live gives the
// incidents and causes of the same stream read whole.
class EchoGuard {
 public:
  using Clock = std::chrono::steady_clock;

  // Drops from `closed` (the incidents a reader closed at `now`, in input order) the echoes of
  // the failure it closed before them by quiet. `by_quiet`: the reader closed these because the
  // stream went quiet (its settle time), not the analyzer on what it read: the last one kept is
  // then the failure later incidents may echo. (What the analyzer closed itself it has told
  // apart from what follows, as it does for the stream read whole.)
  void Filter(std::vector<core::Incident>& closed, Clock::time_point now, bool by_quiet) {
    std::vector<core::Incident> kept;
    for (auto& inc : closed) {
      if (Echo(inc, now)) {
        last_line_ = std::max(last_line_, inc.last_line);
        continue;
      }
      kept.push_back(std::move(inc));
    }
    if (by_quiet && !kept.empty()) {
      armed_ = true;
      last_line_ = kept.back().last_line;
      closed_ = now;
    }
    closed = std::move(kept);
  }

 private:
  bool Echo(const core::Incident& inc, Clock::time_point now) const {
    const bool names_none = inc.causes.empty() || inc.causes.front().cause == "unclassified";
    return armed_ && closed_ < now && names_none && inc.first_line <= last_line_ + core::kCascadeLines &&
           now - closed_ <= std::chrono::duration<double>(kSettle.echo_seconds);
  }

  bool armed_ = false;
  uint64_t last_line_ = 0;
  Clock::time_point closed_{};
};

}  // namespace triage::daemon

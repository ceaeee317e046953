// Open streams (DESIGN.md section 5b): a pipe that has not ended (`kubectl logs -f pod | triage
// analyze`) and files followed as they grow (`analyze --follow FILE`, like `tail -F`), analysed
// as they are written, each incident handed on as soon as it closes.
//
// The closing rules are the daemon's (daemon.h): an incident closes when the analyzer closes it;
// after a fatal line once its stream has been quiet for `fatal_settle_seconds`; after a crash
// that ends in a traceback once the stream has been quiet for `traceback_settle_seconds` (the
// traceback the assembler still holds open for lines that may belong to it is handed over at
// that point, EventStream::Flush); and a failure left open by a stream that never goes quiet
// closes after `max_unsettled_seconds`. A stream quiet for `traceback_settle_seconds` is read as
// ending there (core::Analyzer::EndSource): an error line that ends it is its failure, as in the
// file analysed whole; so is the end of an input, a stop, a rotation and a cut. Closing ends the stream's analysis there (a warning still
// waiting for a failure is dropped with it), as the end of a file ends it; line numbers go on.
//
// A followed file is read from its start, then looked at every `follow_poll_seconds`: a file
// renamed away and created again under its name (a rotation) is finished through its open
// descriptor and the new one read from its start; a file cut under it (copytruncate, also one
// written again past where it was read: triage/daemon/tail_read.h, the daemon's read) is read
// again from its start; a file that does not exist yet is waited for. Compressed files cannot be
// followed. Stdin that is a regular file is read to its end.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "triage/core/analyzer.h"
#include "triage/core/incident.h"
#include "triage/daemon/settle.h"
#include "triage/status.h"

namespace triage::cli {

struct LiveSettings {
  double fatal_settle_seconds = daemon::kSettle.fatal_seconds;
  double traceback_settle_seconds = daemon::kSettle.traceback_seconds;
  double max_unsettled_seconds = daemon::kSettle.max_unsettled_seconds;
  double follow_poll_seconds = 0.1;
  // Only events in this window (time_selection.h); normalized times, nullopt: no bound.
  std::optional<std::string> since, until;
  // The zone of times without one (the `[analyze] timezone` setting, IngestOptions::zone).
  std::optional<int32_t> zone;
  // Threads that may read stdin at once (pipe_split.h): while the pipe delivers faster than one
  // analyzer reads (it keeps bytes waiting for kBulkBytes in a row), what it gives is split
  // between them as a file is, and read live again once it is quiet for kBulkQuietSeconds; its
  // incidents are then handed on as the parts are joined, in input order. 1: one part, live.
  unsigned threads = 1;
  static constexpr uint64_t kBulkBytes = 4u << 20;
  static constexpr double kBulkQuietSeconds = 0.3;
};

struct LiveCallbacks {
  // Each incident, once it has closed, in closing order.
  std::function<void(core::Incident&&)> incident;
  // A problem with one input ("cannot open", "read failed"; `failed` false for a note such as
  // "waiting for it"); the others go on.
  std::function<void(const std::string& input, const std::string& why, bool failed)> error;
};

// Reads `inputs` ("-" is stdin, read until it ends; any other is a path, followed until `stop`)
// and returns when no input is left to read, or soon after `stop` turns true; everything still
// open is then closed and handed on. Fails only when no input could be read at all.
Status RunLive(const std::vector<std::string>& inputs, std::shared_ptr<const core::RuleSet> rules,
               const core::AnalyzerOptions& options, const LiveSettings& settings,
               const std::atomic<bool>& stop, const LiveCallbacks& callbacks);

}  // namespace triage::cli

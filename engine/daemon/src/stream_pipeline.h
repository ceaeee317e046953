// One tailed file's analysis: ingest::EventStream -> core::Analyzer, the pipeline of `analyze`,
// fed whole lines as the file grows. Line numbers in the incidents it returns are the file's
// (the stream may have started at a checkpoint after `first_line - 1` lines). Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triage/core/analyzer.h"
#include "triage/core/incident.h"
#include "triage/ingest/pipeline.h"

namespace triage::daemon::detail {

class StreamPipeline {
 public:
  // `lines_before`: how many lines of the file precede the first byte this pipeline is fed.
  // `find_lines`: the rules' whole-buffer prefilter (RuleSet::MakeLineFinder), may be empty;
  // it must not be called by another thread while this pipeline is fed. `zone`: the zone of
  // times without one (the `[analyze] timezone` setting, IngestOptions::zone).
  StreamPipeline(std::shared_ptr<const core::RuleSet> rules, core::AnalyzerOptions options,
                 uint64_t lines_before, ingest::FindLines find_lines = {},
                 std::optional<int32_t> zone = std::nullopt);
  ~StreamPipeline();
  StreamPipeline(const StreamPipeline&) = delete;
  StreamPipeline& operator=(const StreamPipeline&) = delete;

  // Feeds bytes that end on a line end (a whole number of lines). `source_name` is the file's
  // current path: evidence points at it.
  void Feed(std::string_view whole_lines, const std::string& source_name);
  // Incidents closed so far (by a fatal event and its window), not yet taken.
  std::vector<core::Incident> TakeClosed();
  // True when nothing is held: no multi-line event and no incident is open, nothing untaken.
  // Restarting a fresh pipeline here loses nothing and repeats nothing.
  bool Settled() const;
  // The file went quiet: the multi-line events still open (a faulthandler dump or a C++
  // terminate report, which nothing after them has closed) go to the analyzer now, as the end
  // of input would close them, and the stream goes on. Their failure, if any, is then seen.
  void Flush(const std::string& source_name);
  // A multi-line event is open (the analyzer has not seen it yet).
  bool assembling() const;
  // End of this file's input (quiet gap, file gone, --once): `rest` (a final line without its
  // end, may be empty) is fed, everything open is closed and returned with what was not taken.
  // With `ended` (the file went quiet, is gone, or --once reached its end) the input counts as
  // ended (core::Analyzer::EndSource): an error line that ends it is a failure, as when `analyze`
  // reads the file whole; a stream cut while it goes on is not.
  std::vector<core::Incident> Finish(std::string_view rest, const std::string& source_name,
                                     bool ended = true);

  const std::shared_ptr<const core::RuleSet>& rules() const { return rules_; }
  // A failure was fed (a fatal signature, or a traceback not logged as a warning, as the
  // analyzer decided it: core::Analyzer::last_event): the process has stopped, and its incident
  // can be written as soon as the file goes quiet.
  bool failure_seen() const { return failure_seen_; }
  // A fatal signature was fed (not just a traceback): the process has stopped for certain.
  bool fatal_seen() const { return fatal_seen_; }

 private:
  void Rebase(std::vector<core::Incident>& incidents) const;
  void UseSource(const std::string& source_name);

  std::shared_ptr<const core::RuleSet> rules_;
  uint64_t lines_before_;
  std::unique_ptr<core::Analyzer> analyzer_;
  std::unique_ptr<ingest::EventStream> stream_;
  const std::string* current_source_ = nullptr;
  std::string process_of_;  // the source whose process the stream was last given
  bool untaken_ = false;  // an Add happened since the last TakeClosed
  bool failure_seen_ = false;
  bool fatal_seen_ = false;
};

}  // namespace triage::daemon::detail

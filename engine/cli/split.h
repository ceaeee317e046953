// One input read by several analyzers at once (analyze's threads): the input is cut at line
// starts into parts, each read by an EventStream and an Analyzer of its own (a PartAnalysis),
// and their incidents are joined as one analyzer would have found them (PartJoin). A file is
// cut into as many parts as there are threads (cmd_analyze.cpp); a pipe into segments as it is
// read, while it delivers faster than one analyzer reads (pipe_split.h).
//
// A part reads its own range, then on past its end, a line at a time, while it still holds what
// the lines after the cut may join: an open multi-line event, an open incident not yet idle for
// the lines that close one, a signal of its range a failure may still join
// (core::Analyzer::holds_for_lines_after, PartAnalysis::Open). The next part's incidents whose failure lies
// within what the part before covered are that part's. Where a cut falls while every analyzer
// holds something, the join is an approximation; the signals' reach (docs/correlation.md) makes
// it exact on the logs measured (bench/README.md, "pipe").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "triage/core/analyzer.h"
#include "triage/core/incident.h"
#include "triage/ingest/pipeline.h"

namespace triage::cli {

// One part of a split input. Its line numbers are its own (from 1); where it starts in the input
// is its owner's to know. Not thread-safe: driven by one thread at a time.
class PartAnalysis {
 public:
  // `io`: the reading options; with `prefilter`, the rules' literal prefilter is set on them,
  // asking the analyzer in force, with `finder` (one per thread; RuleSet::MakeLineFinder()'s when
  // empty). A part that does not start its input (`starts_input` false) is not read as a pasted
  // fragment where it is short (core::AnalyzerOptions::starts_input).
  PartAnalysis(std::shared_ptr<const core::RuleSet> rules, core::AnalyzerOptions options,
               std::string name, uint32_t source_id, ingest::IngestOptions io,
               bool prefilter = true, ingest::FindLines finder = {}, bool starts_input = true);
  PartAnalysis(const PartAnalysis&) = delete;
  PartAnalysis& operator=(const PartAnalysis&) = delete;

  void Feed(std::string_view bytes);
  // Its own range ends here (at a line start): from now on it reads on only while Open().
  void EndRange();
  // Whether it must read on past its range (see the file comment); always true before EndRange().
  bool Open() const;
  // Feeds `bytes` (whole lines) a line at a time while Open(); the bytes used.
  size_t FeedWhileOpen(std::string_view bytes);

  // Each event, before the analyzer sees it; false drops it (a live stream's time selection).
  void SetFilter(std::function<bool(const ingest::Event&)> keep) { keep_ = std::move(keep); }
  // Each event's verdict, after the analyzer read it (a live stream's settle time: a fatal hit
  // seen). Nothing matches an event a second time for it.
  void SetVerdicts(std::function<void(const core::Analyzer::EventVerdict&)> seen) {
    verdicts_ = std::move(seen);
  }
  // The incidents closed so far, taken.
  std::vector<core::Incident> TakeClosed();
  // The end of what it read: its last event handed over, the source ended there when `ended`
  // (core::Analyzer::EndSource), every incident closed and taken with the others.
  std::vector<core::Incident> Finish(bool ended);
  // A new analyzer from here on (an open stream's stretch closed); the stream goes on.
  void NewAnalyzer() { analyzer_ = std::make_unique<core::Analyzer>(rules_, options_); }

  core::Analyzer& analyzer() { return *analyzer_; }
  ingest::EventStream& stream() { return *stream_; }
  uint64_t lines() const { return stream_->counters().lines; }  // newlines framed so far
  uint64_t lines_in_range() const { return lines_in_range_; }   // at EndRange()
  bool range_ended() const { return range_ended_; }

 private:
  std::shared_ptr<const core::RuleSet> rules_;
  core::AnalyzerOptions options_;
  std::string name_;
  uint32_t source_id_;
  std::unique_ptr<core::Analyzer> analyzer_;
  std::unique_ptr<ingest::EventStream> stream_;
  std::function<bool(const ingest::Event&)> keep_;
  std::function<void(const core::Analyzer::EventVerdict&)> verdicts_;
  std::vector<core::Incident> closed_;
  uint64_t lines_in_range_ = 0;
  bool range_ended_ = false;
};

// The parts' incidents in the numbering of the whole input, each once, joined part by part in
// input order as each finishes. A part's incidents are given the package versions the parts
// before it showed (core::CarryVersions), so that one analyzer and many give the same report.
class PartJoin {
 public:
  explicit PartJoin(const core::RuleSet& rules) : rules_(&rules) {}

  // Part after part: its incidents (numbered from its start), the newlines of its own range, the
  // newlines it read in all (past its range included) and the versions it showed
  // (Analyzer::VersionsShown). Gives the incidents it keeps.
  std::vector<core::Incident> Add(std::vector<core::Incident> incidents, uint64_t lines_in_range,
                                  uint64_t lines_covered,
                                  std::vector<core::PackageVersion> versions);
  // Where the next part starts: the newlines of the parts before.
  uint64_t offset() const { return offset_; }
  // An incident of the part being read (not yet Add-ed) numbered as in the input and given the
  // versions shown before the part; false when the parts before it have it.
  bool Keep(core::Incident& incident) const;
  // The part being read is done (its incidents given through Keep): the next one starts after
  // its `lines_in_range`, and what it covered and the versions it showed count.
  void Next(uint64_t lines_in_range, uint64_t lines_covered,
            std::vector<core::PackageVersion> versions);

 private:
  const core::RuleSet* rules_;
  uint64_t offset_ = 0;   // newlines before the part being read
  uint64_t covered_ = 0;  // the last line a part before it read
  bool first_ = true;     // no part before it
  std::vector<core::PackageVersion> earlier_;  // the last version of each package shown before
};

}  // namespace triage::cli

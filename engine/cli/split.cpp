// Parts of a split input: see split.h.
#include "split.h"

#include <algorithm>
#include <cstring>

#include "triage/core/rules.h"

namespace triage::cli {

namespace {

core::AnalyzerOptions StartingInput(core::AnalyzerOptions options, bool starts_input) {
  options.starts_input = starts_input;
  return options;
}

}  // namespace

PartAnalysis::PartAnalysis(std::shared_ptr<const core::RuleSet> rules,
                           core::AnalyzerOptions options, std::string name, uint32_t source_id,
                           ingest::IngestOptions io, bool prefilter, ingest::FindLines finder,
                           bool starts_input)
    : rules_(std::move(rules)),
      options_(StartingInput(std::move(options), starts_input)),
      name_(std::move(name)),
      source_id_(source_id),
      analyzer_(std::make_unique<core::Analyzer>(rules_, options_)) {
  if (prefilter) {
    rules_->UsePrefilter(io, *analyzer_, finder ? std::move(finder) : rules_->MakeLineFinder());
    // The prefilter asks the analyzer in force, not the first one (NewAnalyzer).
    io.keep_weak = [this] { return analyzer_->wants_benign(); };
  }
  stream_ =
      std::make_unique<ingest::EventStream>(source_id_, std::move(io), [this](ingest::Event&& ev) {
        if (keep_ && !keep_(ev)) return;
        analyzer_->Add(ev, name_);
        if (verdicts_) verdicts_(analyzer_->last_event());
        for (auto& inc : analyzer_->TakeClosed()) closed_.push_back(std::move(inc));
      });
}

void PartAnalysis::Feed(std::string_view bytes) { stream_->Feed(bytes); }

void PartAnalysis::EndRange() {
  lines_in_range_ = lines();
  range_ended_ = true;
}

bool PartAnalysis::Open() const {
  return !range_ended_ || !stream_->idle() ||
         analyzer_->holds_for_lines_after(lines(), lines_in_range_ + 1);
}

size_t PartAnalysis::FeedWhileOpen(std::string_view bytes) {
  size_t used = 0;
  while (used < bytes.size() && Open()) {
    const void* nl = std::memchr(bytes.data() + used, '\n', bytes.size() - used);
    const size_t end = nl ? size_t(static_cast<const char*>(nl) - bytes.data()) + 1 : bytes.size();
    stream_->Feed(bytes.substr(used, end - used));
    used = end;
  }
  return used;
}

std::vector<core::Incident> PartAnalysis::TakeClosed() {
  std::vector<core::Incident> out;
  out.swap(closed_);
  return out;
}

std::vector<core::Incident> PartAnalysis::Finish(bool ended) {
  stream_->Finish();
  if (ended) analyzer_->EndSource(source_id_, lines());
  for (auto& inc : analyzer_->Finish()) closed_.push_back(std::move(inc));
  return TakeClosed();
}

std::vector<core::Incident> PartJoin::Add(std::vector<core::Incident> incidents,
                                          uint64_t lines_in_range, uint64_t lines_covered,
                                          std::vector<core::PackageVersion> versions) {
  std::vector<core::Incident> kept;
  for (auto& inc : incidents)
    if (Keep(inc)) kept.push_back(std::move(inc));
  Next(lines_in_range, lines_covered, std::move(versions));
  return kept;
}

bool PartJoin::Keep(core::Incident& incident) const {
  core::ShiftLines(incident, offset_);
  // Failures up to where a part before stopped are that part's (it stopped only with nothing
  // open); a warning before that point may still open this part's.
  if (!first_ && incident.failure_line <= covered_) return false;
  core::CarryVersions(*rules_, earlier_, incident);
  return true;
}

void PartJoin::Next(uint64_t lines_in_range, uint64_t lines_covered,
                    std::vector<core::PackageVersion> versions) {
  for (auto& v : versions) {
    v.line += offset_;
    auto same = std::find_if(earlier_.begin(), earlier_.end(),
                             [&](const core::PackageVersion& e) { return e.package == v.package; });
    if (same != earlier_.end()) *same = std::move(v);
    else earlier_.push_back(std::move(v));
  }
  covered_ = std::max(covered_, offset_ + lines_covered);
  offset_ += lines_in_range;
  first_ = false;
}

}  // namespace triage::cli

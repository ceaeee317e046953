#include "stream_pipeline.h"

#include "triage/core/rules.h"

namespace triage::daemon::detail {

namespace {

// A pipeline that reads its file from the first line starts the input (an epoch after a
// checkpoint does not: its few lines are no pasted fragment).
core::AnalyzerOptions StartingAt(core::AnalyzerOptions options, uint64_t lines_before) {
  options.starts_input = lines_before == 0;
  return options;
}

}  // namespace

StreamPipeline::StreamPipeline(std::shared_ptr<const core::RuleSet> rules,
                               core::AnalyzerOptions options, uint64_t lines_before,
                               ingest::FindLines find_lines, std::optional<int32_t> zone)
    : rules_(std::move(rules)),
      lines_before_(lines_before),
      analyzer_(std::make_unique<core::Analyzer>(rules_, StartingAt(std::move(options), lines_before))) {
  ingest::IngestOptions ingest_options;
  ingest_options.zone = zone;
  // The same prefilter `analyze` uses: lines no signature can match are framed, not decoded.
  rules_->UsePrefilter(ingest_options, *analyzer_, std::move(find_lines));
  stream_ = std::make_unique<ingest::EventStream>(
      0, std::move(ingest_options), [this](ingest::Event&& event) {
        analyzer_->Add(event, *current_source_);
        const core::Analyzer::EventVerdict v = analyzer_->last_event();
        failure_seen_ |= v.failure;
        fatal_seen_ |= v.fatal;
        untaken_ = true;
      });
}

StreamPipeline::~StreamPipeline() = default;

// The lines of a file whose path names its job's process (a rank's own log) are that process's.
void StreamPipeline::UseSource(const std::string& source_name) {
  current_source_ = &source_name;
  if (source_name == process_of_) return;
  process_of_ = source_name;
  auto job = ingest::JobPathOf(source_name);
  stream_->SetSourceProcess(job ? job->process : std::string());
}

void StreamPipeline::Feed(std::string_view whole_lines, const std::string& source_name) {
  UseSource(source_name);
  stream_->Feed(whole_lines);
  current_source_ = nullptr;
}

std::vector<core::Incident> StreamPipeline::TakeClosed() {
  untaken_ = false;
  auto closed = analyzer_->TakeClosed();
  Rebase(closed);
  return closed;
}

bool StreamPipeline::Settled() const {
  return !untaken_ && stream_->idle() && analyzer_->idle();
}

void StreamPipeline::Flush(const std::string& source_name) {
  UseSource(source_name);
  stream_->Flush();
  current_source_ = nullptr;
}

bool StreamPipeline::assembling() const { return stream_->assembling(); }

std::vector<core::Incident> StreamPipeline::Finish(std::string_view rest,
                                                   const std::string& source_name, bool ended) {
  UseSource(source_name);
  if (!rest.empty()) stream_->Feed(rest);
  stream_->Finish();
  current_source_ = nullptr;
  untaken_ = false;
  // What was read ends here, as a file analysed whole ends: an error line that ends it is its
  // failure (`analyze` of the file as it is now gives the same incident).
  if (ended) analyzer_->EndSource(0, stream_->counters().lines);
  auto all = analyzer_->Finish();
  Rebase(all);
  return all;
}

void StreamPipeline::Rebase(std::vector<core::Incident>& incidents) const {
  for (auto& inc : incidents) core::ShiftLines(inc, lines_before_);
}

}  // namespace triage::daemon::detail

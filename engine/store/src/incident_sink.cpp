#include "triage/store/incident_sink.h"

#include <algorithm>
#include <iterator>

namespace triage::store {

IncidentSink::IncidentSink(core::VerificationRunner* runner, Store* store, Stored stored)
    : runner_(runner), store_(store), stored_(std::move(stored)) {}

void IncidentSink::Verify(std::vector<core::Incident>& incidents) {
  // Verification first, so that verdicts re-rank the causes and are stored with them.
  if (runner_)
    for (auto& incident : incidents) runner_->VerifyIncident(incident);
  for (auto& incident : incidents) core::ApplyVerdicts(incident);
}

Status IncidentSink::Put(std::vector<core::Incident>& incidents,
                         const std::vector<SourceCheckpoint>* checkpoints,
                         RecordOutcome* outcome, size_t batch) {
  Verify(incidents);
  if (!store_) {
    if (stored_)
      for (auto& incident : incidents) stored_(incident, RecordOutcome::Filed::kNew);
    return Status::Ok();
  }
  if (checkpoints) return Record(incidents, 0, incidents.size(), checkpoints, outcome);
  batch = std::max<size_t>(batch, 1);
  for (size_t begin = 0; begin < incidents.size(); begin += batch) {
    const size_t end = std::min(incidents.size(), begin + batch);
    if (Status st = Record(incidents, begin, end, nullptr, outcome); !st.ok()) return st;
  }
  return Status::Ok();
}

Status IncidentSink::Record(std::vector<core::Incident>& incidents, size_t begin, size_t end,
                            const std::vector<SourceCheckpoint>* checkpoints,
                            RecordOutcome* outcome) {
  const bool whole = begin == 0 && end == incidents.size();
  std::vector<core::Incident> part;
  if (!whole)
    part.assign(std::make_move_iterator(incidents.begin() + begin),
                std::make_move_iterator(incidents.begin() + end));
  std::vector<core::Incident>& batch = whole ? incidents : part;
  auto recorded = store_->Record(batch, checkpoints);
  if (!whole) std::move(part.begin(), part.end(), incidents.begin() + begin);
  if (!recorded.ok()) return recorded.status();
  if (outcome) {
    outcome->new_incidents += recorded->new_incidents;
    outcome->recurrences += recorded->recurrences;
    outcome->reopened += recorded->reopened;
    outcome->evidence_rows += recorded->evidence_rows;
    outcome->filed.insert(outcome->filed.end(), recorded->filed.begin(), recorded->filed.end());
  }
  if (!stored_) return Status::Ok();
  // A store that does not say how each was filed has them all taken as occurrences.
  const bool known = recorded->filed.size() == end - begin;
  for (size_t i = begin; i < end; ++i)
    stored_(incidents[i], known ? recorded->filed[i - begin] : RecordOutcome::Filed::kRecurrence);
  return Status::Ok();
}

}  // namespace triage::store

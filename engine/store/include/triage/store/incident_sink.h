// Where incidents go once they have closed, for every way triage reads logs (`analyze`, its open
// streams, `watch -` and the daemon): each is verified on this host (when a runner is given), its
// verdicts applied to the ranking of its causes (core::ApplyVerdicts), recorded in the store
// (when one is given), and handed on (notified, counted, logged, queued for a later check).
// Printing stays with the caller, which prints also what the store refused.
//
// Ownership: the sink owns neither the runner nor the store; both must outlive it. Not
// thread-safe (one per thread that puts).
//
// Errors: Put returns the store's error; then nothing of that transaction is kept, the ids of
// its incidents are unset and none of them is handed on. Verification never fails a Put (its
// answers are verdicts, `inconclusive` included).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "triage/core/incident.h"
#include "triage/core/verifier.h"
#include "triage/status.h"
#include "triage/store/store.h"

namespace triage::store {

class IncidentSink {
 public:
  // Called once per incident recorded (or, with no store, verified), in order, with how the
  // store filed it (kNew without a store). The incident may be moved from.
  using Stored = std::function<void(core::Incident& incident, RecordOutcome::Filed filed)>;

  // `runner`, `store` and `stored` may each be null: that step is left out.
  IncidentSink(core::VerificationRunner* runner, Store* store, Stored stored = {});
  IncidentSink(const IncidentSink&) = delete;
  IncidentSink& operator=(const IncidentSink&) = delete;

  // Verifies and applies the verdicts of every incident, then records them: with `checkpoints`,
  // all in one transaction with them (an empty `incidents` writes the checkpoints alone);
  // without, in transactions of at most `batch` incidents (a large input shows its first
  // incidents to `history` early, and an interrupted run keeps every batch that committed).
  // `outcome` (may be null) adds up what the transactions did.
  Status Put(std::vector<core::Incident>& incidents,
             const std::vector<SourceCheckpoint>* checkpoints = nullptr,
             RecordOutcome* outcome = nullptr, size_t batch = 256);

  // The verdicts of `incidents` applied, without recording (the verifying part of Put).
  void Verify(std::vector<core::Incident>& incidents);

 private:
  Status Record(std::vector<core::Incident>& incidents, size_t begin, size_t end,
                const std::vector<SourceCheckpoint>* checkpoints, RecordOutcome* outcome);

  core::VerificationRunner* runner_;
  Store* store_;
  Stored stored_;
};

}  // namespace triage::store

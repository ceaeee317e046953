// One job's processes in one incident (internal to triage::core; DESIGN.md section 5b): what the
// correlator and the reports need to name the processes that failed together.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ranker.h"
#include "triage/core/rules.h"
#include "triage/ingest/event.h"

namespace triage::core::detail {

// The processes that failed in one incident, in the order they failed, each once; at most
// Incident::kMaxActors kept, the rest counted.
struct ActorList {
  std::vector<std::string> names;
  uint64_t more = 0;
  // Adds `name` (an ActorOfProcess) unless it is empty or already listed.
  void Add(const std::string& name);
  // Puts `name` first (adding it when absent): the process that failed first.
  void PutFirst(const std::string& name);
};

// True when cause `cause_id` is a collective's failure (under nccl.failure in the taxonomy): in a
// job, what a process shows when a peer failed first or never joined (TAXONOMY.md, "Jobs").
bool IsCollectiveFailure(const RuleSet& rules, std::string_view cause_id);

// The job's processes of `incident` one by one into incident.ranks: its actors, each one's
// first failure among `failures` (in the order they came), its time, the cause or symptom whose
// evidence is that failure's, and its state ("failed" for a cause of its own, "victim" for a
// collective failure); then the other processes whose `hits` are in it (a peer's collective
// error folded as a symptom), as victims, at their first hit. Nothing where fewer than two
// processes took part.
void FillRanks(Incident& incident, const std::vector<FailureRecord>& failures,
               const std::vector<HitRecord>& hits, const RuleSet& rules);

// True when two actors (ActorOfProcess) are processes of one kind, as one job's are: their
// names equal once their numbers are taken out ("rank 0" and "rank 7", "TP0 EP0" and "TP3 EP3",
// "VllmWorker TP1 pid=41" and "VllmWorker TP2 pid=42"; not "rank 3" and "EngineCore pid=9").
// Removes the incidents `gone` marks (folded into another), keeping the others' order.
void DropFolded(std::vector<Incident>& incidents, const std::vector<bool>& gone);

bool SameKindOfActor(const std::string& a, const std::string& b);

// The rank torchrun's elastic agent names as the first to fail, from the lines of its
// ChildFailedError ("Root Cause (first observed failure):" then "rank      : 1 (local_rank:
// 1)"), as an actor ("rank 1"); empty when the event has no such block.
std::string FirstObservedFailure(const ingest::Event& event);

}  // namespace triage::core::detail

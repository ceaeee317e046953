// A job's Flight Recorder dumps given with its logs (DESIGN.md section 5b; docs/correlation.md,
// "Jobs"): the rank a hang waited for, as the dumps tell it.
#pragma once

#include <string>
#include <vector>

#include "triage/core/incident.h"
#include "triage/ingest/flight_recorder.h"

namespace triage::core {

// One rank's PyTorch NCCL Flight Recorder dump among the inputs of one analysis (a file named
// `nccl_trace_rank_<rank>`; triage/ingest/flight_recorder.h).
struct RankDump {
  std::string path;
  int rank = -1;
  ingest::FlightRecorderDump dump;
};

// A hang told by the Flight Recorder dumps of two or more of the job's ranks (docs/correlation.md,
// "Jobs"), as PyTorch's own trace analyser reads them: of the process group every dump has (the
// default one, "0", where all have it), the rank whose last enqueued collective is lowest (then
// its last completed one), alone, is behind; the collective it missed is the next one, as the
// other ranks' entries name it ("nccl:all_reduce_barrier"). Each incident whose first cause is a
// collective's timeout then names that rank first (`hung` in its ranks, first in its actors), the
// missed collective in its first cause's title and captures (missed_collective, missed_seq,
// missed_from = "flight_recorder"), and the dumps' group status among the cause's evidence (the
// dump's path, line 0). Nothing where the dumps do not single one rank out.
void NameLaggingRankFromDumps(std::vector<Incident>& incidents, const std::vector<RankDump>& dumps);

}  // namespace triage::core

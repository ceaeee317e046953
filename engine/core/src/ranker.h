// The ranker (internal to triage::core): the signature hits and failures of one incident window
// in, ranked root causes with symptoms out. Pure function of its inputs; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "triage/core/incident.h"
#include "triage/core/rules.h"

namespace triage::core::detail {

// One signature hit as the correlator kept it.
struct HitRecord {
  SignatureHit hit;
  std::string source;  // name as given
  std::string text;    // the line as a person sees it
  uint64_t event = 0;  // sequence number of the event it came from
  bool in_failure = false;  // part of the event that made the failure (or a fatal hit itself)
  std::string actor;        // the job's process its event came from (ActorOfProcess), or empty
  // Its event's time (ISO 8601), kept for a job's process only (an actor): the job's timeline.
  std::optional<std::string> time;
  // When the line was written at the latest known bound: its event's clock (seconds within the
  // year, comparable within one source only), else the last clock its source showed before it.
  std::optional<double> clock;
};

// An event that ended a process: a fatal hit or an uncaught traceback.
struct FailureRecord {
  std::string source;
  uint64_t line = 0;            // the line that shows it (the final exception for a traceback)
  std::string text;             // that line's display text
  std::string terminal;         // "Type: message" of the final exception, or the fatal line
  uint64_t event = 0;
  bool definitive = false;      // a fatal signature (not only a traceback)
  std::string stream;
  std::string actor;            // the job's process it came from (ActorOfProcess), or empty
  std::optional<std::string> time;  // its event's time (ISO 8601), when its lines have one
};

// Ranks the hypotheses of one incident and fills `incident.causes` (root causes only, in rank
// order, symptoms nested). Never leaves a failure unexplained: with no rule matching, the
// incident gets one `unclassified` cause named after the terminal failure's normalised message
// (of a job's processes, the one `incident.actors` names first).
void RankCauses(const RuleSet& rules, const std::vector<HitRecord>& hits,
                const std::vector<FailureRecord>& failures, Incident& incident);

// The causes (indices into rules.causes()) that a set of signatures points at: those whose
// requirements the set meets (one of `any`, all of `all`, none of `none`). What a failure or a
// window is about, for the correlator; the ranker also honours `within = "event"`.
std::vector<int> CausesPointedAt(const RuleSet& rules, const std::set<int>& signatures);

// True when cause `a` names cause `b`, or an id above it, in its `explains`.
bool CauseExplains(const RuleSet& rules, int a, int b);

}  // namespace triage::core::detail

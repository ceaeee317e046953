// The engine's view of verification. The core owns this interface; the verifiers library
// implements it (each verifier isolated in a child process with a deadline). The engine never
// knows how a check is done, only what it concluded.
#pragma once

#include <string>
#include <vector>

#include "triage/core/incident.h"

namespace triage::core {

class VerificationRunner {
 public:
  virtual ~VerificationRunner() = default;
  // Runs every request of every cause of `incident` (symptoms excluded) and appends the
  // answers to each cause's `verifications`, and sets `incident.verified_on` (unless no cause
  // has a check to run). Applicability comes first (DESIGN.md section 5): when this host is not
  // the one the incident describes (the host name, GPUs or paths the log names), a check is
  // `not_applicable` with both sides in its reason and is not run. Never throws; a failed check
  // is an `inconclusive` verdict with the reason. The versions of the packages that would decide
  // a known bug of a cause and that the log does not show (PackagesToLookUp) are looked up on
  // this host, where it is the log's, and added to `incident.versions` with `from` "host".
  virtual void VerifyIncident(Incident& incident) = 0;
};

// Feeds verdicts back into the ranking: a confirmed cause rises, a refuted one falls below every
// cause that is not refuted; inconclusive, skipped, not_reproduced and not_applicable verdicts
// move nothing. Re-numbers ranks. Safe to call on an incident with no verdicts. First the known
// bugs of its causes are judged again by its versions, those the host added included
// (ReviseKnownBugs).
void ApplyVerdicts(Incident& incident);

}  // namespace triage::core

// The incident model: what the engine concludes from the events, what reports show, what the
// store keeps and what verifiers confirm or refute. Plain values; no third-party types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace triage::core {

// A line that proves something: where it is and what it says (display text, valid UTF-8).
struct Evidence {
  std::string source;  // the path as given, or "-" for stdin
  uint64_t line = 0;   // 1-based
  std::string text;
};

enum class Verdict { kConfirmed, kRefuted, kInconclusive, kSkipped };
const char* VerdictName(Verdict v);  // "confirmed", "refuted", "inconclusive", "skipped"

// One verifier's answer for one cause on one host.
struct Verification {
  std::string verifier;  // "cuda.toolkits"
  Verdict verdict = Verdict::kInconclusive;
  std::string reason;      // why: "no driver", "NVRTC 12.8 < 12.9 required", ...
  std::string facts_json;  // a JSON object of what was measured ("{}" when nothing)
  std::string host;
  int64_t ms = 0;
};

// What a rule asks to verify, its arguments already filled from the captures.
struct VerifyRequest {
  std::string verifier;
  std::map<std::string, std::string> args;
};

// A cause explained by a root cause: shown folded under it, never as a root cause itself.
struct Symptom {
  std::string cause;
  std::string title;
  std::vector<Evidence> evidence;
};

// A ranked hypothesis about why the incident happened.
struct Cause {
  std::string cause;  // taxonomy id, possibly with a finer suffix
  int rank = 0;       // 1-based within the incident
  double score = 0;   // confidence in [0, 1], comparable across incidents
  std::string band;   // "likely" (>= 0.7), "possible" (>= 0.4), "weak"
  std::string title;
  std::string remedy;
  std::map<std::string, std::string> captures;
  std::vector<std::string> fingerprint_keys;  // captures that define "the same" cause
  bool independent = true;
  std::vector<Evidence> evidence;
  std::vector<Symptom> symptoms;
  std::vector<VerifyRequest> verify;  // requests from the rule, for the verifiers
  std::vector<Verification> verifications;
};

struct Incident {
  std::optional<int64_t> id;  // set once stored
  std::string service;
  std::string host;
  std::string source;  // path as given
  uint64_t first_line = 0;
  uint64_t last_line = 0;
  // The line of the incident's first failure (first_line may be an earlier warning that joined
  // it). Not part of the reports; lets a caller that splits one input tell whose incident it is.
  uint64_t failure_line = 0;
  std::optional<std::string> started;  // ISO 8601 from the log, when it has times
  std::optional<std::string> ended;
  std::vector<Cause> causes;  // root causes only, in rank order
  // The service plus the root causes with their defining captures; equal fingerprints are the
  // same incident recurring. Filled by the engine (see Fingerprint()).
  std::string fingerprint;
};

// Stable fingerprint of an incident: service + sorted root causes with their defining captures.
std::string Fingerprint(const Incident& incident);

// Band of a score: "likely", "possible" or "weak".
const char* ScoreBand(double score);

}  // namespace triage::core

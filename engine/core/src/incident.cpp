#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "triage/core/incident.h"
#include "triage/core/known_bugs.h"
#include "triage/core/verifier.h"

namespace triage::core {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kConfirmed:
      return "confirmed";
    case Verdict::kRefuted:
      return "refuted";
    case Verdict::kSkipped:
      return "skipped";
    case Verdict::kNotReproduced:
      return "not_reproduced";
    case Verdict::kNotApplicable:
      return "not_applicable";
    case Verdict::kInconclusive:
      break;
  }
  return "inconclusive";
}

std::optional<Verdict> VerdictFromName(std::string_view name) {
  for (Verdict v : {Verdict::kConfirmed, Verdict::kRefuted, Verdict::kInconclusive,
                    Verdict::kSkipped, Verdict::kNotReproduced, Verdict::kNotApplicable})
    if (name == VerdictName(v)) return v;
  return std::nullopt;
}

const char* ScoreBand(double score) {
  if (score >= 0.7) return "likely";
  if (score >= 0.4) return "possible";
  return "weak";
}

void ShiftLines(Incident& incident, uint64_t lines) {
  if (lines == 0) return;
  incident.first_line += lines;
  incident.last_line += lines;
  incident.failure_line += lines;
  for (auto& cause : incident.causes) {
    for (auto& ev : cause.evidence) ev.line += lines;
    for (auto& sym : cause.symptoms)
      for (auto& ev : sym.evidence) ev.line += lines;
  }
  for (auto& v : incident.versions)
    if (v.from == "log" && v.line) v.line += lines;
}

std::string Fingerprint(const Incident& incident) {
  // service|cause{k=v,...}|cause{...} with causes sorted, so the order the ranker chose (which
  // verdicts may change) does not make the same failure look new.
  std::vector<std::string> parts;
  for (const auto& c : incident.causes) {
    std::string p = c.cause + "{";
    bool first = true;
    for (const auto& key : c.fingerprint_keys) {
      auto it = c.captures.find(key);
      if (it == c.captures.end()) continue;
      if (!first) p += ",";
      p += key + "=" + it->second;
      first = false;
    }
    p += "}";
    parts.push_back(std::move(p));
  }
  std::sort(parts.begin(), parts.end());
  parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
  std::string fp = incident.service;
  for (const auto& p : parts) fp += "|" + p;
  return fp;
}

namespace {

// 0: a check confirmed it, 2: refuted (and none confirmed), 1: neither.
int VerdictState(const Cause& c) {
  bool confirmed = false, refuted = false;
  for (const auto& v : c.verifications) {
    confirmed |= v.verdict == Verdict::kConfirmed;
    refuted |= v.verdict == Verdict::kRefuted;
  }
  if (refuted && !confirmed) return 2;
  return confirmed ? 0 : 1;
}

}  // namespace

void PutEarlierFailureFirst(Incident& incident) {
  auto& causes = incident.causes;
  if (causes.size() < 2 || !causes[0].independent || causes[0].evidence.empty()) return;
  auto first_line = [](const Cause& c, const std::string& source) {
    uint64_t line = UINT64_MAX;
    for (const auto& e : c.evidence)
      if (e.source == source) line = std::min(line, e.line);
    return line;
  };
  const std::string& source = causes[0].evidence.front().source;
  size_t pick = 0;
  uint64_t earliest = first_line(causes[0], source);
  for (size_t j = 1; j < causes.size(); ++j) {
    const Cause& c = causes[j];
    if (!c.independent || causes[0].score - c.score > kNearTie ||
        VerdictState(c) > VerdictState(causes[0]))
      continue;
    const uint64_t line = first_line(c, source);
    if (line < earliest) pick = j, earliest = line;
  }
  if (pick == 0) return;
  std::rotate(causes.begin(), causes.begin() + ptrdiff_t(pick), causes.begin() + ptrdiff_t(pick) + 1);
  for (size_t i = 0; i < causes.size(); ++i) causes[i].rank = int(i) + 1;
}

void ApplyVerdicts(Incident& incident) {
  ReviseKnownBugs(incident);
  // A confirmed verdict raises the score towards 1, a refuted one sends the cause below every
  // cause that no verifier refuted. Every other verdict (inconclusive, skipped, not_reproduced,
  // not_applicable) leaves it where it was: a condition that is gone now, or a host that is not
  // the log's, says nothing against what the log shows.
  for (auto& c : incident.causes) {
    int s = VerdictState(c);
    if (s == 0) c.score = std::min(1.0, c.score + (1.0 - c.score) * 0.5);
    if (s == 2) c.score = c.score * 0.3;
    c.band = ScoreBand(c.score);
  }
  std::stable_sort(incident.causes.begin(), incident.causes.end(),
                   [&](const Cause& a, const Cause& b) {
                     bool ra = VerdictState(a) == 2, rb = VerdictState(b) == 2;
                     if (ra != rb) return rb;
                     if (a.score != b.score) return a.score > b.score;
                     return VerdictState(a) < VerdictState(b);
                   });
  for (size_t i = 0; i < incident.causes.size(); ++i) incident.causes[i].rank = int(i) + 1;
  PutEarlierFailureFirst(incident);
}

}  // namespace triage::core

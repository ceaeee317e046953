// The processes of one job in one incident, and the incidents of one job's logs read apart
// folded into one (DESIGN.md section 5b; docs/correlation.md, "Jobs").
#include "job.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "times.h"
#include "triage/core/incident.h"

namespace triage::core {

namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsLetter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// A word of letters (or '_') followed by a number: "rank3", "TP3", "worker0".
bool RoleAndNumber(std::string_view w) {
  size_t d = 0;
  while (d < w.size() && (IsLetter(w[d]) || w[d] == '_')) ++d;
  if (d == 0 || d == w.size()) return false;
  return std::all_of(w.begin() + std::ptrdiff_t(d), w.end(), IsDigit);
}

// The printable ASCII of `s`, each other byte as '?', at most 80 bytes: a name taken from a log
// is shown on a terminal and must not carry control sequences there.
std::string Printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 80)) {
    const auto u = static_cast<unsigned char>(c);
    out += u >= 0x20 && u < 0x7f ? c : '?';
  }
  return out;
}

}  // namespace

std::string ActorOfProcess(std::string_view p) {
  while (!p.empty() && p.front() == ' ') p.remove_prefix(1);
  while (!p.empty() && p.back() == ' ') p.remove_suffix(1);
  if (p.empty()) return "";
  for (std::string_view role : {"rank", "default"})
    if (p.size() > role.size() && p.substr(0, role.size()) == role &&
        std::all_of(p.begin() + std::ptrdiff_t(role.size()), p.end(), IsDigit))
      return "rank " + std::string(p.substr(role.size()));
  if (RoleAndNumber(p)) return Printable(p);
  // Several of them: SGLang's "DP0 TP3", "TP0 EP0".
  bool roles = true;
  for (size_t i = 0; i < p.size() && roles;) {
    size_t e = p.find(' ', i);
    if (e == std::string_view::npos) e = p.size();
    roles = RoleAndNumber(p.substr(i, e - i));
    i = e + 1;
  }
  if (roles) return Printable(p);
  // A worker that names its pid or rank: "VllmWorker rank=1 pid=77", "RayWorkerWrapper pid=9".
  if (p.find("pid=") != std::string_view::npos || p.find("rank=") != std::string_view::npos)
    return Printable(p);
  return "";
}

namespace detail {

void ActorList::Add(const std::string& name) {
  if (name.empty() || std::find(names.begin(), names.end(), name) != names.end()) return;
  if (names.size() >= Incident::kMaxActors) {
    ++more;
    return;
  }
  names.push_back(name);
}

void ActorList::PutFirst(const std::string& name) {
  if (name.empty()) return;
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    names.insert(names.begin(), name);
    if (names.size() > Incident::kMaxActors) {
      names.pop_back();
      ++more;
    }
  } else {
    std::rotate(names.begin(), it, it + 1);
  }
}

bool SameKindOfActor(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  auto kind = [](const std::string& s) {
    std::string out;
    for (char c : s)
      if (!IsDigit(c)) out += c;
    return out;
  };
  return kind(a) == kind(b);
}

std::string FirstObservedFailure(const ingest::Event& event) {
  bool in_block = false;
  for (const auto& line : event.lines) {
    std::string_view m = line.message;
    if (m.find("Root Cause (first observed failure)") != std::string_view::npos) {
      in_block = true;
      continue;
    }
    if (!in_block) continue;
    // "  rank      : 1 (local_rank: 1)"
    size_t k = m.find_first_not_of(' ');
    if (k == std::string_view::npos || m.compare(k, 4, "rank") != 0) continue;
    k = m.find_first_not_of(' ', k + 4);
    if (k == std::string_view::npos || m[k] != ':') continue;
    k = m.find_first_not_of(' ', k + 1);
    size_t e = k;
    while (e < m.size() && IsDigit(m[e])) ++e;
    if (k == std::string_view::npos || e == k || e - k > 9) return "";
    return "rank " + std::string(m.substr(k, e - k));
  }
  return "";
}

}  // namespace detail

namespace {

// The job of a log's service: the service with a rank, node or worker ordinal taken off its
// end ("train-rank3" -> "train", "node1" -> "", "worker_2" -> ""), `numbered` telling whether
// there was one. Any other name is its own job: a service named by its port ("vllm-8000",
// "vllm-8001") is two services, and so are two replicas "api-0" and "api-1".
struct Job {
  std::string name;
  bool numbered = false;
};
Job JobOf(const std::string& service) {
  size_t e = service.size();
  while (e > 0 && IsDigit(service[e - 1])) --e;
  if (e == service.size()) return {service, false};
  auto sep = [](char c) { return c == '-' || c == '_' || c == '.'; };
  if (e > 0 && sep(service[e - 1])) --e;
  for (std::string_view word : {"rank", "node", "worker"}) {
    if (e < word.size() || service.compare(e - word.size(), word.size(), word) != 0) continue;
    size_t b = e - word.size();
    if (b > 0 && sep(service[b - 1])) --b;
    return {service.substr(0, b), true};
  }
  return {service, false};
}

// What an incident contributes as actors when it is folded into another: its own, else its pod,
// else its file's name.
std::vector<std::string> ActorsOf(const Incident& inc) {
  if (!inc.actors.empty()) return inc.actors;
  if (!inc.pod.empty()) return {Printable(inc.pod.pod)};
  std::string name = inc.source;
  if (auto slash = name.find_last_of('/'); slash != std::string::npos) name.erase(0, slash + 1);
  return {Printable(name)};
}

}  // namespace

void MergeJobIncidents(std::vector<Incident>& incidents, double window_seconds) {
  struct Span {
    double first, last;
  };
  std::vector<std::optional<Span>> spans(incidents.size());
  std::vector<std::string> keys(incidents.size());
  std::vector<bool> numbered(incidents.size(), false);
  for (size_t i = 0; i < incidents.size(); ++i) {
    const Incident& inc = incidents[i];
    auto a = inc.started ? detail::DatedSeconds(*inc.started) : std::nullopt;
    auto b = inc.ended ? detail::DatedSeconds(*inc.ended) : std::nullopt;
    if (a && b) spans[i] = Span{std::min(*a, *b), std::max(*a, *b)};
    // The root causes with their defining captures, as the fingerprint has them after the
    // service's name.
    const Job job = JobOf(inc.service);
    numbered[i] = job.numbered;
    keys[i] = job.name + "|" + inc.fingerprint.substr(std::min(inc.service.size(), inc.fingerprint.size()));
  }
  // Without times, the k-th incident of a cause in one rank's log goes with the k-th of it in
  // another's (logs named for no rank, node or worker are not paired without times: a log and
  // its rotated copy, two replicas).
  std::vector<size_t> ordinal(incidents.size(), 0);
  {
    std::map<std::pair<std::string, std::string>, size_t> seen;
    for (size_t i = 0; i < incidents.size(); ++i)
      ordinal[i] = seen[{keys[i], incidents[i].source}]++;
  }
  auto together = [&](size_t i, size_t j) {
    if (!spans[i] || !spans[j])
      return !spans[i] && !spans[j] && numbered[i] && numbered[j] && ordinal[i] == ordinal[j];
    return spans[j]->first <= spans[i]->last + window_seconds &&
           spans[i]->first <= spans[j]->last + window_seconds;
  };
  std::vector<bool> gone(incidents.size(), false);
  for (size_t i = 0; i < incidents.size(); ++i) {
    if (gone[i]) continue;
    std::vector<std::string> sources{incidents[i].source};
    for (size_t j = i + 1; j < incidents.size(); ++j) {
      if (gone[j] || keys[j] != keys[i] || !together(i, j)) continue;
      if (std::find(sources.begin(), sources.end(), incidents[j].source) != sources.end()) continue;
      // The one that failed first is the incident shown; the other's processes follow its own.
      Incident& base = incidents[i];
      Incident& other = incidents[j];
      const bool other_first = spans[i] && spans[j]->first < spans[i]->first;
      detail::ActorList actors;
      for (const Incident* inc : {other_first ? &other : &base, other_first ? &base : &other}) {
        for (const auto& name : ActorsOf(*inc)) actors.Add(name);
        actors.more += inc->more_actors;
      }
      std::optional<std::string> started = other_first ? other.started : base.started;
      std::optional<std::string> ended =
          spans[i] && spans[j]->last > spans[i]->last ? other.ended : base.ended;
      if (other_first) std::swap(base, other);
      base.actors = std::move(actors.names);
      base.more_actors = actors.more;
      base.started = std::move(started);
      base.ended = std::move(ended);
      if (spans[i])
        spans[i] = Span{std::min(spans[i]->first, spans[j]->first),
                        std::max(spans[i]->last, spans[j]->last)};
      sources.push_back(other.source);
      gone[j] = true;
    }
  }
  detail::DropFolded(incidents, gone);
}

void detail::DropFolded(std::vector<Incident>& incidents, const std::vector<bool>& gone) {
  size_t kept = 0;
  for (size_t i = 0; i < incidents.size(); ++i)
    if (!gone[i]) {
      if (kept != i) incidents[kept] = std::move(incidents[i]);
      ++kept;
    }
  incidents.resize(kept);
}

}  // namespace triage::core

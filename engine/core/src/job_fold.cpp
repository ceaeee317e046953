// The logs of one job's processes read apart (a torchrun log folder, files named by rank) folded
// into one incident per failure of the job, its processes' timeline, and the rank a collective
// waited for (DESIGN.md section 5b; TAXONOMY.md, "Jobs"; docs/correlation.md, "Jobs").
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "job.h"
#include "times.h"
#include "triage/core/analyzer.h"
#include "triage/core/incident.h"
#include "triage/core/job_dumps.h"
#include "triage/core/rules.h"
#include "triage/ingest/pipeline.h"

namespace triage::core {

namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

// The job an input belongs to and the rank it is the log of, from its path: torchrun's
// `--log-dir` layout `<run id>/attempt_<n>/<rank>/<stdout|stderr>.log` (the job is the attempt),
// or a file named for its rank ("train-rank3.log": the job is "train" in that folder).
struct Member {
  std::string job;
  std::string actor;
};
std::optional<Member> MemberOfPath(const std::string& path) {
  const std::filesystem::path p(path);
  const std::filesystem::path rank_dir = p.parent_path();
  const std::string rank = rank_dir.filename().string();
  const std::string attempt = rank_dir.parent_path().filename().string();
  if (AllDigits(rank) && attempt.rfind("attempt_", 0) == 0 && AllDigits(attempt.substr(8)))
    return Member{rank_dir.parent_path().string(), "rank " + std::to_string(std::stoul(rank))};
  const std::string service = ServiceFromSourceName(path);
  size_t e = service.size();
  while (e > 0 && std::isdigit(static_cast<unsigned char>(service[e - 1]))) --e;
  if (e == service.size() || e < 4 || service.size() - e > 9) return std::nullopt;
  size_t w = e;
  if (service.compare(w - 4, 4, "rank") != 0) return std::nullopt;
  w -= 4;
  while (w > 0 && (service[w - 1] == '-' || service[w - 1] == '_' || service[w - 1] == '.')) --w;
  return Member{p.parent_path().string() + "/" + service.substr(0, w),
                "rank " + std::to_string(std::stoul(service.substr(e)))};
}

// How far in its process group's collectives a process's lines show it (PyTorch's
// ProcessGroupNCCL.cpp): waiting in "WorkNCCL(SeqNum=4, OpType=ALLREDUCE, ...", the description of
// the work its watchdog timed out in, or "last enqueued work: 3" / "Last enqueued NCCL work: 3",
// the last collective it entered; seq 0 when none. `op` only where the line names it.
struct Collective {
  uint64_t seq = 0;
  std::string op;
};

// The number after `key` in `text`, 0 when none.
uint64_t NumberAfter(std::string_view text, std::string_view key, size_t& at) {
  at = text.find(key);
  if (at == std::string_view::npos) return 0;
  size_t d = at + key.size(), e = d;
  while (e < text.size() && e - d < 18 && std::isdigit(static_cast<unsigned char>(text[e]))) ++e;
  at = e;
  return e == d ? 0 : std::stoull(std::string(text.substr(d, e - d)));
}

Collective CollectiveOf(std::string_view text) {
  Collective c;
  size_t e = 0;
  if (uint64_t seq = NumberAfter(text, "WorkNCCL(SeqNum=", e)) {
    c.seq = seq;
    const size_t o = text.find("OpType=", e);
    if (o != std::string_view::npos && o < e + 40) {
      size_t b = o + 7, f = b;
      while (f < text.size() && f - b < 40 &&
             (std::isalnum(static_cast<unsigned char>(text[f])) || text[f] == '_'))
        ++f;
      c.op = std::string(text.substr(b, f - b));
    }
    return c;
  }
  for (std::string_view key : {"ast enqueued NCCL work: ", "ast enqueued work: "})
    if (uint64_t seq = NumberAfter(text, key, e)) return Collective{seq, ""};
  return c;
}

// The furthest collective an incident's evidence shows a process in (a named one, of equals).
Collective WaitedCollective(const Incident& inc) {
  Collective best;
  auto look = [&](const std::vector<Evidence>& ev) {
    for (const auto& e : ev) {
      const Collective c = CollectiveOf(e.text);
      if (c.seq > best.seq || (c.seq == best.seq && best.op.empty() && !c.op.empty())) best = c;
    }
  };
  for (const auto& c : inc.causes) {
    look(c.evidence);
    for (const auto& s : c.symptoms) look(s.evidence);
  }
  return best;
}

// What a process's lines tell of its collectives: "waited in ALLREDUCE SeqNum=4", "last
// entered SeqNum=3"; empty when nothing.
std::string CollectiveDetail(const Collective& c) {
  if (!c.seq) return "";
  return c.op.empty() ? "last entered SeqNum=" + std::to_string(c.seq)
                      : "waited in " + c.op + " SeqNum=" + std::to_string(c.seq);
}

std::optional<double> StartOf(const Incident& inc) {
  return inc.started ? detail::DatedSeconds(*inc.started) : std::nullopt;
}

// A member incident of a job, as the fold sees it.
struct Part {
  size_t index;  // into the incidents
  std::string actor;
  bool victim;  // only collective failures, which follow a peer's (TAXONOMY.md, "Jobs")
  std::optional<double> start;
  uint64_t seq = 0;  // the collective it waited in (WaitedCollective), 0 when none is named
};

bool OnlyCollective(const RuleSet& rules, const Incident& inc) {
  return !inc.causes.empty() && std::all_of(inc.causes.begin(), inc.causes.end(), [&](const Cause& c) {
    return detail::IsCollectiveFailure(rules, c.cause);
  });
}

// `victim`'s causes and symptoms as symptoms of `root`'s first cause.
void FoldUnder(Incident& root, const Incident& victim) {
  if (root.causes.empty()) return;
  auto& into = root.causes.front().symptoms;
  for (const auto& c : victim.causes) {
    // The same cause told again (a process's error file beside its log) adds nothing.
    if (std::any_of(root.causes.begin(), root.causes.end(),
                    [&](const Cause& r) { return r.cause == c.cause; }))
      continue;
    into.push_back(Symptom{c.cause, c.title, c.evidence});
    for (const auto& s : c.symptoms) into.push_back(s);
  }
}

void Widen(Incident& root, const Incident& other) {
  // Times as seconds, NaN where unknown: a comparison with an unknown one is false.
  auto seconds = [](const std::optional<std::string>& t) {
    const auto s = t ? detail::DatedSeconds(*t) : std::nullopt;
    return s.value_or(std::numeric_limits<double>::quiet_NaN());
  };
  auto widen = [&](std::optional<std::string>& have, const std::optional<std::string>& more,
                   bool earlier) {
    if (!more) return;
    const double a = seconds(have), b = seconds(more);
    if (!have || (earlier ? b < a : b > a)) have = more;
  };
  widen(root.started, other.started, true);
  widen(root.ended, other.ended, false);
}

// A rank of the job whose logs show no failure, and the last line it wrote (its stdout's, where
// it has one: what the program itself printed last).
struct Silent {
  std::string actor;
  const JobInput* last = nullptr;
};

// A rank that went away without an error of its own while its peers were in a collective with
// it: the first cause, in its own last words (masked, as a failure no rule covers), the peers'
// collective failure its symptom (TAXONOMY.md, "Jobs": the first failing rank's cause).
void PutExitedFirst(Incident& root, const Silent& s) {
  Cause c;
  c.cause = "unclassified";
  c.score = 0.3;
  c.band = ScoreBand(c.score);
  const std::string words = s.last ? s.last->last_line : std::string();
  c.title = words.empty() ? s.actor + " exited without an error in its log" : NormalizeMessage(words);
  c.remedy =
      "This process ended without an error of its own while its peers still waited for it in a "
      "collective: read its last lines (a check of the program's own that made it exit, a kill "
      "by the kernel's OOM killer or the scheduler, whose lines are in the host's log).";
  c.captures["message"] = c.title;
  c.fingerprint_keys = {"message"};
  if (s.last && !words.empty()) c.evidence.push_back({s.last->path, s.last->last_line_number, words});
  for (auto& old : root.causes) {
    c.symptoms.push_back(Symptom{old.cause, old.title, old.evidence});
    for (auto& sym : old.symptoms) c.symptoms.push_back(std::move(sym));
  }
  root.causes.clear();
  root.causes.push_back(std::move(c));
  root.causes.front().rank = 1;
}

// The rank the others timed out waiting for, named in the first cause: its title and the
// captures missed_collective, missed_seq.
void NameMissedCollective(Cause& c, const std::string& actor, const Collective& waited) {
  const std::string op = waited.op.empty() ? std::string("the collective") : waited.op;
  c.captures["missed_collective"] = waited.op;
  c.captures["missed_seq"] = std::to_string(waited.seq);
  c.title = actor + " never joined " + op + " (SeqNum=" + std::to_string(waited.seq) +
            ") that the other ranks timed out in";
}

// The rank of a job that failed first among `parts` (all of one job and one failure) and those
// that followed, folded into the incident of the first; `silent` are the job's ranks whose logs
// show no failure. Returns the index of the incident kept.
size_t FoldOne(std::vector<Incident>& incidents, std::vector<Part> parts,
               const std::vector<Silent>& silent) {
  // A failure of its own first; of collective failures, the one in an earlier collective (it is
  // behind the others); then by time.
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    if (a.victim != b.victim) return !a.victim;
    if (a.victim && a.seq && b.seq && a.seq != b.seq) return a.seq < b.seq;
    if (a.start && b.start) return *a.start < *b.start;
    return a.start.has_value() > b.start.has_value();
  });
  Incident& root = incidents[parts.front().index];
  // No process failed for a reason of its own. Where they timed out in a collective, the rank
  // they waited for is behind: a silent one, else the one in an earlier collective; where they
  // saw a rank go away, a silent one exited.
  const bool hang = parts.front().victim;
  const bool timed_out = hang && std::any_of(parts.begin(), parts.end(), [&](const Part& p) {
    const auto& causes = incidents[p.index].causes;
    return std::any_of(causes.begin(), causes.end(),
                       [](const Cause& c) { return c.cause.find(".timeout") != std::string::npos; });
  });
  Collective waited;  // the furthest collective a process was in: the one the others waited in
  for (const auto& p : parts) {
    const Collective c = WaitedCollective(incidents[p.index]);
    if (c.seq > waited.seq || (c.seq == waited.seq && waited.op.empty())) waited = c;
  }
  std::string lagging;
  if (timed_out && !silent.empty()) lagging = silent.front().actor;
  else if (timed_out && parts.front().seq && parts.front().seq < waited.seq) lagging = parts.front().actor;
  const std::string missed =
      waited.seq ? "missed " + (waited.op.empty() ? std::string("the collective") : waited.op) +
                       " SeqNum=" + std::to_string(waited.seq)
                 : std::string();
  detail::ActorList actors;
  std::vector<RankState> ranks;
  auto add_rank = [&](const std::string& actor, const std::string& state, const Incident* inc,
                      const std::string& what) {
    if (ranks.size() >= Incident::kMaxActors ||
        std::any_of(ranks.begin(), ranks.end(), [&](const RankState& r) { return r.actor == actor; }))
      return;
    RankState r{actor, state, std::nullopt, std::nullopt, "", what, ""};
    if (inc) {
      r.first_failure = inc->started;
      if (!inc->causes.empty()) r.cause = inc->causes.front().cause;
    }
    ranks.push_back(std::move(r));
  };
  if (hang)
    for (const auto& s : silent) {
      actors.Add(s.actor);
      add_rank(s.actor, timed_out ? "hung" : "exited", nullptr, timed_out ? missed : std::string());
    }
  for (size_t k = 0; k < parts.size(); ++k) {
    const Incident& inc = incidents[parts[k].index];
    for (const auto& a : inc.actors.empty() ? std::vector<std::string>{parts[k].actor} : inc.actors)
      actors.Add(a);
    actors.more += inc.more_actors;
    if (parts[k].actor == lagging) {
      add_rank(lagging, "hung", &inc, missed);
    } else if (!inc.ranks.empty()) {
      for (const auto& r : inc.ranks)
        if (ranks.size() < Incident::kMaxActors &&
            std::none_of(ranks.begin(), ranks.end(), [&](const RankState& x) { return x.actor == r.actor; }))
          ranks.push_back(r);
    } else {
      add_rank(parts[k].actor, k == 0 && !parts[k].victim ? "failed" : "victim", &inc,
               CollectiveDetail(WaitedCollective(inc)));
    }
  }
  if (!hang)
    for (const auto& s : silent) add_rank(s.actor, "exited", nullptr, "");
  for (size_t k = 1; k < parts.size(); ++k) {
    FoldUnder(root, incidents[parts[k].index]);
    Widen(root, incidents[parts[k].index]);
  }
  if (!lagging.empty() && !root.causes.empty() && waited.seq) {
    NameMissedCollective(root.causes.front(), lagging, waited);
  } else if (hang && !timed_out && !silent.empty()) {
    PutExitedFirst(root, silent.front());
    ranks.front().cause = "unclassified";
  }
  root.fingerprint = Fingerprint(root);
  root.actors = std::move(actors.names);
  root.more_actors = actors.more;
  root.ranks = std::move(ranks);
  return parts.front().index;
}


// A job's process whose incident is the only one of its job in what was read (one file of the
// job failed in this batch): its one entry of the timeline, so that an incident of the job that
// arrives later joins it knowing how this process took part (JoinJobIncident).
void NameLoneRank(Incident& inc, const std::string& actor, bool victim) {
  if (!inc.ranks.empty() || actor.empty()) return;
  RankState r;
  r.actor = actor;
  r.state = victim ? "victim" : "failed";
  r.first_failure = inc.started;
  if (!inc.causes.empty()) r.cause = inc.causes.front().cause;
  r.detail = victim ? CollectiveDetail(WaitedCollective(inc)) : std::string();
  inc.ranks.push_back(std::move(r));
  FillRankOffsets(inc);
}

// How much a rank's state tells of its part in the failure: its own failure, then a victim's
// error, then what a batch that did not hold the process's failure could only guess.
int StateWeight(const std::string& state) {
  if (state == "failed") return 0;
  if (state == "victim") return 1;
  if (state == "hung") return 2;
  return state == "exited" ? 3 : 4;
}

bool FailedOnItsOwn(const Incident& inc) {
  return !inc.ranks.empty() && inc.ranks.front().state == "failed";
}

std::optional<double> FirstFailureOf(const Incident& inc) {
  if (!inc.ranks.empty() && inc.ranks.front().first_failure)
    if (auto t = detail::DatedSeconds(*inc.ranks.front().first_failure)) return t;
  return StartOf(inc);
}

// The ranks of two incidents of one job as one list, each process once (JoinJobIncident).
std::vector<RankState> JoinRanks(const Incident& lead, const Incident& follow) {
  std::vector<RankState> ranks = lead.ranks;
  for (const auto& r : follow.ranks) {
    auto it = std::find_if(ranks.begin(), ranks.end(), [&](const RankState& x) { return x.actor == r.actor; });
    if (it == ranks.end()) {
      if (ranks.size() < Incident::kMaxActors) ranks.push_back(r);
    } else if (StateWeight(r.state) < StateWeight(it->state)) {
      *it = r;
    }
  }
  if (ranks.empty()) return ranks;
  // The lead's first process first, the others by the time they failed (unknown times last).
  auto seconds = [](const RankState& r) {
    return r.first_failure ? detail::DatedSeconds(*r.first_failure) : std::nullopt;
  };
  std::stable_sort(ranks.begin() + 1, ranks.end(), [&](const RankState& a, const RankState& b) {
    const auto x = seconds(a), y = seconds(b);
    if (x && y) return *x < *y;
    return x.has_value() > y.has_value();
  });
  return ranks;
}

// In one log of a job's processes where every one failed only in a collective and a watchdog
// timed out (a hang in torchrun's combined log: the rank that fell behind leaves signals only),
// the rank the others waited for, from what each one's lines tell of its collectives (PyTorch's
// ProcessGroupNCCL.cpp): the ranks that timed out name the work they waited in
// ("WorkNCCL(SeqNum=4, OpType=ALLREDUCE, ..."), and the one behind says it never entered it
// ("Last enqueued NCCL work: 3", in the dump request its watchdog got from the others). The rank
// furthest behind, alone below the collective the others waited in, goes first, `hung`, the
// collective it missed named in the first cause (NameMissedCollective). `from` is the first of
// the incident's ranks that FillRanks added.
void NameLaggingRank(Incident& incident, const std::vector<detail::HitRecord>& hits, size_t from) {
  if (incident.causes.empty() || incident.causes.front().cause.find(".timeout") == std::string::npos) return;
  if (std::any_of(incident.ranks.begin() + long(from), incident.ranks.end(),
                  [](const RankState& r) { return r.state != "victim"; }))
    return;
  Collective waited;
  std::vector<uint64_t> seq(incident.ranks.size(), 0);
  for (size_t k = from; k < incident.ranks.size(); ++k) {
    for (const auto& h : hits) {
      if (h.actor != incident.ranks[k].actor) continue;
      const Collective c = CollectiveOf(h.text);
      seq[k] = std::max(seq[k], c.seq);
      if (c.seq > waited.seq || (c.seq == waited.seq && waited.op.empty() && !c.op.empty())) waited = c;
    }
  }
  size_t behind = incident.ranks.size();
  for (size_t k = from; k < incident.ranks.size(); ++k) {
    if (!seq[k] || seq[k] >= waited.seq) continue;
    if (behind != incident.ranks.size() && seq[behind] == seq[k]) return;  // two as far behind
    if (behind == incident.ranks.size() || seq[k] < seq[behind]) behind = k;
  }
  if (behind == incident.ranks.size()) return;
  RankState lagging = incident.ranks[behind];
  lagging.state = "hung";
  lagging.detail = "missed " + (waited.op.empty() ? std::string("the collective") : waited.op) +
                   " SeqNum=" + std::to_string(waited.seq);
  incident.ranks.erase(incident.ranks.begin() + long(behind));
  incident.ranks.insert(incident.ranks.begin() + long(from), lagging);
  auto& actors = incident.actors;
  actors.erase(std::remove(actors.begin(), actors.end(), lagging.actor), actors.end());
  actors.insert(actors.begin(), lagging.actor);
  if (actors.size() > Incident::kMaxActors) {
    actors.pop_back();
    ++incident.more_actors;
  }
  NameMissedCollective(incident.causes.front(), lagging.actor, waited);
}

}  // namespace

namespace detail {

bool IsCollectiveFailure(const RuleSet& rules, std::string_view cause_id) {
  return rules.TaxonomyIdOf(cause_id) == "nccl.failure";
}

void FillRanks(Incident& incident, const std::vector<FailureRecord>& failures,
               const std::vector<HitRecord>& hits, const RuleSet& rules) {
  if (incident.actors.empty()) return;
  // The processes of its hits that are not among its actors, in the order their lines came.
  std::vector<const HitRecord*> peers;
  for (const auto& h : hits)
    if (!h.actor.empty() &&
        std::find(incident.actors.begin(), incident.actors.end(), h.actor) == incident.actors.end() &&
        std::none_of(peers.begin(), peers.end(), [&](const HitRecord* p) { return p->actor == h.actor; }))
      peers.push_back(&h);
  if (incident.actors.size() + peers.size() < 2) return;
  const size_t before = incident.ranks.size();
  // The cause (or symptom) whose evidence lies nearest a line, within its event.
  constexpr uint64_t kNear = 60;
  auto cause_at = [&](const std::string& source, uint64_t line) {
    std::string best;
    uint64_t best_d = kNear + 1;
    auto look = [&](const std::string& cause, const std::vector<Evidence>& ev) {
      for (const auto& e : ev) {
        if (e.source != source) continue;
        const uint64_t d = e.line > line ? e.line - line : line - e.line;
        if (d < best_d) best_d = d, best = cause;
      }
    };
    for (const auto& c : incident.causes) {
      look(c.cause, c.evidence);
      for (const auto& s : c.symptoms) look(s.cause, s.evidence);
    }
    return best;
  };
  for (const auto& actor : incident.actors) {
    auto f = std::find_if(failures.begin(), failures.end(),
                          [&](const FailureRecord& x) { return x.actor == actor; });
    RankState r;
    r.actor = actor;
    if (f != failures.end()) {
      r.first_failure = f->time;
      r.cause = cause_at(f->source, f->line);
      r.detail = CollectiveDetail(CollectiveOf(f->text));
    }
    r.state = !r.cause.empty() && IsCollectiveFailure(rules, r.cause) ? "victim" : "failed";
    if (&actor != &incident.actors.front() && r.cause.empty()) r.state = "victim";
    incident.ranks.push_back(std::move(r));
  }
  for (const HitRecord* h : peers) {
    if (incident.ranks.size() >= Incident::kMaxActors) break;
    RankState r;
    r.actor = h->actor;
    r.state = "victim";
    r.first_failure = h->time;
    r.cause = cause_at(h->source, h->hit.line);
    // A peer that only warned (a signal of the same cause) did not fail: not in the timeline.
    if (r.cause.empty() || !IsCollectiveFailure(rules, r.cause)) continue;
    Collective c;
    for (const auto& x : hits)
      if (x.actor == h->actor)
        if (const Collective y = CollectiveOf(x.text); y.seq > c.seq) c = y;
    r.detail = CollectiveDetail(c);
    incident.ranks.push_back(std::move(r));
  }
  // One process alone is no timeline.
  if (incident.ranks.size() - before < 2) {
    incident.ranks.resize(before);
    return;
  }
  NameLaggingRank(incident, hits, before);
  FillRankOffsets(incident);
}

}  // namespace detail

void FillRankOffsets(Incident& incident) {
  std::optional<double> first;
  for (const auto& r : incident.ranks)
    if (auto t = r.first_failure ? detail::DatedSeconds(*r.first_failure) : std::nullopt)
      first = first ? std::min(*first, *t) : *t;
  for (auto& r : incident.ranks) {
    r.offset_seconds.reset();
    if (auto t = r.first_failure ? detail::DatedSeconds(*r.first_failure) : std::nullopt; t && first)
      r.offset_seconds = *t - *first;
  }
}

std::string JobKeyOf(const std::string& path, const std::string& host) {
  const std::string here = "host " + host + ": ";
  if (auto m = MemberOfPath(path)) {
    const std::filesystem::path attempt_dir(m->job);
    const std::string attempt = attempt_dir.filename().string();
    if (attempt.rfind("attempt_", 0) != 0 || !AllDigits(attempt.substr(8))) return here + m->job;
    // torchrun makes `<run id>_<8 random characters>` on each host (a temporary folder).
    std::string run = attempt_dir.parent_path().filename().string();
    if (run.size() > 9 && run[run.size() - 9] == '_') run.resize(run.size() - 9);
    else run.clear();
    if (run.empty() || run == "none") return here + m->job;
    return "torchrun " + run + " " + attempt;
  }
  auto job = ingest::JobPathOf(path);
  if (!job) return "";
  if (auto pod = ingest::PodLogPathOf(path)) return "k8s " + pod->pod_namespace + "/" + job->job;
  if (job->job.rfind("slurm-", 0) == 0) return "slurm " + job->job.substr(6);
  return "";
}

void JoinJobIncident(Incident& into, Incident part) {
  // Each rank named with its host, where the job's incident holds more than one host's.
  const bool hosts = part.host != into.host ||
                     std::any_of(into.ranks.begin(), into.ranks.end(), [](const RankState& r) { return !r.host.empty(); });
  if (hosts)
    for (Incident* inc : {&into, &part})
      for (auto& r : inc->ranks)
        if (r.host.empty()) r.host = inc->host;
  bool part_leads;
  if (FailedOnItsOwn(into) != FailedOnItsOwn(part)) {
    part_leads = FailedOnItsOwn(part);
  } else {
    const auto a = FirstFailureOf(into), b = FirstFailureOf(part);
    part_leads = a && b ? *b < *a : (!a && b);
  }
  const std::string fingerprint = into.fingerprint;
  const std::optional<int64_t> id = into.id;
  Incident lead = part_leads ? std::move(part) : std::move(into);
  Incident follow = part_leads ? std::move(into) : std::move(part);
  // A batch that held only the victims' failures put first the process they waited for, as hung
  // or exited, in words of its last line; the lead holds that process's own failure.
  const bool guessed =
      !follow.ranks.empty() && StateWeight(follow.ranks.front().state) >= 2 &&
      std::any_of(lead.ranks.begin(), lead.ranks.end(), [&](const RankState& r) {
        return r.actor == follow.ranks.front().actor && r.state == "failed";
      });
  if (guessed && !follow.causes.empty() && follow.causes.front().cause == "unclassified") {
    std::vector<Symptom> under = std::move(follow.causes.front().symptoms);
    follow.causes.erase(follow.causes.begin());
    if (!lead.causes.empty())
      for (auto& sym : under) lead.causes.front().symptoms.push_back(std::move(sym));
  }
  FoldUnder(lead, follow);
  Widen(lead, follow);
  lead.ranks = JoinRanks(lead, follow);
  detail::ActorList actors;
  for (const auto& r : lead.ranks) actors.Add(r.actor);
  for (const Incident* inc : {&lead, &follow}) {
    for (const auto& a : inc->actors) actors.Add(a);
    actors.more += inc->more_actors;
  }
  lead.actors = std::move(actors.names);
  lead.more_actors = actors.more;
  lead.fingerprint = fingerprint;
  lead.id = id;
  into = std::move(lead);
  FillRankOffsets(into);
}

bool SameJobFailure(const Incident& stored, const Incident& part) {
  if (stored.job.empty() || stored.job != part.job) return false;
  auto seconds = [](const std::optional<std::string>& t) {
    return t ? detail::DatedSeconds(*t) : std::nullopt;
  };
  const auto a = seconds(stored.started), b = seconds(stored.ended), c = seconds(part.started);
  if (!c || !a) return true;
  return *c >= *a - kJobReachSeconds && *c <= b.value_or(*a) + kJobReachSeconds;
}

void NameLaggingRankFromDumps(std::vector<Incident>& incidents, const std::vector<RankDump>& dumps) {
  if (dumps.size() < 2) return;
  // The process group every dump has: the default one where all have it, else the first common.
  std::string group;
  for (const auto& [name, status] : dumps.front().dump.groups) {
    (void)status;
    if (std::all_of(dumps.begin(), dumps.end(), [&](const RankDump& d) { return d.dump.groups.count(name) > 0; }) &&
        (group.empty() || name == "0"))
      group = name;
  }
  if (group.empty()) return;
  auto key = [&](const RankDump& d) {
    const auto& st = d.dump.groups.at(group);
    return std::make_pair(st.last_enqueued, st.last_completed);
  };
  const RankDump* behind = &dumps.front();
  for (const auto& d : dumps)
    if (key(d) < key(*behind)) behind = &d;
  const size_t lowest = size_t(std::count_if(dumps.begin(), dumps.end(), [&](const RankDump& d) { return key(d) == key(*behind); }));
  if (lowest != 1 || behind->rank < 0) return;
  Collective missed;
  missed.seq = uint64_t(std::max<int64_t>(key(*behind).first, 0)) + 1;
  for (const auto& d : dumps)
    for (const auto& e : d.dump.entries)
      if (&d != behind && !e.is_p2p && e.process_group == group && e.collective_seq_id == int64_t(missed.seq))
        missed.op = e.profiling_name;
  const std::string actor = "rank " + std::to_string(behind->rank);
  std::vector<Evidence> evidence;
  for (const auto& d : dumps) {
    const auto& st = d.dump.groups.at(group);
    evidence.push_back({d.path, 0, "Flight Recorder, rank " + std::to_string(d.rank) + ", process group " + group +
                                       ": last enqueued collective " + std::to_string(st.last_enqueued) +
                                       ", last completed " + std::to_string(st.last_completed)});
  }
  for (auto& inc : incidents) {
    if (inc.causes.empty() || inc.causes.front().cause.find(".timeout") == std::string::npos) continue;
    auto it = std::find_if(inc.ranks.begin(), inc.ranks.end(), [&](const RankState& r) { return r.actor == actor; });
    RankState r = it != inc.ranks.end() ? *it : RankState{actor, "", std::nullopt, std::nullopt, "", "", ""};
    if (it != inc.ranks.end()) inc.ranks.erase(it);
    r.state = "hung";
    r.detail = "missed " + (missed.op.empty() ? std::string("the collective") : missed.op) + " SeqNum=" +
               std::to_string(missed.seq) + " (Flight Recorder)";
    inc.ranks.insert(inc.ranks.begin(), std::move(r));
    if (inc.ranks.size() > Incident::kMaxActors) inc.ranks.pop_back();
    detail::ActorList actors;
    actors.names = inc.actors;
    actors.more = inc.more_actors;
    actors.PutFirst(actor);
    inc.actors = std::move(actors.names);
    inc.more_actors = actors.more;
    Cause& c = inc.causes.front();
    NameMissedCollective(c, actor, missed);
    c.title += " (from the Flight Recorder dumps)";
    c.captures["missed_from"] = "flight_recorder";
    for (const auto& e : evidence) c.evidence.push_back(e);
    FillRankOffsets(inc);
  }
}

void FoldJobs(std::vector<Incident>& incidents, const std::vector<JobInput>& inputs,
              const RuleSet& rules, double reach_seconds) {
  // The jobs the inputs are the logs of, and each job's ranks with the last line each wrote.
  std::map<std::string, std::vector<Silent>> job_ranks;
  for (const auto& in : inputs)
    if (auto m = MemberOfPath(in.path)) {
      auto& r = job_ranks[m->job];
      auto it = std::find_if(r.begin(), r.end(), [&](const Silent& x) { return x.actor == m->actor; });
      if (it == r.end()) it = r.insert(r.end(), Silent{m->actor, nullptr});
      const bool stdout_log = std::filesystem::path(in.path).filename() == "stdout.log";
      if (!in.last_line.empty() && (!it->last || stdout_log)) it->last = &in;
    }
  std::map<std::string, std::vector<Part>> by_job;
  for (size_t i = 0; i < incidents.size(); ++i) {
    if (incidents[i].job.empty()) incidents[i].job = JobKeyOf(incidents[i].source, incidents[i].host);
    auto m = MemberOfPath(incidents[i].source);
    if (!m) continue;
    const Incident& inc = incidents[i];
    const std::string actor = !inc.actors.empty() && inc.actors.front().rfind("rank ", 0) == 0
                                  ? inc.actors.front()
                                  : m->actor;
    by_job[m->job].push_back(
        Part{i, actor, OnlyCollective(rules, inc), StartOf(inc), WaitedCollective(inc).seq});
  }
  std::vector<bool> gone(incidents.size(), false);
  for (auto& [job, parts] : by_job) {
    // One failure of the job: the first failure of a process for a reason of its own, the
    // collective failures of the others that follow it within `reach_seconds` (a collective's
    // timeout), and those of the same time (within 10 s) where none failed on its own.
    std::vector<Part> left = parts;
    while (!left.empty()) {
      std::stable_sort(left.begin(), left.end(), [](const Part& a, const Part& b) {
        if (a.start && b.start) return *a.start < *b.start;
        return a.start.has_value() > b.start.has_value();
      });
      auto own = std::find_if(left.begin(), left.end(), [](const Part& p) { return !p.victim; });
      const Part head = own != left.end() ? *own : left.front();
      std::vector<Part> group, rest;
      for (const auto& p : left) {
        bool with = p.index == head.index;
        // The same process's other reports of its failure (its error file beside its log), and
        // its peers' collective failures. Where none failed on its own (a hang), a process the
        // head's incident already names may report later (its error file, written when the
        // watchdog ends it), the others only at the same time.
        if (!with && (p.victim || p.actor == head.actor)) {
          const auto& named = incidents[head.index].actors;
          const bool known = std::find(named.begin(), named.end(), p.actor) != named.end();
          const double reach = head.victim && !known ? 10 : reach_seconds;
          with = !p.start || !head.start ||
                 (*p.start >= *head.start - 10 && *p.start <= *head.start + reach);
        }
        (with ? group : rest).push_back(p);
      }
      std::vector<Silent> silent;
      for (const auto& r : job_ranks[job])
        if (std::none_of(parts.begin(), parts.end(), [&](const Part& p) {
              const auto& a = incidents[p.index].actors;
              return p.actor == r.actor || std::find(a.begin(), a.end(), r.actor) != a.end();
            }))
          silent.push_back(r);
      if (group.size() > 1 || !silent.empty()) {
        const size_t kept = FoldOne(incidents, group, silent);
        for (const auto& p : group)
          if (p.index != kept) gone[p.index] = true;
        FillRankOffsets(incidents[kept]);
      } else {
        NameLoneRank(incidents[head.index], head.actor, head.victim);
      }
      left = std::move(rest);
    }
  }
  detail::DropFolded(incidents, gone);
}

}  // namespace triage::core

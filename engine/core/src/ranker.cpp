#include "ranker.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "job.h"

namespace triage::core::detail {

namespace {

// How much a hit's place says about the failure: the exception that ended the process says
// most, an earlier exception of the chain a little less, a frame or block line less, a line
// logged on its own (a warning that may or may not matter) least.
double PositionWeight(const HitRecord& h) {
  if (h.hit.final_exception) return 1.0;
  if (h.hit.exception_index >= 0) return 0.9;
  if (h.in_failure) return 0.85;
  return 0.75;
}

struct Hypothesis {
  int cause = -1;                // index into rules.causes()
  std::vector<size_t> evidence;  // indices into hits
  double score = 0;
  bool signal_only = true;       // no evidence inside a failure event
  int parent = -1;               // the hypothesis that explains this one
  bool victim = false;           // a job's peer failure waiting for an unexplained first failure
  std::vector<size_t> symptoms;  // hypotheses folded under this root
};

bool IdMatches(const std::string& listed, const std::string& id) {
  // "lib.arch_unsupported" also names its finer ids ("lib.arch_unsupported.flashinfer").
  return id == listed || (id.size() > listed.size() && id.compare(0, listed.size(), listed) == 0 &&
                          id[listed.size()] == '.');
}

}  // namespace

namespace {

// One incident's ranking, step by step (RankCauses).
class Ranking {
 public:
  Ranking(const RuleSet& rules, const std::vector<HitRecord>& hits,
          const std::vector<FailureRecord>& failures, Incident& incident)
      : rules(rules),
        hits(hits),
        failures(failures),
        incident(incident),
        sigs(rules.signatures()),
        causes(rules.causes()) {
    for (size_t i = 0; i < hits.size(); ++i) by_sig[hits[i].hit.signature].push_back(i);
    // How many causes each signature supports: a signature that supports one cause is specific.
    support_count.assign(sigs.size(), 0);
    for (const auto& c : causes) {
      std::set<int> ids(c.any_signatures.begin(), c.any_signatures.end());
      ids.insert(c.all_signatures.begin(), c.all_signatures.end());
      for (int id : ids)
        if (id >= 0) support_count[size_t(id)]++;
    }
  }

  void Run() {
    Hypothesize();  // 1. hypotheses whose requirements hold, each scored (2.)
    JoinDeferring();
    LinkExplains();  // 3. the explains graph: symptoms under their explainers
    FoldJobVictims();
    CollectSymptoms();
    AdjustRootScores();
    EmitRoots();         // 4. root causes, ranked
    MarkIndependent();   // 5.
    CoverUnexplained();  // 6. nothing covers the failure
  }

 private:
  bool HasSig(int s) const { return s >= 0 && by_sig.count(s) > 0; }

  // 1. Hypotheses whose requirements hold.
  void Hypothesize() {
    auto has_sig = [&](int s) { return HasSig(s); };
    for (size_t ci = 0; ci < causes.size(); ++ci) {
      const CauseRule& c = causes[ci];
      if (std::any_of(c.none_signatures.begin(), c.none_signatures.end(), has_sig)) continue;
      auto holds_in = [&](const std::set<uint64_t>* events, std::vector<size_t>& ev) {
        auto hits_of = [&](int s) {
          std::vector<size_t> out;
          auto it = by_sig.find(s);
          if (it == by_sig.end()) return out;
          for (size_t h : it->second)
            if (!events || events->count(hits[h].event)) out.push_back(h);
          return out;
        };
        bool any_ok = c.any_signatures.empty();
        for (int id : c.any_signatures) {
          auto v = hits_of(id);
          if (!v.empty()) any_ok = true;
          ev.insert(ev.end(), v.begin(), v.end());
        }
        bool all_ok = true;
        for (int id : c.all_signatures) {
          auto v = hits_of(id);
          if (v.empty()) all_ok = false;
          ev.insert(ev.end(), v.begin(), v.end());
        }
        return any_ok && all_ok;
      };
      Hypothesis h;
      h.cause = int(ci);
      if (c.within == Within::kIncident) {
        if (!holds_in(nullptr, h.evidence)) continue;
      } else {
        std::set<uint64_t> seen;
        for (const auto& r : hits) seen.insert(r.event);
        for (uint64_t e : seen) {
          std::set<uint64_t> one{e};
          std::vector<size_t> ev;
          if (holds_in(&one, ev)) h.evidence.insert(h.evidence.end(), ev.begin(), ev.end());
        }
        if (h.evidence.empty()) continue;
      }
      std::sort(h.evidence.begin(), h.evidence.end());
      h.evidence.erase(std::unique(h.evidence.begin(), h.evidence.end()), h.evidence.end());

      Score(h);
      hyps.push_back(std::move(h));
    }
  }

  // 2. Score: prior, evidence strength by position (noisy-or over distinct signatures), and
  // specificity of the signatures that carry it.
  void Score(Hypothesis& h) {
    std::map<int, double> best;
    double spec_sum = 0;
    for (size_t e : h.evidence) {
      const HitRecord& r = hits[e];
      const double w = sigs[size_t(r.hit.signature)].strength * PositionWeight(r);
      best[r.hit.signature] = std::max(best[r.hit.signature], w);
      if (r.in_failure || r.hit.exception_index >= 0) h.signal_only = false;
    }
    double miss = 1;
    for (const auto& [s, w] : best) {
      miss *= 1 - w;
      spec_sum += 1.0 / std::max(1, support_count[size_t(s)]);
    }
    const double strength = 1 - miss;
    const double spec = best.empty() ? 0 : spec_sum / double(best.size());
    h.score = 0.4 * causes[size_t(h.cause)].prior + 0.45 * strength + 0.15 * spec;
  }

  // A hypothesis that defers to another's id (a vocabulary's cause to the written cause of its
  // taxonomy id) joins it: one cause, told once, with the evidence of both. A written cause
  // takes it; among hypotheses that all defer, the strongest takes the others.
  void JoinDeferring() {
    std::vector<size_t> order(hyps.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return hyps[a].score < hyps[b].score; });
    std::vector<bool> gone(hyps.size(), false);
    for (size_t k = 0; k < order.size(); ++k) {
      Hypothesis& h = hyps[order[k]];
      const CauseRule& hc = causes[size_t(h.cause)];
      if (hc.defers_to.empty()) continue;
      size_t target = SIZE_MAX;
      for (size_t j = 0; j < order.size(); ++j) {
        if (j == k || gone[order[j]]) continue;
        const CauseRule& rc = causes[size_t(hyps[order[j]].cause)];
        const bool named = std::any_of(hc.defers_to.begin(), hc.defers_to.end(),
                                       [&](const std::string& d) { return IdMatches(d, rc.id); });
        // A deferring one takes it only when stronger (later in `order`).
        if (!named || (!rc.defers_to.empty() && j < k)) continue;
        if (target == SIZE_MAX ||
            (causes[size_t(hyps[order[target]].cause)].defers_to.size() > rc.defers_to.size()))
          target = j;
      }
      if (target == SIZE_MAX) continue;
      Hypothesis& r = hyps[order[target]];
      r.evidence.insert(r.evidence.end(), h.evidence.begin(), h.evidence.end());
      std::sort(r.evidence.begin(), r.evidence.end());
      r.evidence.erase(std::unique(r.evidence.begin(), r.evidence.end()), r.evidence.end());
      r.score = std::max(r.score, h.score);
      r.signal_only = r.signal_only && h.signal_only;
      gone[order[k]] = true;
    }
    std::vector<Hypothesis> kept;
    for (size_t i = 0; i < hyps.size(); ++i)
      if (!gone[i]) kept.push_back(std::move(hyps[i]));
    hyps = std::move(kept);
  }

  // A cause comes before what it makes happen. Evidence leads to the first failure at or after
  // it; when A's evidence leads to a later failure than all of B's does, A belongs to that later
  // failure and did not cause B (two failures that met in one incident, the later one with a
  // cause that would explain the earlier). Evidence after the last failure (a probe run after
  // the crash) leads nowhere and is not ordered.
  std::optional<uint64_t> FailureFrom(const std::string& source, uint64_t line) const {
    std::optional<uint64_t> best;
    for (const auto& f : failures)
      if (f.source == source && f.line >= line && (!best || f.line < *best)) best = f.line;
    return best;
  }
  bool ComesAfter(const Hypothesis& a, const Hypothesis& b) const {
    std::map<std::string, uint64_t> first_a, last_b;
    for (size_t e : a.evidence) {
      auto [it, fresh] = first_a.emplace(hits[e].source, hits[e].hit.line);
      if (!fresh) it->second = std::min(it->second, hits[e].hit.line);
    }
    for (size_t e : b.evidence) {
      auto [it, fresh] = last_b.emplace(hits[e].source, hits[e].hit.line);
      if (!fresh) it->second = std::max(it->second, hits[e].hit.line);
    }
    for (const auto& [source, line] : last_b) {
      auto it = first_a.find(source);
      if (it == first_a.end()) continue;
      const auto from_a = FailureFrom(source, it->second);
      const auto from_b = FailureFrom(source, line);
      if (from_a && from_b && *from_a > *from_b) return true;
    }
    return false;
  }

  // Whether a hypothesis rests on more than hints: a hit of a signature that is no hint (a
  // table's hint row, a warning, tells what a failure means and is the failure of nothing).
  bool ShowsAnError(const Hypothesis& h) const {
    return std::any_of(h.evidence.begin(), h.evidence.end(),
                       [&](size_t e) { return !sigs[size_t(hits[e].hit.signature)].hint; });
  }

  // A explains B when A names B's cause id, or every signature that carries B's evidence, and A
  // does not come after B.
  bool Explains(const Hypothesis& a, const Hypothesis& b) const {
    const CauseRule& ca = causes[size_t(a.cause)];
    const CauseRule& cb = causes[size_t(b.cause)];
    if (ca.id == cb.id || ComesAfter(a, b)) return false;
    for (const auto& x : ca.explains)
      if (IdMatches(x, cb.id)) return true;
    if (ShowsAnError(a))
      for (const auto& x : ca.explains_after_error)
        if (IdMatches(x, cb.id)) return true;
    if (b.evidence.empty()) return false;
    for (size_t e : b.evidence) {
      const std::string& sid = sigs[size_t(hits[e].hit.signature)].id;
      if (std::find(ca.explains.begin(), ca.explains.end(), sid) == ca.explains.end()) return false;
    }
    return true;
  }

  // 3. The explains graph: the explained one becomes a symptom of its strongest explainer.
  void LinkExplains() {
    for (size_t b = 0; b < hyps.size(); ++b) {
      int parent = -1;
      for (size_t a = 0; a < hyps.size(); ++a) {
        if (a == b || !Explains(hyps[a], hyps[b])) continue;
        if (Explains(hyps[b], hyps[a])) continue;  // mutual: neither folds (the loader forbids it)
        if (parent < 0 || hyps[a].score > hyps[size_t(parent)].score) parent = int(a);
      }
      hyps[b].parent = parent;
    }
  }

  // A job's victims (TAXONOMY.md, "Jobs"): in an incident whose first failing process is known,
  // a collective failure all of whose evidence comes from the other processes followed from
  // that process's failure (its peers' NCCL errors, timeouts and closed connections). It is a
  // symptom of that process's own cause; where no rule covers that process's failure, of the
  // failure itself (CoverUnexplained).
  void FoldJobVictims() {
    if (incident.actors.empty()) return;
    const std::string& first = incident.actors.front();
    auto from_first = [&](const Hypothesis& h) {
      return std::any_of(h.evidence.begin(), h.evidence.end(),
                         [&](size_t e) { return hits[e].actor == first; });
    };
    auto victim = [&](const Hypothesis& h) {
      if (!IsCollectiveFailure(rules, causes[size_t(h.cause)].id) || from_first(h))
        return false;
      return std::any_of(h.evidence.begin(), h.evidence.end(),
                         [&](size_t e) { return !hits[e].actor.empty(); });
    };
    int own = -1;  // the first process's strongest root cause
    for (size_t i = 0; i < hyps.size(); ++i)
      if (hyps[i].parent < 0 && from_first(hyps[i]) && !victim(hyps[i]) &&
          (own < 0 || hyps[i].score > hyps[size_t(own)].score))
        own = int(i);
    for (size_t i = 0; i < hyps.size(); ++i) {
      if (hyps[i].parent >= 0 || !victim(hyps[i])) continue;
      if (own >= 0)
        hyps[i].parent = own;
      else
        hyps[i].victim = true;
    }
  }

  size_t RootOf(size_t i) const {
    size_t r = i;
    for (int guard = 0; hyps[r].parent >= 0 && guard < 64; ++guard) r = size_t(hyps[r].parent);
    return r;
  }
  void CollectSymptoms() {
    for (size_t i = 0; i < hyps.size(); ++i)
      if (hyps[i].parent >= 0) hyps[RootOf(i)].symptoms.push_back(i);
  }

  // A root that explains what happened rises with what it explains; a root resting only on
  // warnings outside any failure, explaining nothing, is weaker than one inside the failure.
  void AdjustRootScores() {
    for (auto& h : hyps) {
      if (h.parent >= 0) continue;
      double best_symptom = 0;
      for (size_t s : h.symptoms) best_symptom = std::max(best_symptom, hyps[s].score);
      bool explains_hit = false;
      const CauseRule& c = causes[size_t(h.cause)];
      for (const auto& x : c.explains) explains_hit |= HasSig(rules.FindSignature(x));
      if (best_symptom > 0)
        h.score = 1 - (1 - h.score) * (1 - 0.5 * best_symptom);
      else if (explains_hit)
        h.score = 1 - (1 - h.score) * 0.8;
      else if (h.signal_only && !failures.empty())
        h.score *= 0.7;
      h.score = std::clamp(h.score, 0.0, 0.99);
    }
  }

  std::vector<Evidence> EvidenceOf(const std::vector<size_t>& idx) const {
    std::vector<Evidence> out;
    std::set<std::pair<std::string, uint64_t>> seen;
    std::vector<size_t> sorted = idx;
    std::sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
      if (hits[a].source != hits[b].source) return hits[a].source < hits[b].source;
      return hits[a].hit.line < hits[b].hit.line;
    });
    for (size_t e : sorted) {
      if (!seen.insert({hits[e].source, hits[e].hit.line}).second) continue;
      if (out.size() >= 12) break;
      out.push_back({hits[e].source, hits[e].hit.line, hits[e].text});
    }
    return out;
  }
  void CapturesOf(const std::vector<size_t>& idx, std::map<std::string, std::string>& caps) const {
    // Strongest hits first: a capture from the final exception beats one from a warning.
    std::vector<size_t> order = idx;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return PositionWeight(hits[a]) > PositionWeight(hits[b]);
    });
    for (size_t e : order)
      for (const auto& [k, v] : hits[e].hit.captures) caps.emplace(k, v);
  }

  // 4. Root causes, ranked (a job's victims wait for the failure they followed).
  void EmitRoots() {
    std::vector<size_t> roots;
    for (size_t i = 0; i < hyps.size(); ++i)
      if (hyps[i].parent < 0 && !hyps[i].victim) roots.push_back(i);
    std::stable_sort(roots.begin(), roots.end(),
                     [&](size_t a, size_t b) { return hyps[a].score > hyps[b].score; });
    incident.causes.clear();
    for (size_t r : roots) incident.causes.push_back(CauseOf(r));
  }

  // Root hypothesis `r` as a reported cause, with its symptoms and the checks it asks for.
  Cause CauseOf(size_t r) const {
    const Hypothesis& h = hyps[r];
    const CauseRule& rule = causes[size_t(h.cause)];
    Cause c;
    c.cause = rule.id;
    c.score = std::round(h.score * 1000) / 1000;
    c.band = ScoreBand(c.score);
    CapturesOf(h.evidence, c.captures);
    for (size_t s : h.symptoms) CapturesOf(hyps[s].evidence, c.captures);
    CompleteCaptures(rules, c.captures);
    c.title = FillTemplate(rule.title, c.captures);
    c.remedy = FillTemplate(rule.remedy, c.captures);
    c.fingerprint_keys = rule.fingerprint;
    c.evidence = EvidenceOf(h.evidence);
    std::vector<size_t> syms = h.symptoms;
    std::sort(syms.begin(), syms.end(),
              [&](size_t a, size_t b) { return hyps[a].score > hyps[b].score; });
    for (size_t s : syms) c.symptoms.push_back(SymptomOf(s));
    for (const auto& v : rule.verify) {
      VerifyRequest req;
      req.verifier = v.verifier;
      for (const auto& [k, tmpl] : v.args) req.args[k] = FillTemplate(tmpl, c.captures);
      c.verify.push_back(std::move(req));
    }
    return c;
  }

  Symptom SymptomOf(size_t s) const {
    const CauseRule& sr = causes[size_t(hyps[s].cause)];
    std::map<std::string, std::string> caps;
    CapturesOf(hyps[s].evidence, caps);
    CompleteCaptures(rules, caps);
    return {sr.id, FillTemplate(sr.title, caps), EvidenceOf(hyps[s].evidence)};
  }

  // 5. Independence: a root cause that shares no evidence line with another root cause (and,
  // being a root, is explained by none) stands on its own.
  void MarkIndependent() {
    for (size_t i = 0; i < incident.causes.size(); ++i) {
      std::set<std::pair<std::string, uint64_t>> mine;
      for (const auto& e : incident.causes[i].evidence) mine.insert({e.source, e.line});
      bool shared = false;
      for (size_t j = 0; j < incident.causes.size() && !shared; ++j) {
        if (i == j) continue;
        for (const auto& e : incident.causes[j].evidence)
          shared |= mine.count({e.source, e.line}) > 0;
      }
      incident.causes[i].independent = !shared;
    }
  }

  // 6. Nothing covers the failure: say so, with the failure's own words (masked), and the job's
  // victims as its symptoms.
  void CoverUnexplained() {
    std::vector<size_t> victims;
    for (size_t i = 0; i < hyps.size(); ++i)
      if (hyps[i].victim) victims.push_back(i);
    if (failures.empty()) {
      for (size_t v : victims) incident.causes.push_back(CauseOf(v));  // nothing else to say
      return;
    }
    if (!incident.causes.empty() && victims.empty()) return;
    const FailureRecord* f = &failures.back();
    for (const auto& x : failures)
      if (x.definitive) f = &x;
    // Several processes of one job failed: the words of the one that failed first, not the
    // launcher's report of it nor a peer's error that followed. So too where one process of a
    // job failed and the failure picked is not a process's of the job (torchrun's
    // ChildFailedError after a rank's own traceback).
    if (incident.actors.size() > 1 || !victims.empty() || (!incident.actors.empty() && f->actor.empty())) {
      for (const auto& x : failures)
        if (x.actor == incident.actors.front()) {
          f = &x;
          break;
        }
    }
    Cause c = Unclassified(*f);
    for (size_t v : victims) c.symptoms.push_back(SymptomOf(v));
    incident.causes.insert(incident.causes.begin(), std::move(c));
  }

  // The failure `f` as a cause no rule names: its own words (masked), and the program's own
  // error site where a site table knows the message (the report names the project, file and
  // line it comes from).
  Cause Unclassified(const FailureRecord& f) const {
    Cause c;
    c.cause = "unclassified";
    c.score = 0.3;
    c.band = ScoreBand(c.score);
    c.title = NormalizeMessage(f.terminal.empty() ? f.text : f.terminal);
    c.remedy =
        "No rule covers this failure yet: read the evidence, and add a rule (triage rules "
        "test FILE shows what fires).";
    c.captures["message"] = c.title;
    c.fingerprint_keys = {"message"};
    const HitRecord* site = nullptr;
    for (const auto& h : hits)
      if (h.source == f.source && (h.in_failure || h.hit.line == f.line) &&
          !sigs[size_t(h.hit.signature)].hint && h.hit.captures.count("site_origin"))
        site = &h;
    if (site) {
      c.captures["site_origin"] = site->hit.captures.at("site_origin");
      c.remedy = "No rule names a root cause for this message; it is raised at " +
                 c.captures["site_origin"] +
                 ": read the code there and the lines before the error for the condition it "
                 "refuses.";
    }
    c.evidence.push_back({f.source, f.line, f.text});
    return c;
  }

  const RuleSet& rules;
  const std::vector<HitRecord>& hits;
  const std::vector<FailureRecord>& failures;
  Incident& incident;
  const std::vector<SignatureRule>& sigs;
  const std::vector<CauseRule>& causes;
  std::map<int, std::vector<size_t>> by_sig;
  std::vector<int> support_count;
  std::vector<Hypothesis> hyps;
};

}  // namespace

void RankCauses(const RuleSet& rules, const std::vector<HitRecord>& hits,
                const std::vector<FailureRecord>& failures, Incident& incident) {
  Ranking(rules, hits, failures, incident).Run();
  for (size_t i = 0; i < incident.causes.size(); ++i) incident.causes[i].rank = int(i) + 1;
  PutEarlierFailureFirst(incident);
  incident.fingerprint = Fingerprint(incident);
}

std::vector<int> CausesPointedAt(const RuleSet& rules, const std::set<int>& signatures) {
  auto hit = [&](int s) { return s >= 0 && signatures.count(s) > 0; };
  // A cause needs a hit among its `requires_any`, or else all of its `requires_all`: only the
  // causes that require one of `signatures` can be pointed at.
  std::vector<int> candidates;
  for (int s : signatures) {
    const std::vector<int>& requiring = rules.CausesRequiring(s);
    candidates.insert(candidates.end(), requiring.begin(), requiring.end());
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<int> out;
  const auto& causes = rules.causes();
  for (int ci : candidates) {
    const CauseRule& c = causes[size_t(ci)];
    const auto& any = c.any_signatures;
    const auto& all = c.all_signatures;
    if (std::any_of(c.none_signatures.begin(), c.none_signatures.end(), hit)) continue;
    if (any.empty() && all.empty()) continue;
    if ((any.empty() || std::any_of(any.begin(), any.end(), hit)) &&
        std::all_of(all.begin(), all.end(), hit))
      out.push_back(int(ci));
  }
  return out;
}

bool CauseExplains(const RuleSet& rules, int a, int b) {
  const auto& causes = rules.causes();
  if (a == b) return false;
  const CauseRule& ca = causes[size_t(a)];
  const std::string& id = causes[size_t(b)].id;
  return std::any_of(ca.explains.begin(), ca.explains.end(),
                     [&](const std::string& x) { return IdMatches(x, id); });
}

}  // namespace triage::core::detail

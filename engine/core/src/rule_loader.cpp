// Rule loading (toml++): the signatures and causes of a rule folder, their validation, and the
// compiled matcher's state.
#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <toml++/toml.h>

#include "rules_internal.h"

namespace triage::core {

namespace fs = std::filesystem;

bool RuleSetBuilder::CheckKeys(const std::string& file, const toml::table& t, std::string_view what,
                               std::initializer_list<std::string_view> allowed) {
  bool ok = true;
  for (auto&& [k, v] : t) {
    (void)v;
    std::string_view key = k.str();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      Fault(file, int(k.source().begin.line),
            std::string(what) + ": unknown key '" + std::string(key) + "'");
      ok = false;
    }
  }
  return ok;
}

bool RuleSetBuilder::GetString(const std::string& file, const toml::table& t, std::string_view key,
                               std::string& out, bool required, int table_line) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (required) Fault(file, table_line, "missing required key '" + std::string(key) + "'");
    return !required;
  }
  if (!n->is_string()) {
    Fault(file, LineOf(*n), "'" + std::string(key) + "' must be a string");
    return false;
  }
  out = n->as_string()->get();
  return true;
}

bool RuleSetBuilder::GetDouble(const std::string& file, const toml::table& t, std::string_view key,
                               double& out) {
  const toml::node* n = t.get(key);
  if (!n) return true;
  if (n->is_floating_point()) out = n->as_floating_point()->get();
  else if (n->is_integer()) out = double(n->as_integer()->get());
  else {
    Fault(file, LineOf(*n), "'" + std::string(key) + "' must be a number");
    return false;
  }
  if (!(out >= 0 && out <= 1)) {
    Fault(file, LineOf(*n), "'" + std::string(key) + "' must be between 0 and 1");
    return false;
  }
  return true;
}

bool RuleSetBuilder::GetBool(const std::string& file, const toml::table& t, std::string_view key,
                             bool& out) {
  const toml::node* n = t.get(key);
  if (!n) return true;
  if (!n->is_boolean()) {
    Fault(file, LineOf(*n), "'" + std::string(key) + "' must be true or false");
    return false;
  }
  out = n->as_boolean()->get();
  return true;
}

bool RuleSetBuilder::GetStringArray(const std::string& file, const toml::node& n,
                                    std::string_view what, std::vector<std::string>& out) {
  const toml::array* a = n.as_array();
  if (!a) {
    Fault(file, LineOf(n), "'" + std::string(what) + "' must be an array of strings");
    return false;
  }
  for (const auto& e : *a) {
    if (!e.is_string()) {
      Fault(file, LineOf(e), "'" + std::string(what) + "' must be an array of strings");
      return false;
    }
    out.push_back(e.as_string()->get());
  }
  return true;
}

bool RuleSetBuilder::ReadSignature(const std::string& file, const toml::table& t,
                                   SignatureRule& s) {
  const int line = int(t.source().begin.line);
  s.file = file;
  s.line = line;
  bool ok = CheckKeys(file, t, "signature",
                      {"id", "pattern", "literal", "scope", "strength", "fatal", "benign",
                       "restart", "hint", "teardown", "versions", "description", "examples"});
  ok &= GetBool(file, t, "versions", s.versions);
  ok &= GetBool(file, t, "hint", s.hint);
  ok &= GetBool(file, t, "teardown", s.teardown);
  if (s.teardown) s.hint = true;
  ok &= GetString(file, t, "id", s.id, true, line);
  ok &= GetString(file, t, "pattern", s.pattern, true, line);
  // `literal`: one string, or several (a cover: every match holds one of them).
  std::vector<std::string> literal_list;
  if (const toml::node* ln = t.get("literal")) {
    if (ln->is_string()) literal_list.push_back(ln->as_string()->get());
    else ok &= GetStringArray(file, *ln, "literal", literal_list);
  }
  ok &= GetDouble(file, t, "strength", s.strength);
  ok &= GetBool(file, t, "fatal", s.fatal);
  ok &= GetBool(file, t, "benign", s.benign);
  ok &= GetBool(file, t, "restart", s.restart);
  if (const toml::node* sc = t.get("scope")) {
    if (!sc->is_table()) {
      Fault(file, LineOf(*sc), "'scope' must be a table { kind = ..., exception = ... }");
      ok = false;
    } else {
      const toml::table& st = *sc->as_table();
      ok &= CheckKeys(file, st, "scope", {"kind", "exception", "level"});
      std::string kind = "any", exc = "any", level = "any";
      ok &= GetString(file, st, "kind", kind, false, line);
      ok &= GetString(file, st, "exception", exc, false, line);
      ok &= GetString(file, st, "level", level, false, line);
      const int sl = LineOf(*sc);
      if (level == "error") {
        s.error_level = true;
      } else if (level != "any") {
        Fault(file, sl, "scope.level must be 'any' or 'error' (not '" + level + "')");
        ok = false;
      }
      if (kind == "any") s.kind = ScopeKind::kAny;
      else if (kind == "line") s.kind = ScopeKind::kLine;
      else if (kind == "traceback") s.kind = ScopeKind::kTraceback;
      else if (kind == "block") s.kind = ScopeKind::kBlock;
      else if (kind == "fragment") s.kind = ScopeKind::kFragment;
      else {
        Fault(file, sl, "scope.kind must be one of any, line, traceback, block, fragment (not '" +
                            kind + "')");
        ok = false;
      }
      if (exc == "any") s.exception = ScopeException::kAny;
      else if (exc == "last") s.exception = ScopeException::kLast;
      else if (exc == "chain") s.exception = ScopeException::kChain;
      else {
        Fault(file, sl, "scope.exception must be one of any, last, chain (not '" + exc + "')");
        ok = false;
      }
    }
  }
  if (!s.pattern.empty() || t.get("pattern")) {
    if (std::string err = detail::PatternError(s.pattern); !err.empty()) {
      const toml::node* pn = t.get("pattern");
      Fault(file, pn ? LineOf(*pn) : line, "pattern does not compile: " + err);
      ok = false;
    }
  }
  // Both a given literal and the derived cover are sound (every match contains one of their
  // strings); the more selective one is used: the one whose shortest string is longer.
  auto shortest = [](const std::vector<std::string>& v) {
    size_t m = SIZE_MAX;
    for (const auto& x : v) m = std::min(m, x.size());
    return v.empty() ? size_t(0) : m;
  };
  // Where the pattern never ignores case, the derived literals keep theirs; a given literal
  // keeps its case only where every derived literal holds it byte for byte (it is then in every
  // match as written), else it is looked for in any case, as its author may have meant.
  const bool keep_case = !PatternMayIgnoreCase(s.pattern);
  std::vector<std::string> derived =
      DeriveLiterals(s.pattern, detail::LiteralScanner::kMinLiteral, keep_case);
  std::vector<std::string> given;
  for (const auto& literal : literal_list) {
    std::vector<std::string> one =
        DeriveLiterals(RE2::QuoteMeta(literal), detail::LiteralScanner::kMinLiteral, true);
    if (one.empty()) {
      // A cover with a string too short to look for covers nothing: the derived cover is used.
      given.clear();
      break;
    }
    given.insert(given.end(), one.begin(), one.end());
  }
  if (!given.empty() && shortest(given) >= shortest(derived)) {
    s.literals = given;
    s.literal_given = true;
    // A signature of lines logged at ERROR is kept by its envelope's words, as written.
    s.literals_keep_case =
        s.error_level ||
        (keep_case && !derived.empty() &&
        std::all_of(given.begin(), given.end(), [&](const std::string& g) {
          return std::all_of(derived.begin(), derived.end(), [&](const std::string& d) {
            return d.find(g) != std::string::npos;
          });
        }));
  } else {
    s.literals = derived;
    s.literals_keep_case = keep_case;
  }
  return ok;
}

bool RuleSetBuilder::ReadCause(const std::string& file, const toml::table& t, CauseRule& c,
                               CauseRefs& refs) {
  const int line = int(t.source().begin.line);
  c.file = file;
  c.line = line;
  bool ok = CheckKeys(file, t, "cause",
                      {"id", "title", "remedy", "requires", "explains", "prior", "fingerprint",
                       "verify", "strikes_in_flight", "defers_to", "description"});
  ok &= GetBool(file, t, "strikes_in_flight", c.strikes_in_flight);
  if (const toml::node* n = t.get("defers_to")) ok &= GetStringArray(file, *n, "defers_to", c.defers_to);
  ok &= GetString(file, t, "id", c.id, true, line);
  ok &= GetString(file, t, "title", c.title, true, line);
  ok &= GetString(file, t, "remedy", c.remedy, true, line);
  ok &= GetDouble(file, t, "prior", c.prior);
  if (const toml::node* r = t.get("requires")) {
    refs.requires_line = LineOf(*r);
    if (!r->is_table()) {
      Fault(file, LineOf(*r), "'requires' must be a table { any = [...], all = [...] }");
      ok = false;
    } else {
      const toml::table& rt = *r->as_table();
      ok &= CheckKeys(file, rt, "requires", {"any", "all", "none", "within"});
      if (const toml::node* n = rt.get("any")) ok &= GetStringArray(file, *n, "requires.any", c.requires_any);
      if (const toml::node* n = rt.get("all")) ok &= GetStringArray(file, *n, "requires.all", c.requires_all);
      if (const toml::node* n = rt.get("none")) ok &= GetStringArray(file, *n, "requires.none", c.requires_none);
      std::string within = "incident";
      ok &= GetString(file, rt, "within", within, false, line);
      if (within == "incident") c.within = Within::kIncident;
      else if (within == "event") c.within = Within::kEvent;
      else {
        Fault(file, refs.requires_line, "requires.within must be \"event\" or \"incident\"");
        ok = false;
      }
    }
  } else {
    Fault(file, line, "missing required key 'requires' (requires.any or requires.all)");
    ok = false;
  }
  if (ok && c.requires_any.empty() && c.requires_all.empty()) {
    Fault(file, refs.requires_line ? refs.requires_line : line,
          "requires.any or requires.all must name at least one signature");
    ok = false;
  }
  if (const toml::node* n = t.get("explains")) {
    refs.explains_line = LineOf(*n);
    ok &= GetStringArray(file, *n, "explains", c.explains);
  }
  if (const toml::node* n = t.get("fingerprint")) ok &= GetStringArray(file, *n, "fingerprint", c.fingerprint);
  if (const toml::node* n = t.get("verify")) {
    const toml::array* a = n->as_array();
    if (!a) {
      Fault(file, LineOf(*n), "'verify' must be an array of { verifier = ..., args = {...} }");
      ok = false;
    } else {
      for (const auto& e : *a) {
        const toml::table* vt = e.as_table();
        if (!vt) {
          Fault(file, LineOf(e), "'verify' entries must be tables { verifier = ..., args = {...} }");
          ok = false;
          continue;
        }
        VerifyRule v;
        ok &= CheckKeys(file, *vt, "verify", {"verifier", "args"});
        ok &= GetString(file, *vt, "verifier", v.verifier, true, LineOf(e));
        if (const toml::node* args = vt->get("args")) {
          const toml::table* at = args->as_table();
          if (!at) {
            Fault(file, LineOf(*args), "verify.args must be a table of strings");
            ok = false;
          } else {
            for (auto&& [k, val] : *at) {
              if (!val.is_string()) {
                Fault(file, LineOf(val), "verify.args." + std::string(k.str()) + " must be a string");
                ok = false;
                continue;
              }
              v.args[std::string(k.str())] = val.as_string()->get();
            }
          }
        }
        c.verify.push_back(std::move(v));
      }
    }
  }
  return ok;
}

void RuleSetBuilder::LoadFile(const std::string& path) {
  toml::parse_result res = toml::parse_file(path);
  if (!res) {
    const auto& err = res.error();
    Fault(path, int(err.source().begin.line), "TOML syntax error: " + std::string(err.description()));
    return;
  }
  set_->files_.push_back(path);
  const toml::table& root = res.table();
  RuleSet& rs = *set_;
  if (root.get("vocabulary") || root.get("row")) ReadVocabulary(path, root);
  for (auto&& [k, v] : root) {
    std::string_view key = k.str();
    const int kl = int(k.source().begin.line);
    if (key == "vocabulary" || key == "row") continue;  // ReadVocabulary's
    static const std::set<std::string_view> kKnown = {"signature", "cause", "arch",
                                                      "library_minimum", "driver_minimum",
                                                      "taxonomy"};
    if (!kKnown.count(key)) {
      Fault(path, kl, "unknown top-level entry '" + std::string(key) +
                          "' (expected [[signature]], [[cause]], [[arch]], [[library_minimum]], "
                          "[[driver_minimum]], [[taxonomy]], or a [vocabulary] with [[row]]s)");
      continue;
    }
    const toml::array* arr = v.as_array();
    if (!arr) {
      Fault(path, kl, "'" + std::string(key) + "' must be an array of tables ([[" +
                          std::string(key) + "]])");
      continue;
    }
    for (const auto& e : *arr) {
      const toml::table* t = e.as_table();
      if (!t) {
        Fault(path, LineOf(e), "'" + std::string(key) + "' entries must be tables");
        continue;
      }
      const int tl = int(t->source().begin.line);
      if (key == "signature") {
        SignatureRule s;
        if (!ReadSignature(path, *t, s)) continue;
        if (int i = rs.FindSignature(s.id); i >= 0) FaultIfSameFolder("signature", s, rs.signatures_[size_t(i)]);
        AddSignature(std::move(s));
      } else if (key == "cause") {
        CauseRule c;
        CauseRefs refs;
        if (!ReadCause(path, *t, c, refs)) continue;
        if (int i = rs.FindCause(c.id); i >= 0) FaultIfSameFolder("cause", c, rs.causes_[size_t(i)]);
        AddCause(std::move(c), refs);
      } else if (key == "taxonomy") {
        std::string id;
        bool ok = CheckKeys(path, *t, "taxonomy", {"id", "title", "description", "follows_errors"});
        ok &= GetString(path, *t, "id", id, true, tl);
        std::string title;
        ok &= GetString(path, *t, "title", title, false, tl);
        bool follows = false;
        ok &= GetBool(path, *t, "follows_errors", follows);
        if (ok && std::find(rs.taxonomy_.begin(), rs.taxonomy_.end(), id) == rs.taxonomy_.end()) {
          rs.taxonomy_.push_back(id);
          if (follows) rs.follows_errors_.push_back(id);
        }
      } else if (key == "arch") {
        ArchEntry a;
        a.file = path;
        a.line = tl;
        bool ok = CheckKeys(path, *t, "arch", {"sm", "min_cuda", "family", "products", "description"});
        ok &= GetString(path, *t, "sm", a.sm, true, tl);
        ok &= GetString(path, *t, "min_cuda", a.min_cuda, true, tl);
        ok &= GetString(path, *t, "family", a.family, false, tl);
        if (const toml::node* p = t->get("products")) ok &= GetStringArray(path, *p, "products", a.products);
        if (!ok) continue;
        auto same = std::find_if(rs.arches_.begin(), rs.arches_.end(),
                                 [&](const ArchEntry& x) { return x.sm == a.sm; });
        if (same != rs.arches_.end()) *same = std::move(a);
        else rs.arches_.push_back(std::move(a));
      } else if (key == "library_minimum") {
        LibraryMinimum m;
        m.file = path;
        m.line = tl;
        bool ok = CheckKeys(path, *t, "library_minimum", {"library", "family", "min_cuda", "description"});
        ok &= GetString(path, *t, "library", m.library, true, tl);
        ok &= GetString(path, *t, "family", m.family, true, tl);
        ok &= GetString(path, *t, "min_cuda", m.min_cuda, true, tl);
        if (!ok) continue;
        auto same = std::find_if(rs.library_minimums_.begin(), rs.library_minimums_.end(),
                                 [&](const LibraryMinimum& x) {
                                   return x.library == m.library && x.family == m.family;
                                 });
        if (same != rs.library_minimums_.end()) *same = std::move(m);
        else rs.library_minimums_.push_back(std::move(m));
      } else {
        DriverMinimum d;
        d.file = path;
        d.line = tl;
        bool ok = CheckKeys(path, *t, "driver_minimum", {"cuda_major", "min_driver", "description"});
        ok &= GetString(path, *t, "cuda_major", d.cuda_major, true, tl);
        ok &= GetString(path, *t, "min_driver", d.min_driver, true, tl);
        if (!ok) continue;
        auto same = std::find_if(rs.driver_minimums_.begin(), rs.driver_minimums_.end(),
                                 [&](const DriverMinimum& x) { return x.cuda_major == d.cuda_major; });
        if (same != rs.driver_minimums_.end()) *same = std::move(d);
        else rs.driver_minimums_.push_back(std::move(d));
      }
    }
  }
}

// A later folder's rule replaces a shipped one of the same id (an override); within one folder
// the same id written twice is a mistake (the later one silently wins): a fault, naming both.
template <class Rule>
void RuleSetBuilder::FaultIfSameFolder(std::string_view kind, const Rule& now, const Rule& before) {
  if (fs::path(now.file).parent_path() != fs::path(before.file).parent_path()) return;
  Fault(now.file, now.line, std::string(kind) + " '" + now.id + "' is defined twice in one rule folder (first at " +
                                before.file + ":" + std::to_string(before.line) + "); this one replaces it");
}

void RuleSetBuilder::AddSignature(SignatureRule s) {
  RuleSet& rs = *set_;
  auto it = rs.signature_index_.find(s.id);
  if (it != rs.signature_index_.end()) {
    rs.signatures_[size_t(it->second)] = std::move(s);
  } else {
    rs.signature_index_[s.id] = int(rs.signatures_.size());
    rs.signatures_.push_back(std::move(s));
  }
}

void RuleSetBuilder::AddCause(CauseRule c, CauseRefs refs) {
  RuleSet& rs = *set_;
  auto it = rs.cause_index_.find(c.id);
  if (it != rs.cause_index_.end()) {
    rs.causes_[size_t(it->second)] = std::move(c);
    cause_refs_[size_t(it->second)] = refs;
  } else {
    rs.cause_index_[c.id] = int(rs.causes_.size());
    rs.causes_.push_back(std::move(c));
    cause_refs_.push_back(refs);
  }
}

void RuleSetBuilder::LoadFolder(const std::string& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    Fault(folder, 0, "not a folder of rule files");
    return;
  }
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    if (e.path().extension() == ".toml" && e.is_regular_file(ec)) files.push_back(e.path().string());
  }
  if (ec) Fault(folder, 0, "cannot list: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) LoadFile(f);
  if (fs::is_directory(fs::path(folder) / "sites", ec)) LoadSites((fs::path(folder) / "sites").string());
  // The known-bug base is read when an incident first asks for it (RuleSet::known_bugs()).
  std::vector<std::string> bugs;
  if (fs::is_directory(fs::path(folder) / "known_bugs", ec))
    for (const auto& e : fs::directory_iterator(fs::path(folder) / "known_bugs", ec))
      if (e.path().extension() == ".toml" && e.is_regular_file(ec)) bugs.push_back(e.path().string());
  std::sort(bugs.begin(), bugs.end());
  set_->known_bug_files_.insert(set_->known_bug_files_.end(), bugs.begin(), bugs.end());
}

std::shared_ptr<const RuleSet> RuleSetBuilder::Finish() {
  AddSiteTables();
  std::vector<bool> drop(set_->causes_.size(), false);
  CheckReferences(drop);
  FindExplainsCycles(drop);
  DropCauses(drop);
  InheritExplains();
  ResolveCauseSignatures();
  KeepVocabularyRows();
  std::unique_ptr<RuleSet::Compiled> c = Compile();
  c->owner = set_.get();
  set_->compiled_ = std::move(c);
  return set_;
}

// An error that a table row names (a cuDNN status, a CUDA runtime error, a program's own message)
// and the abort or crash that follows it are one failure, as they are where a written cause of
// the row's id names the error: a table's cause explains, after an error of its own, what the
// written cause of its taxonomy id explains of the ids the taxonomy marks `follows_errors`
// (LinkExplains applies them). Nothing else: a written cause that knows the same line is not made
// its symptom. Run after the faulty causes are dropped, so that every id it adds is loaded.
void RuleSetBuilder::InheritExplains() {
  RuleSet& rs = *set_;
  for (CauseRule& c : rs.causes_) {
    if (!c.from_table) continue;
    const std::string own = rs.TaxonomyIdOf(c.id);
    const int written = rs.FindCause(own);
    if (written < 0) continue;
    for (const std::string& id : rs.causes_[size_t(written)].explains) {
      const bool follows = std::find(rs.follows_errors_.begin(), rs.follows_errors_.end(), id) !=
                           rs.follows_errors_.end();
      if (follows && id != own && rs.FindCause(id) >= 0) c.explains_after_error.push_back(id);
    }
  }
}

// References: every id a cause names must exist. A cause with a dangling reference is reported
// and dropped, so that the engine never reasons from half a rule.
void RuleSetBuilder::CheckReferences(std::vector<bool>& drop) {
  RuleSet& rs = *set_;
  for (size_t i = 0; i < rs.causes_.size(); ++i) {
    const CauseRule& c = rs.causes_[i];
    const CauseRefs& refs = cause_refs_[i];
    if (!rs.taxonomy_.empty() && rs.TaxonomyIdOf(c.id) == c.id &&
        std::find(rs.taxonomy_.begin(), rs.taxonomy_.end(), c.id) == rs.taxonomy_.end()) {
      Fault(c.file, c.line, "cause '" + c.id + "' is under no taxonomy id ([[taxonomy]] lists them)");
      drop[i] = true;
    }
    auto check_sigs = [&](const std::vector<std::string>& ids, const char* what) {
      for (const auto& id : ids) {
        if (rs.FindSignature(id) < 0) {
          Fault(c.file, refs.requires_line ? refs.requires_line : c.line,
                "cause '" + c.id + "': " + what + " names unknown signature '" + id + "'");
          drop[i] = true;
        }
      }
    };
    check_sigs(c.requires_any, "requires.any");
    check_sigs(c.requires_all, "requires.all");
    check_sigs(c.requires_none, "requires.none");
    for (const auto& id : c.explains) {
      if (rs.FindSignature(id) < 0 && rs.FindCause(id) < 0) {
        Fault(c.file, refs.explains_line ? refs.explains_line : c.line,
              "cause '" + c.id + "': explains names unknown cause or signature '" + id + "'");
        drop[i] = true;
      }
    }
  }
}

// Explains cycles: an edge A -> B when A explains B's id or a signature B requires; each cause
// of a cycle is reported and dropped.
void RuleSetBuilder::FindExplainsCycles(std::vector<bool>& drop) {
  RuleSet& rs = *set_;
  const size_t n = rs.causes_.size();
  std::vector<std::vector<size_t>> edges(n);
  for (size_t a = 0; a < n; ++a) {
    for (const auto& x : rs.causes_[a].explains) {
      for (size_t b = 0; b < n; ++b) {
        if (a == b && rs.causes_[b].id != x) continue;
        const CauseRule& cb = rs.causes_[b];
        bool hit = cb.id == x ||
                   std::find(cb.requires_any.begin(), cb.requires_any.end(), x) != cb.requires_any.end() ||
                   std::find(cb.requires_all.begin(), cb.requires_all.end(), x) != cb.requires_all.end();
        if (hit) edges[a].push_back(b);
      }
    }
  }
  std::vector<int> state(n, 0);  // 0 new, 1 on stack, 2 done
  std::vector<size_t> stack;
  std::function<void(size_t)> dfs = [&](size_t v) {
    state[v] = 1;
    stack.push_back(v);
    for (size_t w : edges[v]) {
      if (state[w] == 1) {
        // The cycle is the stack from w to v.
        std::string path;
        auto from = std::find(stack.begin(), stack.end(), w);
        for (auto it = from; it != stack.end(); ++it) path += rs.causes_[*it].id + " -> ";
        path += rs.causes_[w].id;
        const CauseRule& c = rs.causes_[v];
        const int line = cause_refs_[v].explains_line ? cause_refs_[v].explains_line : c.line;
        Fault(c.file, line, "explains cycle: " + path);
        for (auto it = from; it != stack.end(); ++it) drop[*it] = true;
      } else if (state[w] == 0) {
        dfs(w);
      }
    }
    stack.pop_back();
    state[v] = 2;
  };
  for (size_t v = 0; v < n; ++v)
    if (state[v] == 0) dfs(v);
}

void RuleSetBuilder::DropCauses(const std::vector<bool>& drop) {
  RuleSet& rs = *set_;
  if (std::find(drop.begin(), drop.end(), true) == drop.end()) return;
  std::vector<CauseRule> kept;
  for (size_t i = 0; i < rs.causes_.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(rs.causes_[i]));
  rs.causes_ = std::move(kept);
  rs.cause_index_.clear();
  for (size_t i = 0; i < rs.causes_.size(); ++i) rs.cause_index_[rs.causes_[i].id] = int(i);
}

// Each cause's signature ids as indices; a vocabulary's cause behaves as the written cause of its
// taxonomy id does in time.
void RuleSetBuilder::ResolveCauseSignatures() {
  RuleSet& rs = *set_;
  for (auto& c : rs.causes_) {
    auto resolve = [&rs](const std::vector<std::string>& ids, std::vector<int>& out) {
      out.clear();
      for (const auto& id : ids) out.push_back(rs.FindSignature(id));
    };
    resolve(c.requires_any, c.any_signatures);
    resolve(c.requires_all, c.all_signatures);
    resolve(c.requires_none, c.none_signatures);
  }
  rs.causes_requiring_.assign(rs.signatures_.size(), {});
  for (size_t ci = 0; ci < rs.causes_.size(); ++ci) {
    const CauseRule& c = rs.causes_[ci];
    for (const auto* list : {&c.any_signatures, &c.all_signatures})
      for (int s : *list) {
        if (s < 0) continue;  // a signature that is not loaded: never hit
        auto& causes = rs.causes_requiring_[size_t(s)];
        if (causes.empty() || causes.back() != int(ci)) causes.push_back(int(ci));
      }
  }

  for (auto& c : rs.causes_) {
    for (const auto& d : c.defers_to) {
      const int base = rs.FindCause(d);
      if (base >= 0 && rs.causes_[size_t(base)].strikes_in_flight) c.strikes_in_flight = true;
    }
  }
}

// Vocabulary rows: their taxonomy ids, and the signature each became.
void RuleSetBuilder::KeepVocabularyRows() {
  RuleSet& rs = *set_;
  for (auto& table : rs.vocabularies_) {
    std::vector<VocabularyRow> kept;
    for (auto& row : table.rows) {
      if (!rs.taxonomy_.empty() && row.cause != "unclassified" &&
          std::find(rs.taxonomy_.begin(), rs.taxonomy_.end(), row.cause) == rs.taxonomy_.end()) {
        Fault(table.file, row.line, "vocabulary '" + table.id + "': row '" + row.name +
                                        "' names a cause outside the taxonomy: '" + row.cause + "'");
        continue;
      }
      row.signature = rs.FindSignature(detail::VocabularySignatureId(table.id, row.name));
      kept.push_back(std::move(row));
    }
    table.rows = std::move(kept);
  }
}

// The matcher: the literals of every signature (for the prefilter's scanners and its Hyperscan
// database), and the signatures without a literal as one RE2 set.
namespace {

// The forms a signature's literal is looked for in: in lower case (unless the signature keeps
// case) and, where it holds `"` or `\`, also as a raw JSON line shows it, escaped.
std::vector<std::string> LiteralForms(const std::string& literal, bool keep_case) {
  std::string text = literal;
  if (!keep_case)
    for (auto& ch : text) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  std::string escaped;
  for (char ch : text) {
    if (ch == '"' || ch == '\\') escaped += '\\';
    escaped += ch;
  }
  std::vector<std::string> forms{std::move(text)};
  if (escaped != forms[0]) forms.push_back(std::move(escaped));
  return forms;
}

// Whether a hit of `s` may carry a `pid` capture: a group of its pattern named so (a text that
// only looks like one errs the safe way), or a fixed capture.
bool CapturesPid(const SignatureRule& s) {
  return s.fixed_captures.count("pid") > 0 || s.pattern.find("(?P<pid>") != std::string::npos ||
         s.pattern.find("(?<pid>") != std::string::npos;
}

}  // namespace

std::unique_ptr<RuleSet::Compiled> RuleSetBuilder::Compile() {
  RuleSet& rs = *set_;
  auto c = std::make_unique<RuleSet::Compiled>();
  // A literal is looked for in any ASCII case (lower-cased here), or, for a signature whose
  // literals keep their case, as it is written: the same text both ways is two literals.
  std::vector<std::string> literals;
  std::vector<uint8_t> keep_case;
  std::map<std::pair<std::string, bool>, size_t> literal_index;
  RE2::Options opts = detail::MatchOptions();
  c->regex = std::make_unique<RuleSet::Compiled::LazyRegex[]>(rs.signatures_.size());
  c->starts_lines.resize(rs.signatures_.size());
  for (size_t i = 0; i < rs.signatures_.size(); ++i)
    c->starts_lines[i] = MatchesStartLines(rs.signatures_[i].pattern);
  for (size_t i = 0; i < rs.signatures_.size(); ++i) {
    const SignatureRule& s = rs.signatures_[i];
    if (s.site) continue;
    if (s.kind == ScopeKind::kFragment) {
      c->fragment_only.push_back(int(i));
      continue;
    }
    if (s.error_level) c->error_level.push_back(int(i));
    if (s.literals.empty()) {
      c->unfiltered.push_back(int(i));
      continue;
    }
    for (const auto& lit : s.literals) {
      for (std::string& form : LiteralForms(lit, s.literals_keep_case)) {
        auto [it, fresh] =
            literal_index.emplace(std::make_pair(form, s.literals_keep_case), literals.size());
        if (fresh) {
          literals.push_back(form);
          keep_case.push_back(s.literals_keep_case);
          c->literal_signatures.emplace_back();
        }
        c->literal_signatures[it->second].push_back(int(i));
      }
    }
  }
  {
    std::vector<std::string> keep, benign;
    std::vector<uint8_t> keep_case_of_keep, keep_case_of_benign;
    for (size_t li = 0; li < literals.size(); ++li) {
      bool only_benign = true;
      for (int sgi : c->literal_signatures[li])
        only_benign &= rs.signatures_[size_t(sgi)].benign && !rs.signatures_[size_t(sgi)].fatal &&
                       !rs.signatures_[size_t(sgi)].restart;
      (only_benign ? benign : keep).push_back(literals[li]);
      (only_benign ? keep_case_of_benign : keep_case_of_keep).push_back(keep_case[li]);
      // LiteralScanner ignores literals under kMinLiteral bytes: only the others promise a keep.
      c->db_literals.push_back(literals[li]);
      c->db_keep_case.push_back(keep_case[li]);
      c->db_flags.push_back(only_benign ? ingest::kWeakHit
                            : literals[li].size() >= detail::LiteralScanner::kMinLiteral ? ingest::kKeepHit
                                                                                         : 0u);
    }
    c->keep_scanner = detail::LiteralScanner(keep, keep_case_of_keep);
    c->benign_scanner = detail::LiteralScanner(benign, keep_case_of_benign);
    // The ingest pipeline's multi-line starters, in any case.
    for (std::string_view st : ingest::MultiLineStarterLiterals()) {
      c->db_literals.emplace_back(st);
      c->db_keep_case.push_back(0);
      c->db_flags.push_back(0);
    }
  }
  if (!c->unfiltered.empty()) {
    c->unfiltered_set = std::make_unique<RE2::Set>(opts, RE2::UNANCHORED);
    for (int s : c->unfiltered) {
      std::string err;
      if (c->unfiltered_set->Add(rs.signatures_[size_t(s)].pattern, &err) >= 0)
        c->set_to_signature.push_back(s);
    }
    if (!c->unfiltered_set->Compile()) {
      // Too large for one set: fall back to trying each regex (still linear per regex).
      c->unfiltered_set.reset();
    }
  }
  c->decisive =
      CompileSubset([](const SignatureRule& s) { return s.fatal || s.benign || s.restart; });
  c->ended = CompileSubset(
      [](const SignatureRule& s) { return s.benign || s.restart || (s.fatal && CapturesPid(s)); });
  return c;
}

RuleSet::Compiled::Subset RuleSetBuilder::CompileSubset(
    const std::function<bool(const SignatureRule&)>& in) const {
  const RuleSet& rs = *set_;
  RuleSet::Compiled::Subset sub;
  sub.member.assign(rs.signatures_.size(), false);
  std::vector<std::string> literals;
  std::vector<uint8_t> keep_case;
  std::map<std::pair<std::string, bool>, size_t> literal_index;
  for (size_t i = 0; i < rs.signatures_.size(); ++i) {
    const SignatureRule& s = rs.signatures_[i];
    if (!in(s) || s.kind == ScopeKind::kFragment) continue;
    sub.member[i] = true;
    // The site matcher reports a table's rows under their signature's id, whatever made it.
    sub.whole_match |= s.site || s.id.rfind("site.", 0) == 0;
    sub.whole_match_of_lines |= s.error_level;
    sub.chained |= s.exception != ScopeException::kAny;
    if (s.site) continue;
    if (s.literals.empty()) {
      sub.unfiltered.push_back(int(i));
      continue;
    }
    // The literals in the forms Compile() gives the whole match's scan.
    for (const auto& lit : s.literals) {
      for (std::string& form : LiteralForms(lit, s.literals_keep_case)) {
        if (form.size() < detail::LiteralScanner::kMinLiteral) {
          sub.short_literals.push_back({std::move(form), s.literals_keep_case, int(i)});
          continue;
        }
        auto [it, fresh] =
            literal_index.emplace(std::make_pair(form, s.literals_keep_case), literals.size());
        if (fresh) {
          literals.push_back(form);
          keep_case.push_back(s.literals_keep_case);
          sub.literal_signatures.emplace_back();
        }
        sub.literal_signatures[it->second].push_back(int(i));
      }
    }
  }
  sub.scanner = detail::LiteralScanner(literals, keep_case);
  return sub;
}

bool MatchesStartLines(std::string_view p) {
  // The flag groups first: "(?m)", "(?im)", "(?s-m)"...
  bool multi_line = false;
  while (p.size() > 2 && p[0] == '(' && p[1] == '?') {
    const size_t close = p.find(')');
    if (close == std::string_view::npos) return false;
    const std::string_view flags = p.substr(2, close - 2);
    if (flags.empty() || flags.find_first_not_of("imsU-") != std::string_view::npos) return false;
    const size_t minus = flags.find('-');
    if (flags.substr(0, minus).find('m') != std::string_view::npos) multi_line = true;
    if (minus != std::string_view::npos && flags.find('m', minus) != std::string_view::npos)
      multi_line = false;
    p.remove_prefix(close + 1);
  }
  if (!multi_line || p.empty() || p[0] != '^') return false;
  int depth = 0;
  for (size_t i = 1; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      ++i;
    } else if (c == '[') {
      // A class, to its closing bracket (one right after the opening, or after '^', is a member).
      size_t j = i + 1;
      if (j < p.size() && p[j] == '^') ++j;
      if (j < p.size() && p[j] == ']') ++j;
      for (; j < p.size() && p[j] != ']'; ++j) {
        if (p[j] == '[') return false;  // "[[:alpha:]]": not told apart here
        if (p[j] == '\\') ++j;
      }
      if (j >= p.size()) return false;
      i = j;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth < 0) return false;
    } else if (c == '|' && depth == 0) {
      return false;
    }
  }
  return depth == 0;
}

std::string PrefilterBackend() { return detail::LineFinderBackend(); }

namespace {

// The bytes of the rule files `folder` holds of each kind: the TOML read whole at load or on
// first use (its *.toml, sites/remedies.toml, known_bugs/*.toml) and the error-site tables
// (sites/*.tsv, mapped, their rows read on first use).
struct PackBytes {
  uintmax_t toml = 0;
  uintmax_t tables = 0;
};
void AddPackBytes(const std::string& folder, PackBytes& bytes) {
  std::error_code ec;
  auto add = [&](const fs::path& dir, const char* ext, uintmax_t& sum) {
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ext && e.is_regular_file(ec)) sum += e.file_size(ec);
  };
  if (!fs::is_directory(folder, ec)) return;
  add(folder, ".toml", bytes.toml);
  if (fs::is_directory(fs::path(folder) / "sites", ec)) {
    add(fs::path(folder) / "sites", ".toml", bytes.toml);
    add(fs::path(folder) / "sites", ".tsv", bytes.tables);
  }
  if (fs::is_directory(fs::path(folder) / "known_bugs", ec))
    add(fs::path(folder) / "known_bugs", ".toml", bytes.toml);
}

std::string Mib(uintmax_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

RuleLoadResult LoadRules(const std::vector<std::string>& folders) {
  RuleLoadResult out;
  // A pack past the limits is refused before anything of it is read: what loading, checking
  // and a reload of the daemon hold in memory grows with it (docs/rule-format.md, "Limits").
  PackBytes bytes;
  for (const auto& f : folders) AddPackBytes(f, bytes);
  if (bytes.toml > kMaxRuleTomlBytes || bytes.tables > kMaxSiteTableBytes) {
    const bool toml = bytes.toml > kMaxRuleTomlBytes;
    std::string where;
    for (const auto& f : folders) where += (where.empty() ? "" : ", ") + f;
    out.diagnostics.push_back(
        {where, 0,
         "the rule files are too large: " + Mib(toml ? bytes.toml : bytes.tables) + " of " +
             (toml ? "TOML rule files" : "error-site tables (sites/*.tsv)") +
             ", more than the " + Mib(toml ? kMaxRuleTomlBytes : kMaxSiteTableBytes) +
             " triage accepts; nothing was loaded"});
    return out;
  }
  RuleSetBuilder b(out.diagnostics);
  for (const auto& f : folders) b.LoadFolder(f);
  out.rules = b.Finish();
  return out;
}

}  // namespace triage::core

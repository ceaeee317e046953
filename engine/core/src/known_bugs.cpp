#include "triage/core/known_bugs.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <toml++/toml.h>

#include "triage/core/rules.h"
#include "triage/core/versions.h"

namespace triage::core {

struct KnownBugBase::Compiled {
  std::vector<std::vector<std::unique_ptr<RE2>>> match;  // [bug][regex]
};

KnownBugBase::KnownBugBase() : compiled_(std::make_unique<Compiled>()) {}
KnownBugBase::~KnownBugBase() = default;

namespace {

int LineOf(const toml::node& n) { return int(n.source().begin.line); }

// Reads one [[bug]] table; false (with faults said) when it cannot be used.
class EntryReader {
 public:
  EntryReader(const std::string& file, const toml::table& t, std::vector<RuleDiagnostic>& faults)
      : file_(file), t_(t), faults_(faults) {}

  bool Read(KnownBug& b) {
    b.file = file_;
    b.line = LineOf(t_);
    static const std::vector<std::string_view> kKeys = {
        "id",       "package",    "affected", "fixed_in", "fixed_commit", "issue", "pr",
        "match",    "causes",     "summary",  "workaround", "test_log",   "thread"};
    for (auto&& [k, v] : t_) {
      (void)v;
      if (std::find(kKeys.begin(), kKeys.end(), k.str()) == kKeys.end())
        Fault(int(k.source().begin.line), "bug: unknown key '" + std::string(k.str()) + "'");
    }
    String("id", b.id, true);
    String("package", b.package, true);
    b.package = NormalizePackage(b.package);
    String("affected", b.affected, true);
    String("fixed_in", b.fixed_in, false);
    String("fixed_commit", b.fixed_commit, false);
    String("issue", b.issue, true);
    String("pr", b.pr, false);
    String("summary", b.summary, true);
    String("workaround", b.workaround, false);
    String("test_log", b.test_log, false);
    Strings("match", b.match, true);
    Strings("causes", b.causes, false);
    Check(b);
    return ok_;
  }

 private:
  void Fault(int line, std::string message) {
    faults_.push_back({file_, line, std::move(message)});
    ok_ = false;
  }
  void String(std::string_view key, std::string& out, bool required) {
    const toml::node* n = t_.get(key);
    if (!n) {
      if (required) Fault(LineOf(t_), "bug: missing required key '" + std::string(key) + "'");
      return;
    }
    if (!n->is_string()) return Fault(LineOf(*n), "bug: '" + std::string(key) + "' must be a string");
    out = n->as_string()->get();
  }
  void Strings(std::string_view key, std::vector<std::string>& out, bool required) {
    const toml::node* n = t_.get(key);
    if (!n) {
      if (required) Fault(LineOf(t_), "bug: missing required key '" + std::string(key) + "'");
      return;
    }
    const toml::array* a = n->as_array();
    if (!a || a->empty() ||
        !std::all_of(a->begin(), a->end(), [](const toml::node& e) { return e.is_string(); }))
      return Fault(LineOf(*n), "bug: '" + std::string(key) + "' must be a non-empty array of strings");
    for (const auto& e : *a) out.push_back(e.as_string()->get());
  }
  void Check(const KnownBug& b) {
    if (!ok_) return;
    std::string error;
    if (!VersionRange::Parse(b.affected, &error)) Fault(LineOf(t_), "bug '" + b.id + "': affected: " + error);
    if (b.fixed_in.empty() && b.fixed_commit.empty())
      Fault(LineOf(t_), "bug '" + b.id + "': neither fixed_in nor fixed_commit is given");
    if (!b.fixed_in.empty() && !IsVersion(b.fixed_in))
      Fault(LineOf(t_), "bug '" + b.id + "': fixed_in '" + b.fixed_in + "' is no version");
    if (b.issue.rfind("https://", 0) != 0 || (!b.pr.empty() && b.pr.rfind("https://", 0) != 0))
      Fault(LineOf(t_), "bug '" + b.id + "': issue and pr must be https:// addresses");
  }

  const std::string& file_;
  const toml::table& t_;
  std::vector<RuleDiagnostic>& faults_;
  bool ok_ = true;
};

// Whether cause id `id` is `under` or one of its finer ids ("python.symbol_missing.name_only"
// under "python.symbol_missing").
bool Under(std::string_view id, std::string_view under) {
  return id == under || (id.size() > under.size() && id.substr(0, under.size()) == under &&
                         id[under.size()] == '.');
}

// Whether one of `texts` names `package` (NormalizePackage's form), in any of the ways a message
// writes it: "flash_attn", "flash-attn", "llama.cpp", ggml for llama.cpp.
bool Names(const std::vector<const std::string*>& texts, const std::string& package) {
  std::vector<std::string> words{package};
  for (char sep : {'_', '.', ' '}) {
    std::string w = package;
    std::replace(w.begin(), w.end(), '-', sep);
    words.push_back(w);
  }
  if (package == "llama-cpp") words.insert(words.end(), {"ggml", "llama"});
  if (package == "torch") words.push_back("pytorch");
  if (package == "driver") words.insert(words.end(), {"nvidia", "nvml", "xid"});
  for (const std::string* t : texts) {
    std::string lower(*t);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    for (const auto& w : words)
      if (lower.find(w) != std::string::npos) return true;
  }
  return false;
}

int StatusOrder(const std::string& status) {
  return status == "affected" ? 0 : status == "fixed" ? 1 : 2;
}

}  // namespace

std::shared_ptr<const KnownBugBase> KnownBugBase::Load(const std::vector<std::string>& files,
                                                       std::vector<RuleDiagnostic>& faults) {
  std::shared_ptr<KnownBugBase> base(new KnownBugBase());
  std::map<std::string, size_t> index;
  for (const auto& file : files) {
    toml::parse_result res = toml::parse_file(file);
    if (!res) {
      faults.push_back({file, int(res.error().source().begin.line),
                        "TOML syntax error: " + std::string(res.error().description())});
      continue;
    }
    for (auto&& [k, v] : res.table()) {
      const toml::array* arr = v.as_array();
      if (k.str() != "bug" || !arr) {
        faults.push_back({file, int(k.source().begin.line),
                          "unknown top-level entry '" + std::string(k.str()) + "' (expected [[bug]])"});
        continue;
      }
      for (const auto& e : *arr) {
        const toml::table* t = e.as_table();
        KnownBug b;
        if (!t) {
          faults.push_back({file, LineOf(e), "'bug' entries must be tables"});
          continue;
        }
        if (!EntryReader(file, *t, faults).Read(b)) continue;
        std::vector<std::unique_ptr<RE2>> regexes;
        RE2::Options opts;
        opts.set_log_errors(false);
        for (const auto& m : b.match) {
          auto re = std::make_unique<RE2>(m, opts);
          if (!re->ok()) {
            faults.push_back({file, b.line, "bug '" + b.id + "': match does not compile: " + re->error()});
            regexes.clear();
            break;
          }
          regexes.push_back(std::move(re));
        }
        if (regexes.empty()) continue;
        if (auto it = index.find(b.id); it != index.end()) {
          base->bugs_[it->second] = std::move(b);
          base->compiled_->match[it->second] = std::move(regexes);
        } else {
          index[b.id] = base->bugs_.size();
          base->bugs_.push_back(std::move(b));
          base->compiled_->match.push_back(std::move(regexes));
        }
      }
    }
  }
  return base;
}

const KnownBug* KnownBugBase::Find(std::string_view id) const {
  for (const auto& b : bugs_)
    if (b.id == id) return &b;
  return nullptr;
}

std::optional<KnownBugMatch> KnownBugBase::Match(size_t index, const Cause& cause,
                                                 const std::vector<PackageVersion>& versions,
                                                 const std::vector<std::string>& packages) const {
  const KnownBug& b = bugs_[index];
  if (!b.causes.empty() && std::none_of(b.causes.begin(), b.causes.end(), [&](const std::string& c) {
        return Under(cause.cause, c);
      }))
    return std::nullopt;
  std::vector<const std::string*> texts;
  for (const auto& ev : cause.evidence) texts.push_back(&ev.text);
  for (const auto& sym : cause.symptoms)
    for (const auto& ev : sym.evidence) texts.push_back(&ev.text);
  for (const auto& re : compiled_->match[index]) {
    if (std::none_of(texts.begin(), texts.end(),
                     [&](const std::string* t) { return RE2::PartialMatch(*t, *re); }))
      return std::nullopt;
  }
  KnownBugMatch m{b.id,         b.package, "",        "",       "possible",   b.affected,
                  b.fixed_in,   b.fixed_commit, b.issue, b.pr, b.summary, b.workaround};
  // Without a version of its package, a bug's message names it only where the failure's words,
  // or the frames of the log's tracebacks, name that package too: many programs print the same
  // CUDA or loader message.
  texts.push_back(&cause.title);
  for (const auto& [key, value] : cause.captures) texts.push_back(&value);
  const bool named = std::find(packages.begin(), packages.end(), b.package) != packages.end() ||
                     Names(texts, b.package);
  if (!Judge(m, versions, named)) return std::nullopt;
  return m;
}

bool Judge(KnownBugMatch& m, const std::vector<PackageVersion>& versions, bool unknown_stands) {
  for (const auto& v : versions) {
    if (v.package != m.package) continue;
    m.version = v.version;
    m.version_from = v.from;
    const auto range = VersionRange::Parse(m.affected);
    if (range && range->Contains(v.version))
      m.status = "affected";
    else if (!m.fixed_in.empty() && CompareVersions(v.version, m.fixed_in) >= 0)
      m.status = "fixed";
    else
      return false;
    return true;
  }
  m.status = "possible";
  return unknown_stands;
}

std::string UpgradeAdvice(const KnownBugMatch& m) {
  std::string to = m.fixed_in.empty() ? "a build with the fix (" + (m.pr.empty() ? m.fixed_commit : m.pr) + ")"
                                      : m.fixed_in + " or later";
  std::string out = "Upgrade " + m.package + " to " + to + ": " + m.id + " is fixed there";
  if (!m.workaround.empty()) out += "; without upgrading: " + m.workaround;
  if (out.back() != '.') out += '.';
  return out;
}

namespace {

// Gives `cause` the known bugs `bugs`, the best first, and its remedy the upgrade for the first
// one its versions do not rule out (instead of what an earlier call put there).
void SetKnownBugs(Cause& cause, std::vector<KnownBugMatch> bugs) {
  if (!cause.known_bugs.empty() && cause.known_bugs.front().status != "fixed") {
    const std::string advice = UpgradeAdvice(cause.known_bugs.front()) + " ";
    if (cause.remedy.rfind(advice, 0) == 0) cause.remedy.erase(0, advice.size());
  }
  std::stable_sort(bugs.begin(), bugs.end(), [](const KnownBugMatch& a, const KnownBugMatch& b) {
    return StatusOrder(a.status) < StatusOrder(b.status);
  });
  if (bugs.size() > Cause::kMaxKnownBugs) bugs.resize(Cause::kMaxKnownBugs);
  cause.known_bugs = std::move(bugs);
  if (!cause.known_bugs.empty() && cause.known_bugs.front().status != "fixed")
    cause.remedy = UpgradeAdvice(cause.known_bugs.front()) + " " + cause.remedy;
}

}  // namespace

void MatchKnownBugs(const RuleSet& rules, Incident& incident) {
  const KnownBugBase* base = rules.known_bugs().get();
  for (Cause& cause : incident.causes) {
    std::vector<KnownBugMatch> bugs;
    if (base)
      for (size_t i = 0; i < base->bugs().size(); ++i)
        if (auto m = base->Match(i, cause, incident.versions, incident.packages))
          bugs.push_back(std::move(*m));
    SetKnownBugs(cause, std::move(bugs));
  }
}

void ReviseKnownBugs(Incident& incident) {
  for (Cause& cause : incident.causes) {
    if (cause.known_bugs.empty()) continue;
    std::vector<KnownBugMatch> bugs;
    for (KnownBugMatch m : cause.known_bugs)
      if (Judge(m, incident.versions, true)) bugs.push_back(std::move(m));
    SetKnownBugs(cause, std::move(bugs));
  }
}

std::vector<std::string> PackagesToLookUp(const Incident& incident) {
  std::vector<std::string> out;
  for (const auto& cause : incident.causes)
    for (const auto& m : cause.known_bugs)
      if (m.version.empty() && std::find(out.begin(), out.end(), m.package) == out.end() &&
          std::none_of(incident.versions.begin(), incident.versions.end(),
                       [&](const PackageVersion& v) { return v.package == m.package; }))
        out.push_back(m.package);
  return out;
}

}  // namespace triage::core

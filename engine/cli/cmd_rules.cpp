// `triage rules list|check|test`: inspect and validate rule packs.
#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "args.h"
#include "command.h"
#include "triage/core/analyzer.h"
#include "triage/core/config.h"
#include "triage/core/rules.h"
#include "triage/ingest/pipeline.h"
#include "triage/json.h"
#include "triage/terminal_text.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage rules list [--rules DIR...] [--json]\n"
    "       triage rules check [DIR...]\n"
    "       triage rules test FILE [--rules DIR...] [--json]\n\n"
    "list   every signature and cause in force: id, kind, file and line\n"
    "check  validate rule folders (default: the shipped packs, the configuration's folders and\n"
    "       --rules); prints 'file:line: message' per fault and exits 1 when there is one\n"
    "test   show which signatures fire on which lines of FILE and why, and which causes\n"
    "       they support\n\n"
    "The shipped packs are read from $TRIAGE_RULES_DIR, else share/triage/rules beside the binary's\n"
    "folder (/usr/bin/triage: /usr/share/triage/rules), else the source tree's rules/ (a binary in\n"
    "a build folder).\n\n";

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string Quoted(const std::string& s) {
  std::string o;
  o += '\'';
  o += s;
  o += '\'';
  return o;
}

std::vector<std::string> Folders(const Args& args, bool& ok) {
  ok = true;
  std::vector<std::string> folders{core::ShippedRulesDir()};
  auto config = LoadConfiguration(args.Get("config"));
  if (!config.ok()) {
    PrintError("config", config.status().message());
    ok = false;
    return folders;
  }
  return core::RuleFolders(config->rule_folders, args.GetAll("rules"));
}

std::vector<std::string> SignatureFlags(const core::SignatureRule& s) {
  std::vector<std::string> flags;
  if (s.fatal) flags.push_back("fatal");
  if (s.benign) flags.push_back("benign");
  if (s.restart) flags.push_back("restart");
  if (flags.empty()) flags.push_back("signal");
  return flags;
}

std::string ScopeOf(const core::SignatureRule& s) {
  std::string scope = ScopeKindName(s.kind);
  if (s.kind == core::ScopeKind::kAny || s.kind == core::ScopeKind::kTraceback)
    scope += std::string("/") + ScopeExceptionName(s.exception);
  return scope;
}

void StringArray(JsonWriter& w, const char* key, const std::vector<std::string>& values) {
  w.Key(key).BeginArray();
  for (const auto& v : values) w.String(v);
  w.EndArray();
}

// `rules list --json`: {"signatures": [...], "causes": [...], "knowledge": {...}, "files": [...]}.
std::string ListJson(const core::RuleSet& rules) {
  JsonWriter w;
  w.BeginObject().Key("signatures").BeginArray();
  for (const auto& s : rules.signatures()) {
    w.BeginObject().Key("id").String(s.id);
    StringArray(w, "flags", SignatureFlags(s));
    w.Key("scope").String(ScopeOf(s)).Key("strength").Double(s.strength);
    StringArray(w, "literals", s.literals);
    w.Key("file").String(s.file).Key("line").Int(s.line).EndObject();
  }
  w.EndArray().Key("causes").BeginArray();
  for (const auto& c : rules.causes()) {
    w.BeginObject().Key("id").String(c.id).Key("prior").Double(c.prior);
    StringArray(w, "requires_any", c.requires_any);
    StringArray(w, "requires_all", c.requires_all);
    StringArray(w, "requires_none", c.requires_none);
    w.Key("within").String(c.within == core::Within::kEvent ? "event" : "incident");
    StringArray(w, "explains", c.explains);
    w.Key("file").String(c.file).Key("line").Int(c.line).EndObject();
  }
  w.EndArray().Key("knowledge").BeginObject();
  w.Key("architectures").Uint(rules.arches().size());
  w.Key("library_minimums").Uint(rules.library_minimums().size());
  w.Key("driver_minimums").Uint(rules.driver_minimums().size());
  w.EndObject();
  StringArray(w, "files", rules.files());
  w.EndObject();
  return w.Take();
}

int List(const core::RuleSet& rules, bool json) {
  if (json) {
    std::cout << ListJson(rules) << "\n";
    return kExitOk;
  }
  std::cout << "Signatures (" << rules.signatures().size() << "):\n";
  for (const auto& s : rules.signatures()) {
    std::cout << "  " << s.id << "  [" << Join(SignatureFlags(s), ",") << "]  scope=" << ScopeOf(s)
              << "  strength=" << s.strength << "  literal="
              << (s.literals.empty() ? std::string("(none: tried on every event)")
                                     : Quoted(Join(s.literals, "' | '")))
              << "  " << s.file << ":" << s.line << "\n";
  }
  std::cout << "Causes (" << rules.causes().size() << "):\n";
  for (const auto& c : rules.causes()) {
    std::cout << "  " << c.id << "  prior=" << c.prior;
    if (!c.requires_any.empty()) std::cout << "  any=[" << Join(c.requires_any) << "]";
    if (!c.requires_all.empty()) std::cout << "  all=[" << Join(c.requires_all) << "]";
    if (!c.requires_none.empty()) std::cout << "  none=[" << Join(c.requires_none) << "]";
    if (c.within == core::Within::kEvent) std::cout << "  within=event";
    if (!c.explains.empty()) std::cout << "  explains=[" << Join(c.explains) << "]";
    std::cout << "  " << c.file << ":" << c.line << "\n";
  }
  std::cout << "Knowledge: " << rules.arches().size() << " architectures, "
            << rules.library_minimums().size() << " library minimums, "
            << rules.driver_minimums().size() << " driver minimums\n";
  std::cout << "Files:\n";
  for (const auto& f : rules.files()) std::cout << "  " << f << "\n";
  return kExitOk;
}

// What `rules test` found in a file: each signature hit, the causes they support and the
// incidents an analysis makes of it.
struct RuleTest {
  struct Hit {
    core::SignatureHit hit;
    std::string why;  // "final exception", "exception 2 of the chain", "fatal line" ...
  };
  struct Support {
    std::string cause;
    std::string verdict;  // "requirements hold", "requirements not met", "vetoed by requires.none"
    std::vector<std::string> hit, not_hit;
  };
  std::string source;
  size_t events = 0;
  std::vector<Hit> hits;
  std::vector<Support> causes;
  std::vector<core::Incident> incidents;
};

std::vector<RuleTest::Support> CausesSupported(const core::RuleSet& rules,
                                               const std::set<int>& hit_signatures) {
  std::vector<RuleTest::Support> out;
  auto hit = [&](const std::string& id) {
    int s = rules.FindSignature(id);
    return s >= 0 && hit_signatures.count(s);
  };
  for (const auto& c : rules.causes()) {
    RuleTest::Support support{c.id, "", {}, {}};
    for (const auto& id : c.requires_any) (hit(id) ? support.hit : support.not_hit).push_back(id);
    for (const auto& id : c.requires_all) (hit(id) ? support.hit : support.not_hit).push_back(id);
    if (support.hit.empty()) continue;
    bool holds = (c.requires_any.empty() ||
                  std::any_of(c.requires_any.begin(), c.requires_any.end(), hit)) &&
                 std::all_of(c.requires_all.begin(), c.requires_all.end(), hit);
    bool vetoed = std::any_of(c.requires_none.begin(), c.requires_none.end(), hit);
    support.verdict = vetoed ? "vetoed by requires.none" : holds ? "requirements hold" : "requirements not met";
    out.push_back(std::move(support));
  }
  return out;
}

Result<RuleTest> RunRuleTest(const std::shared_ptr<const core::RuleSet>& rules, const std::string& path) {
  auto src = ingest::OpenSource(path);
  if (!src.ok()) return src.status();
  RuleTest out;
  out.source = (*src)->name();
  std::set<int> hit_signatures;
  core::AnalyzerOptions options;
  options.starts_input = true;  // the file read whole, as `analyze` reads it
  core::Analyzer analyzer(rules, options);
  // Every line is decoded here (no prefilter), so that a rule is tested on what it sees.
  ingest::IngestCounters counters;
  Status st = ingest::IngestSource(**src, 0, {}, [&](ingest::Event&& ev) {
    ++out.events;
    for (auto& h : rules->Match(ev)) {
      std::string why;
      if (h.exception_index >= 0)
        why = h.final_exception ? "final exception" : "exception " + std::to_string(h.exception_index + 1) + " of the chain";
      else
        why = std::string(ingest::EventKindName(ev.kind)) + " line";
      hit_signatures.insert(h.signature);
      out.hits.push_back({std::move(h), std::move(why)});
    }
    analyzer.Add(ev, out.source);
  }, {}, &counters);
  if (!st.ok()) return st;
  analyzer.EndSource(0, counters.lines);
  out.causes = CausesSupported(*rules, hit_signatures);
  out.incidents = analyzer.Finish();
  return out;
}

std::string LiteralsOf(const core::SignatureRule& s, const char* none) {
  return s.literals.empty() ? std::string(none) : Quoted(Join(s.literals, "' | '"));
}

void PrintRuleTest(const core::RuleSet& rules, const RuleTest& t) {
  const std::string shown_name = TerminalText(t.source);
  std::cout << "Signature hits in " << shown_name << ":\n";
  for (const auto& [h, why] : t.hits) {
    const auto& s = rules.signatures()[size_t(h.signature)];
    std::cout << "  " << shown_name << ":" << h.line << "  " << s.id;
    if (s.fatal) std::cout << " [fatal]";
    if (s.benign) std::cout << " [benign]";
    if (s.restart) std::cout << " [restart]";
    std::cout << "  (" << why << "; literal " << LiteralsOf(s, "none") << ", pattern matched \""
              << TerminalText(h.matched) << "\")";
    if (!h.captures.empty()) {
      std::cout << "  captures:";
      for (const auto& [k, v] : h.captures) std::cout << " " << k << "=" << TerminalText(v);
    }
    std::cout << "\n";
  }
  std::cout << t.events << " events, " << t.hits.size() << " hits\n\nCauses these hits support:\n";
  for (const auto& c : t.causes)
    std::cout << "  " << c.cause << ": " << c.verdict << "  (hit: " << Join(c.hit)
              << (c.not_hit.empty() ? "" : "; not hit: " + Join(c.not_hit)) << ")\n";
  if (t.causes.empty()) std::cout << "  (none)\n";
  std::cout << "\nIncidents: " << t.incidents.size() << "\n";
  for (const auto& inc : t.incidents) {
    std::cout << "  " << TerminalText(inc.source) << ":" << inc.first_line << "-" << inc.last_line << ":";
    for (const auto& c : inc.causes) std::cout << " " << c.rank << "." << c.cause << "(" << c.score << ")";
    std::cout << "\n";
  }
}

// `rules test --json`: {"source", "events", "hits": [...], "causes": [...], "incidents": [...]}.
std::string RuleTestJson(const core::RuleSet& rules, const RuleTest& t) {
  JsonWriter w;
  w.BeginObject().Key("source").String(t.source).Key("events").Uint(t.events);
  w.Key("hits").BeginArray();
  for (const auto& [h, why] : t.hits) {
    const auto& s = rules.signatures()[size_t(h.signature)];
    w.BeginObject().Key("line").Uint(h.line).Key("signature").String(s.id);
    StringArray(w, "flags", SignatureFlags(s));
    w.Key("why").String(why).Key("matched").String(h.matched).Key("captures").BeginObject();
    for (const auto& [k, v] : h.captures) w.Key(k).String(v);
    w.EndObject().EndObject();
  }
  w.EndArray().Key("causes").BeginArray();
  for (const auto& c : t.causes) {
    w.BeginObject().Key("cause").String(c.cause).Key("verdict").String(c.verdict);
    StringArray(w, "hit", c.hit);
    StringArray(w, "not_hit", c.not_hit);
    w.EndObject();
  }
  w.EndArray().Key("incidents").BeginArray();
  for (const auto& inc : t.incidents) {
    w.BeginObject().Key("source").String(inc.source).Key("first_line").Uint(inc.first_line);
    w.Key("last_line").Uint(inc.last_line).Key("causes").BeginArray();
    for (const auto& c : inc.causes)
      w.BeginObject().Key("rank").Int(c.rank).Key("cause").String(c.cause).Key("score").Double(c.score).EndObject();
    w.EndArray().EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

int Test(const std::shared_ptr<const core::RuleSet>& rules, const std::string& path, bool json) {
  auto result = RunRuleTest(rules, path);
  if (!result.ok()) {
    PrintError(path, result.status().message());
    return kExitUsage;
  }
  if (json) std::cout << RuleTestJson(*rules, *result) << "\n";
  else PrintRuleTest(*rules, *result);
  return kExitOk;
}

int RunRules(const std::vector<std::string>& argv) {
  Args args;
  args.Option("rules", "DIR", "also load the rule files of DIR (repeatable)")
      .Option("config", "FILE", "read this configuration file instead of the default places")
      .Flag("json", "list and test: print one JSON document instead");
  if (!args.Parse(argv)) {
    PrintError("rules", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  const auto& pos = args.Positionals();
  if (pos.empty()) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string verb = pos[0];
  std::vector<std::string> rest(pos.begin() + 1, pos.end());
  bool ok = true;
  if (verb == "list") {
    if (!rest.empty()) {
      PrintError("rules list", "unexpected argument " + rest[0]);
      return kExitUsage;
    }
    auto folders = Folders(args, ok);
    if (!ok) return kExitUsage;
    auto loaded = core::LoadRules(folders);
    for (const auto& d : loaded.diagnostics) std::cerr << "triage: " << TerminalText(d.ToString()) << "\n";
    if (!loaded.rules) return kExitUsage;
    return List(*loaded.rules, args.Has("json"));
  }
  if (verb == "check") {
    std::vector<std::string> folders = rest;
    if (folders.empty()) folders = Folders(args, ok);
    else
      for (const auto& f : args.GetAll("rules")) folders.push_back(f);
    if (!ok) return kExitUsage;
    auto loaded = core::LoadRules(folders);
    if (loaded.rules)
      for (auto& d : loaded.rules->CompileAll()) loaded.diagnostics.push_back(std::move(d));
    for (const auto& d : loaded.diagnostics) std::cout << TerminalText(d.ToString()) << "\n";
    const size_t files = loaded.rules ? loaded.rules->files().size() : 0;
    const size_t nsig = loaded.rules ? loaded.rules->signatures().size() : 0;
    const size_t ncause = loaded.rules ? loaded.rules->causes().size() : 0;
    if (!loaded.diagnostics.empty()) {
      std::cout << loaded.diagnostics.size() << " fault(s) in " << Join(folders) << "\n";
      return kExitFound;
    }
    std::cout << "ok: " << files << " files, " << nsig << " signatures, " << ncause
              << " causes in " << Join(folders) << "\n";
    return kExitOk;
  }
  if (verb == "test") {
    if (rest.size() != 1) {
      PrintError("rules test", "needs exactly one FILE");
      return kExitUsage;
    }
    auto folders = Folders(args, ok);
    if (!ok) return kExitUsage;
    auto loaded = core::LoadRules(folders);
    for (const auto& d : loaded.diagnostics) std::cerr << "triage: " << TerminalText(d.ToString()) << "\n";
    if (!loaded.rules) return kExitUsage;
    return Test(loaded.rules, rest[0], args.Has("json"));
  }
  PrintError("rules", "unknown verb '" + verb + "' (list, check, test)");
  return kExitUsage;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("rules", "inspect and validate rule packs (list, check, test FILE)",
                        RunRules);

}  // namespace triage::cli

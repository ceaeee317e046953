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
#include "triage/terminal_text.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage rules list [--rules DIR...]\n"
    "       triage rules check [DIR...]\n"
    "       triage rules test FILE [--rules DIR...]\n\n"
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

int List(const core::RuleSet& rules) {
  std::cout << "Signatures (" << rules.signatures().size() << "):\n";
  for (const auto& s : rules.signatures()) {
    std::vector<std::string> flags;
    if (s.fatal) flags.push_back("fatal");
    if (s.benign) flags.push_back("benign");
    if (s.restart) flags.push_back("restart");
    if (flags.empty()) flags.push_back("signal");
    std::cout << "  " << s.id << "  [" << Join(flags, ",") << "]  scope=" << ScopeKindName(s.kind);
    if (s.kind == core::ScopeKind::kAny || s.kind == core::ScopeKind::kTraceback)
      std::cout << "/" << ScopeExceptionName(s.exception);
    std::cout << "  strength=" << s.strength << "  literal="
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

int Test(const std::shared_ptr<const core::RuleSet>& rules, const std::string& path) {
  auto src = ingest::OpenSource(path);
  if (!src.ok()) {
    PrintError(path, src.status().message());
    return kExitUsage;
  }
  const auto& sigs = rules->signatures();
  const std::string name = (*src)->name();
  const std::string shown_name = TerminalText(name);
  std::map<int, std::vector<uint64_t>> lines_by_sig;
  size_t events = 0, hits_total = 0;
  core::Analyzer analyzer(rules, {});
  std::cout << "Signature hits in " << shown_name << ":\n";
  // Every line is decoded here (no prefilter), so that a rule is tested on what it sees.
  ingest::IngestCounters counters;
  Status st = ingest::IngestSource(**src, 0, {}, [&](ingest::Event&& ev) {
    ++events;
    for (const auto& h : rules->Match(ev)) {
      ++hits_total;
      const auto& s = sigs[size_t(h.signature)];
      lines_by_sig[h.signature].push_back(h.line);
      std::string why;
      if (h.exception_index >= 0)
        why = h.final_exception ? "final exception" : "exception " + std::to_string(h.exception_index + 1) + " of the chain";
      else
        why = std::string(ingest::EventKindName(ev.kind)) + " line";
      std::cout << "  " << shown_name << ":" << h.line << "  " << s.id;
      if (s.fatal) std::cout << " [fatal]";
      if (s.benign) std::cout << " [benign]";
      if (s.restart) std::cout << " [restart]";
      std::cout << "  (" << why << "; literal "
                << (s.literals.empty() ? std::string("none") : Quoted(Join(s.literals, "' | '")))
                << ", pattern matched \"" << TerminalText(h.matched) << "\")";
      if (!h.captures.empty()) {
        std::cout << "  captures:";
        for (const auto& [k, v] : h.captures) std::cout << " " << k << "=" << TerminalText(v);
      }
      std::cout << "\n";
    }
    analyzer.Add(ev, name);
  }, {}, &counters);
  if (!st.ok()) {
    PrintError(path, st.message());
    return kExitUsage;
  }
  analyzer.EndSource(0, counters.lines);
  std::cout << events << " events, " << hits_total << " hits\n\nCauses these hits support:\n";
  bool any = false;
  for (const auto& c : rules->causes()) {
    std::vector<std::string> have, missing;
    auto hit = [&](const std::string& id) {
      int s = rules->FindSignature(id);
      return s >= 0 && lines_by_sig.count(s);
    };
    for (const auto& id : c.requires_any) (hit(id) ? have : missing).push_back(id);
    for (const auto& id : c.requires_all) (hit(id) ? have : missing).push_back(id);
    if (have.empty()) continue;
    any = true;
    bool holds = (c.requires_any.empty() ||
                  std::any_of(c.requires_any.begin(), c.requires_any.end(), hit)) &&
                 std::all_of(c.requires_all.begin(), c.requires_all.end(), hit);
    bool vetoed = std::any_of(c.requires_none.begin(), c.requires_none.end(), hit);
    std::cout << "  " << c.id << ": " << (vetoed ? "vetoed by requires.none" : holds ? "requirements hold" : "requirements not met")
              << "  (hit: " << Join(have) << (missing.empty() ? "" : "; not hit: " + Join(missing))
              << ")\n";
  }
  if (!any) std::cout << "  (none)\n";
  auto incidents = analyzer.Finish();
  std::cout << "\nIncidents: " << incidents.size() << "\n";
  for (const auto& inc : incidents) {
    std::cout << "  " << TerminalText(inc.source) << ":" << inc.first_line << "-" << inc.last_line << ":";
    for (const auto& c : inc.causes) std::cout << " " << c.rank << "." << c.cause << "(" << c.score << ")";
    std::cout << "\n";
  }
  return kExitOk;
}

int RunRules(const std::vector<std::string>& argv) {
  Args args;
  args.Option("rules", "DIR", "also load the rule files of DIR (repeatable)")
      .Option("config", "FILE", "read this configuration file instead of the default places");
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
    return List(*loaded.rules);
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
    return Test(loaded.rules, rest[0]);
  }
  PrintError("rules", "unknown verb '" + verb + "' (list, check, test)");
  return kExitUsage;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("rules", "inspect and validate rule packs (list, check, test FILE)",
                        RunRules);

}  // namespace triage::cli

// `triage bugs list|show ID|test FILE`: the known-bug base (docs/known-bugs.md).
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "command.h"
#include "triage/core/analyzer.h"
#include "triage/core/known_bugs.h"
#include "triage/core/report.h"
#include "triage/core/rules.h"
#include "triage/ingest/pipeline.h"
#include "triage/terminal_text.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage bugs list [--rules DIR...]\n"
    "       triage bugs show ID [--rules DIR...]\n"
    "       triage bugs test FILE [--rules DIR...]\n\n"
    "list   every known bug of the base: id, package, affected versions, fix\n"
    "show   one entry whole: what it matches, its fix, thread and workaround\n"
    "test   analyse FILE and show the versions it shows and the known bugs its causes fit\n\n"
    "The base is rules/known_bugs/*.toml of each rule folder (docs/known-bugs.md).\n\n";

std::string Fix(const core::KnownBug& b) {
  if (!b.fixed_in.empty()) return "fixed in " + b.fixed_in;
  return "fixed by " + (b.pr.empty() ? b.fixed_commit : b.pr);
}

int List(const core::KnownBugBase& base) {
  for (const auto& b : base.bugs())
    std::cout << b.id << "  " << b.package << " " << b.affected << "  " << Fix(b) << "  "
              << TerminalText(b.summary) << "\n";
  std::cout << base.bugs().size() << " known bugs\n";
  return kExitOk;
}

int Show(const core::KnownBugBase& base, const std::string& id) {
  const core::KnownBug* b = base.Find(id);
  if (!b) {
    PrintError("bugs show", "no known bug '" + TerminalText(id) + "'");
    return kExitUsage;
  }
  std::cout << b->id << ": " << TerminalText(b->summary) << "\n"
            << "  package:    " << b->package << " " << b->affected << "\n"
            << "  fix:        " << Fix(*b) << (b->fixed_commit.empty() ? "" : " (commit " + b->fixed_commit + ")")
            << "\n"
            << "  thread:     " << b->issue << "\n";
  if (!b->pr.empty()) std::cout << "  pull:       " << b->pr << "\n";
  for (const auto& m : b->match) std::cout << "  matches:    " << TerminalText(m) << "\n";
  for (const auto& c : b->causes) std::cout << "  cause:      " << c << "\n";
  if (!b->workaround.empty()) std::cout << "  workaround: " << TerminalText(b->workaround) << "\n";
  if (!b->test_log.empty()) std::cout << "  test log:   tests/data/known_bugs/" << b->test_log << "\n";
  std::cout << "  defined at: " << b->file << ":" << b->line << "\n";
  return kExitOk;
}

// Exit 0 when a cause of FILE fits a known bug, 1 when none does (as grep), 2 on bad input.
int Test(const std::shared_ptr<const core::RuleSet>& rules, const std::string& path) {
  auto src = ingest::OpenSource(path);
  if (!src.ok()) {
    PrintError(path, src.status().message());
    return kExitUsage;
  }
  core::AnalyzerOptions analysis;
  analysis.starts_input = true;  // the file read whole, as `analyze` reads it
  core::Analyzer analyzer(rules, analysis);
  ingest::IngestOptions options;
  rules->UsePrefilter(options, analyzer, rules->MakeLineFinder());
  ingest::IngestCounters counters;
  const std::string name = (*src)->name();
  Status st = ingest::IngestSource(**src, 0, options,
                                   [&](ingest::Event&& ev) { analyzer.Add(ev, name); }, {}, &counters);
  if (!st.ok()) {
    PrintError(path, st.message());
    return kExitUsage;
  }
  analyzer.EndSource(0, counters.lines);
  size_t found = 0;
  const auto incidents = analyzer.Finish();
  if (incidents.empty()) std::cout << "No incident: no failure found.\n";
  for (const auto& inc : incidents) {
    std::cout << TerminalText(inc.source) << ":" << inc.first_line << "-" << inc.last_line << "\n";
    std::cout << "  versions:";
    if (inc.versions.empty()) std::cout << " (none shown)";
    for (const auto& v : inc.versions)
      std::cout << " " << v.package << " " << TerminalText(v.version) << " (line " << v.line << ")";
    std::cout << "\n";
    for (const auto& c : inc.causes) {
      std::cout << "  " << c.rank << ". " << c.cause << "\n";
      if (c.known_bugs.empty()) std::cout << "     no known bug\n";
      for (const auto& kb : c.known_bugs) {
        ++found;
        std::cout << "     " << kb.status << ": " << TerminalText(core::KnownBugLine(kb)) << "\n";
      }
    }
  }
  return found ? kExitOk : kExitNoMatch;
}

int RunBugs(const std::vector<std::string>& argv) {
  Args args;
  args.Option("rules", "DIR", "also load the rule files of DIR (repeatable)")
      .Option("config", "FILE", "read this configuration file instead of the default places");
  if (!args.Parse(argv)) {
    PrintError("bugs", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  const auto& pos = args.Positionals();
  if (pos.empty() || (pos[0] == "list" && pos.size() != 1) || (pos[0] != "list" && pos.size() != 2)) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  auto config = LoadConfiguration(args.Get("config"));
  if (!config.ok()) {
    PrintError("config", config.status().message());
    return kExitUsage;
  }
  auto loaded = core::LoadRules(core::RuleFolders(config->rule_folders, args.GetAll("rules")));
  for (const auto& d : loaded.diagnostics) std::cerr << "triage: " << TerminalText(d.ToString()) << "\n";
  if (!loaded.rules) return kExitUsage;
  auto base = loaded.rules->known_bugs();
  if (pos[0] == "test") return Test(loaded.rules, pos[1]);
  if (!base) {
    PrintError("bugs", "no rule folder has a known_bugs/ base");
    return kExitUsage;
  }
  if (pos[0] == "list") return List(*base);
  if (pos[0] == "show") return Show(*base, pos[1]);
  PrintError("bugs", "unknown verb '" + TerminalText(pos[0]) + "' (list, show, test)");
  return kExitUsage;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("bugs", "the known-bug base: list, show ID, test FILE", RunBugs);

}  // namespace triage::cli

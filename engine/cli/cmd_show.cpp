// `triage show ID`: one stored incident, complete.
#include <iostream>

#include "history_common.h"
#include "pager.h"
#include "triage/core/report.h"
#include "triage/page/page.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage show ID [--json | --html] [--db PATH] [--config FILE]\n\n"
    "Shows one stored incident: its root causes in rank order, the evidence of its first and\n"
    "latest occurrences, symptoms, verifications, and its history. --json prints the incident\n"
    "object of `analyze --json` with fingerprint, occurrences, first_seen, last_seen, status,\n"
    "note, hosts, per_host and activity added. --html prints one self-contained HTML page (inline\n"
    "style and SVG, no script, nothing loaded from elsewhere) to attach to a ticket: the causes,\n"
    "evidence, remedies, verdicts, known bugs and, for a job, the timeline of its ranks.\n\n";

int RunShow(const std::vector<std::string>& argv) {
  Args args;
  args.Flag("json", "print the incident as JSON");
  args.Flag("html", "print the incident as one self-contained HTML page");
  AddDatabaseOptions(args);
  if (!args.Parse(argv)) {
    PrintError("show", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  if (args.Positionals().size() != 1) {
    PrintError("show", "needs one incident ID (see 'triage history')");
    return kExitUsage;
  }
  auto id = ParseIncidentId(args.Positionals()[0]);
  if (!id) {
    PrintError("show", "'" + args.Positionals()[0] + "' is not an incident ID");
    return kExitUsage;
  }
  auto store = OpenDatabase("show", args, /*read_only=*/true);
  if (!store) return kExitUsage;
  auto stored = store->GetIncident(*id);
  if (!stored.ok()) {
    PrintError("show", stored.status().message());
    return kExitUsage;
  }
  if (args.Has("json") && args.Has("html")) {
    PrintError("show", "--json and --html exclude each other");
    return kExitUsage;
  }
  if (args.Has("html")) {
    std::cout << page::IncidentDocument(*stored);
    return kExitOk;
  }
  if (args.Has("json")) {
    std::cout << store::StoredIncidentJson(*stored) << "\n";
    return kExitOk;
  }
  const auto& s = stored->summary;
  const size_t width = TerminalWidth();
  Pager pager(!args.Has("no-pager"));
  std::cout << "Incident " << s.id << " (" << TerminalText(s.status) << ")";
  if (!s.note.empty()) std::cout << ", note: " << TerminalText(s.note);
  std::cout << "\n  seen " << s.occurrences << (s.occurrences == 1 ? " time" : " times")
            << ", first " << TerminalText(s.first_seen) << ", last " << TerminalText(s.last_seen) << "\n"
            << "  fingerprint " << TerminalText(s.fingerprint) << "\n";
  if (!stored->hosts.empty()) {
    std::cout << "  on " << s.hosts << (s.hosts == 1 ? " host:" : " hosts:");
    for (const auto& h : stored->hosts) std::cout << " " << TerminalText(h.host) << " (" << h.occurrences << ")";
    std::cout << "\n";
  }
  for (const auto& a : stored->activity) {
    std::cout << "  " << TerminalText(a.time) << " " << TerminalText(a.action);
    if (!a.note.empty()) std::cout << ": " << TerminalText(a.note);
    std::cout << "\n";
  }
  std::cout << "\n";
  std::cout << core::ReportText({stored->incident}, core::TextOptions{args.color(), width});
  return kExitOk;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("show", "one stored incident: causes, evidence, verifications", RunShow);

}  // namespace triage::cli

// `triage resolve ID`: mark a stored incident resolved; it reopens if it recurs.
#include <iostream>

#include "history_common.h"
#include "triage/daemon/notify.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage resolve ID [--note TEXT] [--db PATH] [--config FILE]\n\n"
    "Marks an incident resolved, with an optional note (what fixed it). If the same failure\n"
    "is seen again the incident reopens, its count going on. With [notify] configured, the\n"
    "resolution is sent there (PagerDuty's resolve, Alertmanager's endsAt, event \"resolved\").\n\n";

int RunResolve(const std::vector<std::string>& argv) {
  Args args;
  args.Option("note", "TEXT", "what was done about it");
  AddDatabaseOptions(args);
  if (!args.Parse(argv)) {
    PrintError("resolve", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  if (args.Positionals().size() != 1) {
    PrintError("resolve", "needs one incident ID (see 'triage history')");
    return kExitUsage;
  }
  auto id = ParseIncidentId(args.Positionals()[0]);
  if (!id) {
    PrintError("resolve", "'" + args.Positionals()[0] + "' is not an incident ID");
    return kExitUsage;
  }
  auto store = OpenDatabase("resolve", args, /*read_only=*/false);
  if (!store) return kExitUsage;
  Status s = store->Resolve(*id, args.Get("note").value_or(""));
  if (!s.ok()) {
    PrintError("resolve", s.message());
    return kExitUsage;
  }
  std::cout << "Incident " << *id << " resolved.\n";
  // The resolution goes where the incident's notifications went; failing to send it leaves the
  // incident resolved all the same.
  auto config = core::LoadConfig(args.Get("config"));
  if (!config.ok()) return kExitOk;  // OpenDatabase read it just now; nothing to send by
  auto stored = store->GetIncident(*id);
  Status sent = stored.ok() ? daemon::NotifyResolved(*config, stored->incident) : stored.status();
  if (!sent.ok()) PrintError("resolve", "the resolution was not sent: " + sent.message());
  return kExitOk;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("resolve", "mark an incident resolved (it reopens if it recurs)",
                        RunResolve);

}  // namespace triage::cli

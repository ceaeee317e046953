// `triage verify ID`: runs the verifiers of a stored incident's root causes on this host, stores
// the verdicts (the latest per cause, verifier and host is kept) and shows the incident with them.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "command.h"
#include "triage/core/config.h"
#include "triage/core/report.h"
#include "triage/core/verifier.h"
#include "triage/store/store.h"
#include "triage/verifiers/runner.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage verify [OPTIONS] ID\n\n"
    "Confirms or refutes each root cause of stored incident ID with live checks on this host\n"
    "(each in its own process with a deadline), stores the verdicts and shows the incident with\n"
    "them, re-ranked: a confirmed cause rises, a refuted one falls below every cause not refuted.\n\n"
    "Exit codes: 0 verified; 2 bad usage, unknown incident or an unreadable database.\n\n";

int RunVerify(const std::vector<std::string>& argv) {
  Args args;
  args.Flag("json", "print the incident as `analyze --json` does")
      .Option("db", "PATH", "the database (default: TRIAGE_DB, [store] path, the state folder)")
      .Option("config", "FILE", "read this configuration file instead of the default places")
      .Flag("trust-log-paths",
            "let verifiers run interpreters named by the log when owned by root or you");
  if (!args.Parse(argv)) {
    PrintError("verify", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  if (args.Positionals().size() != 1) {
    PrintError("verify", "needs one incident ID (see 'triage verify --help')");
    return kExitUsage;
  }
  const std::string& id_text = args.Positionals()[0];
  char* end = nullptr;
  long long id = std::strtoll(id_text.c_str(), &end, 10);
  if (id_text.empty() || *end || id <= 0) {
    PrintError("verify", "not an incident ID: '" + id_text + "'");
    return kExitUsage;
  }
  auto config = LoadConfiguration(args.Get("config"));
  if (!config.ok()) {
    PrintError("config", config.status().message());
    return kExitUsage;
  }
  const std::string path = core::ResolveDbPath(args.Get("db"), *config);
  store::StoreOptions options;
  options.create = false;  // verifying needs an incident that exists
  auto db = store::Store::Open(path, options);
  if (!db.ok()) {
    PrintError("verify", db.status().message());
    return kExitUsage;
  }
  auto stored = db->GetIncident(id);
  if (!stored.ok()) {
    PrintError("verify", stored.status().message());
    return kExitUsage;
  }
  core::Incident incident = std::move(stored->incident);
  for (auto& cause : incident.causes) cause.verifications.clear();  // show this run's verdicts
  auto runner = verifiers::MakeVerificationRunner(
      verifiers::VerifyConfigFrom(*config, args.Has("trust-log-paths")));
  runner->VerifyIncident(incident);
  for (const auto& cause : incident.causes) {
    if (cause.verifications.empty()) continue;
    if (Status st = db->AddVerifications(id, cause.cause, cause.verifications); !st.ok()) {
      PrintError(path, st.message());
      return kExitUsage;
    }
  }
  core::ApplyVerdicts(incident);
  std::vector<core::Incident> shown;
  shown.push_back(std::move(incident));
  if (args.Has("json")) {
    std::string doc = core::ReportJson(shown) + "\n";
    std::fwrite(doc.data(), 1, doc.size(), stdout);
  } else {
    std::cout << core::ReportText(shown, args.color());
  }
  return kExitOk;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("verify", "run the verifiers for a stored incident on this host", &RunVerify);

}  // namespace triage::cli

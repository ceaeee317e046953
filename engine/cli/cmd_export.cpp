// `triage export`: stored incidents as JSON lines, for a fleet's log pipeline.
#include <cstdio>
#include <ctime>
#include <iostream>

#include "history_common.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage export [--since WHEN] [--until WHEN] [--db PATH] [--config FILE]\n\n"
    "Prints the stored incidents (those seen between the two; all without them), oldest\n"
    "first, one JSON object per line: the incident object of `analyze --json` with\n"
    "fingerprint, occurrences, first_seen, last_seen, status and note added. WHEN is as\n"
    "systemd.time(7) writes it: 30m, 12h, 2d, -2h, '2h ago', today, yesterday (UTC midnights), or\n"
    "an ISO 8601 date or time (a zone applied).\n\n";

int RunExport(const std::vector<std::string>& argv) {
  Args args;
  args.Option("since", "WHEN", "only incidents seen since: 30m, 12h, 2d, -2h, today, yesterday or an ISO 8601 time")
      .Option("until", "WHEN", "only incidents first seen up to then (the forms of --since)");
  AddDatabaseOptions(args);
  if (!args.Parse(argv)) {
    PrintError("export", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  if (!args.Positionals().empty()) {
    PrintError("export", "unexpected argument " + args.Positionals().front());
    return kExitUsage;
  }
  std::optional<std::string> since;
  if (auto s = args.Get("since")) {
    auto t = store::ParseSince(*s, static_cast<int64_t>(std::time(nullptr)));
    if (!t.ok()) {
      PrintError("export", "--since " + t.status().message());
      return kExitUsage;
    }
    since = *t;
  }
  std::optional<std::string> until;
  if (auto u = args.Get("until")) {
    auto t = store::ParseSince(*u, static_cast<int64_t>(std::time(nullptr)));
    if (!t.ok()) {
      PrintError("export", "--until " + t.status().message());
      return kExitUsage;
    }
    until = *t;
  }
  auto store = OpenDatabase("export", args, /*read_only=*/true);
  if (!store) return kExitUsage;
  Status s = store->Export(since, until, [](std::string_view line) {
    if (std::fwrite(line.data(), 1, line.size(), stdout) != line.size() ||
        std::fputc('\n', stdout) == EOF) {
      return Status::Io("standard output: write failed");
    }
    return Status::Ok();
  });
  if (std::fflush(stdout) != 0 && s.ok()) s = Status::Io("standard output: write failed");
  if (!s.ok()) {
    PrintError("export", s.message());
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("export", "stored incidents as JSON lines for a fleet's pipeline",
                        RunExport);

}  // namespace triage::cli

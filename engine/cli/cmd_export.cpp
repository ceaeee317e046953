// `triage export`: stored incidents as JSON lines, for a fleet's log pipeline.
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "history_common.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage export [--since WHEN] [--until WHEN] [--after-cursor CURSOR] [--db PATH]\n"
    "                     [--config FILE]\n\n"
    "Prints the stored incidents (those seen between the two; all without them), oldest\n"
    "first, one JSON object per line: the incident object of `analyze --json` with\n"
    "fingerprint, occurrences, first_seen, last_seen, status and note added. WHEN is as\n"
    "systemd.time(7) writes it: 30m, 12h, 2d, -2h, '2h ago', today, yesterday (UTC midnights), or\n"
    "an ISO 8601 date or time (a zone applied).\n\n"
    "Each object's \"cursor\" tells where a next export continues from: --after-cursor CURSOR\n"
    "prints the incidents stored after that one, in the order they were stored, so that a\n"
    "pipeline that passes the last cursor it read each time gets every new incident once. A\n"
    "recurrence of an incident already exported updates it (history, show) and is not printed\n"
    "again.\n\n";

// A cursor as export writes it: an incident's id, "0" before the first.
std::optional<int64_t> ParseCursor(const std::string& text) {
  if (text == "0") return 0;
  return ParseIncidentId(text.rfind('#', 0) == 0 ? std::string() : text);
}

int RunExport(const std::vector<std::string>& argv) {
  Args args;
  args.Option("since", "WHEN", "only incidents seen since: 30m, 12h, 2d, -2h, today, yesterday or an ISO 8601 time")
      .Option("until", "WHEN", "only incidents first seen up to then (the forms of --since)")
      .Option("after-cursor", "CURSOR",
              "only incidents stored after the one whose \"cursor\" this is, in storing order");
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
  int64_t after = -1;  // no cursor
  if (auto c = args.Get("after-cursor")) {
    auto id = ParseCursor(*c);
    if (!id) {
      PrintError("export", "--after-cursor takes the \"cursor\" of an exported line, not '" + *c + "'");
      return kExitUsage;
    }
    after = *id;
  }
  auto store = OpenDatabase("export", args, /*read_only=*/true);
  if (!store) return kExitUsage;
  // A reader that closed the pipe (`| head -1`) took what it wanted: the export stops there,
  // with no error.
  bool reader_gone = false;
  Status s = store->ExportAfter(after, since, until, [&reader_gone](std::string_view line) {
    if (std::fwrite(line.data(), 1, line.size(), stdout) != line.size() ||
        std::fputc('\n', stdout) == EOF) {
      reader_gone = errno == EPIPE;
      return Status::Io("standard output: write failed");
    }
    return Status::Ok();
  });
  if (std::fflush(stdout) != 0 && s.ok()) {
    reader_gone = errno == EPIPE;
    s = Status::Io("standard output: write failed");
  }
  if (reader_gone) return kExitOk;
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

// `triage history`: the stored incidents, newest first.
#include <ctime>
#include <iostream>

#include "history_common.h"
#include "pager.h"
#include "triage/json.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage history [--since WHEN] [--until WHEN] [--service S] [--cause ID]\n"
    "                      [--status STATUS] [--limit N] [--json] [--db PATH] [--config FILE]\n\n"
    "Lists the stored incidents, the most recently seen first: each is one failure however\n"
    "often it recurred (same root causes and defining captures on the same service).\n"
    "Times are the log's own when it had them (in UTC, their zone applied), else when it was read.\n"
    "WHEN is as systemd.time(7) writes it: 30m, 12h, 2d, 1w, -2h, '2h ago', now, today, yesterday\n"
    "(UTC midnights), or an ISO 8601 date or time (a zone applied).\n\n";

int RunHistory(const std::vector<std::string>& argv) {
  Args args;
  args.Option("since", "WHEN", "only incidents seen since: 30m, 12h, 2d, -2h, today, yesterday or an ISO 8601 time")
      .Option("until", "WHEN", "only incidents first seen up to then (the forms of --since)")
      .Option("service", "S", "only this service")
      .Option("cause", "ID", "only incidents with this root cause (or a prefix: 'cuda')")
      .Option("status", "STATUS", "only incidents open, resolved or reopened")
      .Option("known-bug", "ID", "only incidents a known bug fits: its id (vllm#8735), 'any', or 'fixed' (seen on a release at or past the bug's fix)")
      .Option("limit", "N", "at most N incidents (default 50; 0: all)", 'n')
      .Flag("json", "print {\"incidents\": [...]} instead of a table");
  AddDatabaseOptions(args);
  if (!args.Parse(argv)) {
    PrintError("history", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  if (!args.Positionals().empty()) {
    PrintError("history", "unexpected argument " + args.Positionals().front());
    return kExitUsage;
  }
  store::HistoryFilter filter;
  if (auto since = args.Get("since")) {
    auto t = store::ParseSince(*since, static_cast<int64_t>(std::time(nullptr)));
    if (!t.ok()) {
      PrintError("history", "--since " + t.status().message());
      return kExitUsage;
    }
    filter.since = *t;
  }
  if (auto until = args.Get("until")) {
    auto t = store::ParseSince(*until, static_cast<int64_t>(std::time(nullptr)));
    if (!t.ok()) {
      PrintError("history", "--until " + t.status().message());
      return kExitUsage;
    }
    filter.until = *t;
  }
  filter.service = args.Get("service");
  filter.cause = args.Get("cause");
  filter.known_bug = args.Get("known-bug");
  if (auto status = args.Get("status")) {
    if (*status != "open" && *status != "resolved" && *status != "reopened") {
      PrintError("history", "--status is open, resolved or reopened, not '" + *status + "'");
      return kExitUsage;
    }
    filter.status = *status;
  }
  if (auto limit = args.Get("limit")) {
    auto n = ParseCount(*limit);
    if (!n) {
      PrintError("history", "--limit needs a count (0 for all), not '" + *limit + "'");
      return kExitUsage;
    }
    filter.limit = *n;
  }
  auto store = OpenDatabase("history", args, /*read_only=*/true);
  if (!store) return kExitUsage;
  auto rows = store->History(filter);
  if (!rows.ok()) {
    PrintError("history", rows.status().message());
    return kExitUsage;
  }
  if (args.Has("json")) {
    JsonWriter w;
    w.BeginObject().Key("incidents").BeginArray();
    for (const auto& r : *rows) {
      w.BeginObject();
      w.Key("id").Int(r.id);
      w.Key("fingerprint").String(r.fingerprint);
      w.Key("service").String(r.service);
      w.Key("host").String(r.host);
      w.Key("top_cause").String(r.top_cause);
      w.Key("title").String(r.title);
      w.Key("occurrences").Int(r.occurrences);
      w.Key("first_seen").String(r.first_seen);
      w.Key("last_seen").String(r.last_seen);
      w.Key("status").String(r.status);
      w.Key("note").String(r.note);
      w.Key("hosts").Int(r.hosts);
      w.EndObject();
    }
    w.EndArray().EndObject();
    std::cout << w.str() << "\n";
    return kExitOk;
  }
  if (rows->empty()) {
    std::cout << "No incidents stored"
              << (filter.since || filter.until || filter.service || filter.cause || filter.status
                      ? " that match."
                      : " yet (in " + TerminalText(store->path()) + ").")
              << "\n";
    return kExitOk;
  }
  Table table({"ID", "LAST SEEN", "COUNT", "STATUS", "SERVICE", "HOST", "CAUSE", "TITLE"});
  for (const auto& r : *rows) {
    // An incident on several hosts: its latest host and how many more ("gpu-a +3").
    std::string host = Clip(r.host, r.hosts > 1 ? 12 : 16);
    if (r.hosts > 1) host += " +" + std::to_string(r.hosts - 1);
    table.Add({std::to_string(r.id), r.last_seen, std::to_string(r.occurrences), r.status,
               Clip(r.service, 24), host, Clip(r.top_cause, 40), Clip(r.title, 60)});
  }
  Pager pager(!args.Has("no-pager"));
  std::cout << table.Render();
  return kExitOk;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("history", "list stored incidents, newest first", RunHistory);

}  // namespace triage::cli

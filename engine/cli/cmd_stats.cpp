// `triage stats`: counts of stored incidents by cause, service and day.
#include <iostream>

#include "history_common.h"
#include "triage/json.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage stats [--days N] [--json] [--db PATH] [--config FILE]\n\n"
    "Counts the stored incidents and their occurrences by root cause, by service and by day\n"
    "(the day each occurrence was seen).\n\n";

void WriteRows(JsonWriter& w, const char* key, const char* name,
               const std::vector<store::StatsRow>& rows) {
  w.Key(key).BeginArray();
  for (const auto& r : rows) {
    w.BeginObject().Key(name).String(r.key).Key("incidents").Int(r.incidents);
    w.Key("occurrences").Int(r.occurrences).EndObject();
  }
  w.EndArray();
}

std::string RenderRows(const char* title, const std::vector<store::StatsRow>& rows,
                       size_t max_rows) {
  Table t({title, "INCIDENTS", "OCCURRENCES"});
  for (size_t i = 0; i < rows.size() && i < max_rows; ++i) {
    t.Add({Clip(rows[i].key, 48), std::to_string(rows[i].incidents),
           std::to_string(rows[i].occurrences)});
  }
  std::string out = t.Render();
  if (rows.size() > max_rows) {
    out += '(';
    out += std::to_string(rows.size() - max_rows);
    out += " more: --json for all)\n";
  }
  return out;
}

int RunStats(const std::vector<std::string>& argv) {
  Args args;
  args.Option("days", "N", "days shown in the table (default 14; --json has them all)")
      .Flag("json", "print the counts as JSON");
  AddDatabaseOptions(args);
  if (!args.Parse(argv)) {
    PrintError("stats", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  if (!args.Positionals().empty()) {
    PrintError("stats", "unexpected argument " + args.Positionals().front());
    return kExitUsage;
  }
  size_t days = 14;
  if (auto d = args.Get("days")) {
    auto n = ParseCount(*d);
    if (!n || *n == 0) {
      PrintError("stats", "--days needs a positive count, not '" + *d + "'");
      return kExitUsage;
    }
    days = size_t(*n);
  }
  auto store = OpenDatabase("stats", args, /*read_only=*/true);
  if (!store) return kExitUsage;
  auto stats = store->GetStats();
  if (!stats.ok()) {
    PrintError("stats", stats.status().message());
    return kExitUsage;
  }
  if (args.Has("json")) {
    JsonWriter w;
    w.BeginObject();
    w.Key("incidents").Int(stats->incidents);
    w.Key("occurrences").Int(stats->occurrences);
    w.Key("open").Int(stats->open);
    WriteRows(w, "by_cause", "cause", stats->by_cause);
    WriteRows(w, "by_service", "service", stats->by_service);
    WriteRows(w, "by_day", "day", stats->by_day);
    w.Key("hosts").Int(stats->hosts);
    WriteRows(w, "by_host", "host", stats->by_host);
    WriteRows(w, "by_known_bug", "known_bug", stats->by_known_bug);
    WriteRows(w, "known_bug_after_fix", "known_bug", stats->known_bug_after_fix);
    w.EndObject();
    std::cout << w.str() << "\n";
    return kExitOk;
  }
  std::cout << stats->incidents << " incidents (" << stats->open << " open), "
            << stats->occurrences << " occurrences on " << stats->hosts
            << (stats->hosts == 1 ? " host\n" : " hosts\n");
  if (stats->incidents == 0) return kExitOk;
  std::cout << "\n" << RenderRows("CAUSE", stats->by_cause, 30) << "\n"
            << RenderRows("SERVICE", stats->by_service, 30) << "\n"
            << RenderRows("HOST", stats->by_host, 30) << "\n";
  if (!stats->by_known_bug.empty()) std::cout << RenderRows("KNOWN BUG", stats->by_known_bug, 30) << "\n";
  if (!stats->known_bug_after_fix.empty())
    std::cout << RenderRows("KNOWN BUG, AFTER ITS FIX", stats->known_bug_after_fix, 30) << "\n";
  std::cout << RenderRows("DAY", stats->by_day, days);
  return kExitOk;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("stats", "counts of stored incidents by cause, service, day", RunStats);

}  // namespace triage::cli

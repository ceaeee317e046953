// `triage search TEXT`: full-text search over stored evidence.
#include <iostream>

#include "history_common.h"
#include "triage/json.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage search TEXT... [--limit N] [--json] [--db PATH] [--config FILE]\n\n"
    "Finds the stored evidence lines that contain every word of TEXT, newest first. The text is\n"
    "taken literally: quotes, AND/OR/NOT, * and brackets are searched for, never obeyed.\n\n"
    "Exit codes, as grep's: 0 a line matched; 1 nothing matched; 2 bad usage or an unreadable\n"
    "database.\n\n";

int RunSearch(const std::vector<std::string>& argv) {
  Args args;
  args.Option("limit", "N", "at most N lines (default 50; 0: all)", 'n')
      .Flag("json", "print {\"hits\": [...]} instead of a table");
  AddDatabaseOptions(args);
  if (!args.Parse(argv)) {
    PrintError("search", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  if (args.Positionals().empty()) {
    PrintError("search", "needs the text to search for");
    return kExitUsage;
  }
  std::string text;
  for (const auto& p : args.Positionals()) {
    if (!text.empty()) text += ' ';
    text += p;
  }
  int64_t limit = 50;
  if (auto l = args.Get("limit")) {
    auto n = ParseCount(*l);
    if (!n) {
      PrintError("search", "--limit needs a count (0 for all), not '" + *l + "'");
      return kExitUsage;
    }
    limit = *n;
  }
  auto store = OpenDatabase("search", args, /*read_only=*/true);
  if (!store) return kExitUsage;
  auto hits = store->Search(text, limit);
  if (!hits.ok()) {
    PrintError("search", hits.status().message());
    return kExitUsage;
  }
  if (args.Has("json")) {
    JsonWriter w;
    w.BeginObject().Key("hits").BeginArray();
    for (const auto& h : *hits) {
      w.BeginObject();
      w.Key("incident").Int(h.incident_id);
      w.Key("service").String(h.service);
      w.Key("cause").String(h.cause);
      w.Key("status").String(h.status);
      w.Key("last_seen").String(h.last_seen);
      w.Key("source").String(h.source);
      w.Key("line").Uint(h.line);
      w.Key("text").String(h.excerpt);
      w.EndObject();
    }
    w.EndArray().EndObject();
    std::cout << w.str() << "\n";
    return hits->empty() ? kExitNoMatch : kExitOk;
  }
  if (hits->empty()) {
    std::cout << "No stored evidence contains it.\n";
    return kExitNoMatch;
  }
  Table table({"ID", "SERVICE", "CAUSE", "WHERE", "TEXT"});
  for (const auto& h : *hits) {
    table.Add({std::to_string(h.incident_id), Clip(h.service, 24), Clip(h.cause, 36),
               ClipLeft(h.source, 40) + ":" + std::to_string(h.line), Clip(h.excerpt, 100)});
  }
  std::cout << table.Render();
  return kExitOk;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("search", "full-text search over stored evidence", RunSearch);

}  // namespace triage::cli

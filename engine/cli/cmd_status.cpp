// `triage status`: the daemon's heartbeat and counters, read from the store.
#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "command.h"
#include "triage/redact.h"
#include "triage/civil_time.h"
#include "triage/core/config.h"
#include "triage/json.h"
#include "triage/store/store.h"
#include "triage/terminal_text.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage status [--db PATH] [--config FILE] [--json]\n\n"
    "Shows whether `triage watch` is running on this database, and its counters: files\n"
    "followed, bytes and lines read, incidents written, errors and the last one.\n\n"
    "Exit codes: 0 the daemon is running; 1 it is stopped, not responding, or never ran;\n"
    "2 bad usage or an unreadable database.\n\n";

std::string Ago(int64_t seconds) {
  if (seconds < 0) return "?";
  if (seconds < 120) return std::to_string(seconds) + "s ago";
  if (seconds < 7200) return std::to_string(seconds / 60) + "m ago";
  if (seconds < 172800) return std::to_string(seconds / 3600) + "h ago";
  return std::to_string(seconds / 86400) + "d ago";
}

int64_t Counter(const store::Heartbeat& hb, const char* key) {
  auto it = hb.counters.find(key);
  return it == hb.counters.end() ? 0 : it->second;
}

int RunStatus(const std::vector<std::string>& argv) {
  Args args;
  args.Option("db", "PATH", "the database (default: TRIAGE_DB, [store] path, ~/.local/state/triage/triage.db)")
      .Option("config", "FILE", "configuration file")
      .Flag("json", "one JSON object");
  if (!args.Parse(argv)) {
    PrintError("status", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  if (!args.Positionals().empty()) {
    PrintError("status", "unexpected argument " + args.Positionals().front());
    return kExitUsage;
  }
  auto cfg = LoadConfiguration(args.Get("config"));
  if (!cfg.ok()) {
    PrintError("status", cfg.status().message());
    return kExitUsage;
  }
  std::string path = core::ResolveDbPath(args.Get("db"), *cfg);
  const std::string shown = RedactSecrets(path);  // what is printed of it
  store::StoreOptions so;
  so.create = false;
  so.read_only = true;
  auto db = store::Store::Open(path, so);
  if (!db.ok()) {
    PrintError(store::IsServerUrl(path) ? "status" : path, db.status().message());
    return kExitUsage;
  }
  auto hb_r = db->GetHeartbeat();
  if (!hb_r.ok()) {
    PrintError(db->path(), hb_r.status().message());
    return kExitUsage;
  }
  const bool json = args.Has("json");
  if (!*hb_r) {
    if (json) std::cout << "{\"state\":\"never ran\",\"db\":" << [&] {
        std::string s;
        AppendJsonString(s, shown);
        return s;
      }() << "}\n";
    else std::cout << "daemon: never ran on " << TerminalText(shown) << "\n";
    return kExitFound;
  }
  const store::Heartbeat& hb = **hb_r;
  const int64_t age = static_cast<int64_t>(std::time(nullptr)) - ParseUtc(hb.updated_at);
  const int64_t beat_ms = Counter(hb, "heartbeat_ms");
  const int64_t stale_after = std::max<int64_t>(15, 3 * beat_ms / 1000);
  const bool alive = hb.pid > 0 && (kill(static_cast<pid_t>(hb.pid), 0) == 0 || errno == EPERM);
  std::string state;
  if (Counter(hb, "running") == 0) state = "stopped";
  else if (age > stale_after || !alive) state = "not responding";
  else state = "running";

  if (json) {
    JsonWriter w;
    w.BeginObject();
    w.Key("state").String(state);
    w.Key("db").String(shown);
    w.Key("pid").Int(hb.pid);
    w.Key("started_at").String(hb.started_at);
    w.Key("updated_at").String(hb.updated_at);
    w.Key("age_seconds").Int(age);
    w.Key("counters").BeginObject();
    for (const auto& [k, v] : hb.counters) w.Key(k).Int(v);
    w.EndObject();
    w.Key("last_error").String(hb.last_error);
    w.EndObject();
    std::cout << w.str() << "\n";
  } else {
    std::cout << "daemon:     " << state << " (pid " << hb.pid << ")\n"
              << "database:   " << TerminalText(shown) << "\n"
              << "started:    " << TerminalText(hb.started_at) << " UTC\n"
              << "heartbeat:  " << TerminalText(hb.updated_at) << " UTC (" << Ago(age) << ")\n"
              << "files:      " << Counter(hb, "files") << " in " << Counter(hb, "folders")
              << " folders\n"
              << "read:       " << Counter(hb, "bytes") << " bytes, " << Counter(hb, "lines")
              << " lines\n"
              << "incidents:  " << Counter(hb, "incidents") << " written ("
              << Counter(hb, "new_incidents") << " new)\n"
              << "rotations:  " << Counter(hb, "rotations") << ", truncations "
              << Counter(hb, "truncations") << "\n";
    if (hb.counters.count("verified"))
      std::cout << "verified:   " << Counter(hb, "verified") << " (dropped "
                << Counter(hb, "verify_dropped") << ", failed " << Counter(hb, "verify_failed")
                << ")\n";
    std::cout << "errors:     " << Counter(hb, "errors") << "\n";
    if (!hb.last_error.empty()) std::cout << "last error: " << TerminalText(hb.last_error) << "\n";
  }
  return state == "running" ? kExitOk : kExitFound;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("status", "the daemon's heartbeat and counters", RunStatus);

}  // namespace triage::cli

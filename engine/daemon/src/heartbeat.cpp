#include "heartbeat.h"

#include <unistd.h>

#include <ctime>

namespace triage::daemon::detail {

store::Heartbeat MakeHeartbeat(const Counters& counters, const HeartbeatState& state) {
  store::Heartbeat hb;
  hb.pid = static_cast<int64_t>(getpid());
  hb.started_at = state.started_at;
  hb.last_error = state.last_error;
  auto& c = hb.counters;
  c["running"] = state.running ? 1 : 0;
  c["files"] = state.files;
  c["folders"] = state.folders;
  c["bytes"] = counters.bytes;
  c["lines"] = counters.lines;
  c["incidents"] = counters.incidents;
  c["new_incidents"] = counters.new_incidents;
  c["commits"] = counters.commits;
  c["errors"] = state.errors;
  c["rotations"] = counters.rotations;
  c["truncations"] = counters.truncations;
  c["files_opened"] = counters.files_opened;
  c["reloads"] = counters.reloads;
  c["heartbeat_ms"] = static_cast<int64_t>(state.heartbeat_seconds * 1000);
  c["quiet_gap_ms"] = static_cast<int64_t>(state.quiet_gap_seconds * 1000);
  if (state.verifying) {
    c["verified"] = state.verified;
    c["verify_dropped"] = state.verify_dropped;
    c["verify_failed"] = state.verify_failed;
  }
  return hb;
}

std::string NowUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

}  // namespace triage::daemon::detail

// The daemon's counters and the heartbeat it writes to the store with them (read by
// `triage status`; docs/schema.md names its counters). Plain values; owned by the loop's thread.
#pragma once

#include <cstdint>
#include <string>

#include "triage/store/store.h"

namespace triage::daemon::detail {

struct Counters {
  int64_t bytes = 0;
  int64_t lines = 0;
  int64_t incidents = 0;       // occurrences written
  int64_t new_incidents = 0;   // of which new fingerprints
  int64_t commits = 0;
  int64_t rotations = 0;
  int64_t truncations = 0;
  int64_t files_opened = 0;
  int64_t reloads = 0;
};

// What the heartbeat says besides the counters.
struct HeartbeatState {
  bool running = true;
  std::string started_at;  // ISO 8601 UTC
  std::string last_error;
  int64_t errors = 0;
  int64_t files = 0;
  int64_t folders = 0;
  double heartbeat_seconds = 5;
  double quiet_gap_seconds = 300;
  bool verifying = false;  // the verification counters below are reported
  int64_t verified = 0, verify_dropped = 0, verify_failed = 0;
};

store::Heartbeat MakeHeartbeat(const Counters& counters, const HeartbeatState& state);

// Now, UTC, as "2026-11-02T09:00:00".
std::string NowUtc();

}  // namespace triage::daemon::detail

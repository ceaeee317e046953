// The daemon's Prometheus metrics: one registry that the daemon's threads count into, rendered
// in the text exposition format (version 0.0.4) for `/metrics` and the textfile collector.
//
// Families (docs/metrics.md is the contract):
//   triage_incidents_total{service,cause,host}       counter  occurrences stored (new + recurring)
//   triage_lines_read_total, triage_bytes_read_total counter  what the tails read
//   triage_files_watched                             gauge    files followed now
//   triage_read_lag_seconds                          gauge    how long the oldest file with
//                                                             unread bytes has waited (0: none)
//   triage_verifications_total{verifier,verdict}     counter  verdicts the background checks gave
//   triage_notifications_total{channel,result}       counter  hooks and webhooks: sent, failed,
//                                                             timeout, limited
//   triage_last_incident_timestamp_seconds           gauge    when an incident was last stored
//   triage_store_up                                  gauge    1 while the store can be reached, else 0
//   triage_build_info{version}                       gauge    1
//
// Untrusted labels: service, host and cause names come from logs and rules. Each label value is
// cut to `label_bytes` (on a UTF-8 boundary), invalid UTF-8 becomes U+FFFD, other control
// characters than newline become '?', and `\`, `"` and newline are escaped as the format
// requires. Each labelled family holds at
// most its series limit; further label sets are counted in one series whose labels are all
// "_other_", so a log cannot grow the exposition without bound.
//
// Thread-safety: every method may be called from any thread at any time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace triage::daemon {

class Metrics {
 public:
  struct Limits {
    size_t incident_series = 256;
    size_t verification_series = 128;
    size_t notification_series = 16;
    size_t label_bytes = 128;
  };
  // The label value of the series that counts label sets past a family's limit.
  static constexpr std::string_view kOverflowLabel = "_other_";

  explicit Metrics(std::string version);
  Metrics(std::string version, Limits limits);
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  void AddLinesRead(uint64_t n) { lines_.fetch_add(n, std::memory_order_relaxed); }
  void AddBytesRead(uint64_t n) { bytes_.fetch_add(n, std::memory_order_relaxed); }
  void SetFilesWatched(uint64_t n) { files_.store(n, std::memory_order_relaxed); }
  // Bytes have waited to be read since `since` (the oldest such file); Clear: none wait.
  void SetReadBacklogSince(std::chrono::steady_clock::time_point since);
  void ClearReadBacklog() { backlog_since_ns_.store(0, std::memory_order_relaxed); }
  // One occurrence stored; `unix_seconds` is when (the last-incident gauge).
  void IncidentStored(std::string_view service, std::string_view cause, std::string_view host,
                      double unix_seconds);
  void VerificationDone(std::string_view verifier, std::string_view verdict);
  void Notification(std::string_view channel, std::string_view result);
  // The daemon's loop was seen at work now (read by `/healthz`).
  void LoopAlive();
  // Seconds since LoopAlive() was last called; a large number before the first call.
  double LoopQuietSeconds() const;
  // The store cannot be reached now, and why (`/healthz` answers 503 with it); Clear: it can.
  void SetStoreUnreachable(std::string why);
  void ClearStoreUnreachable() { SetStoreUnreachable({}); }
  // Why the store cannot be reached; empty while it can.
  std::string StoreUnreachable() const;

  // The whole exposition, `# HELP`/`# TYPE` for every family, series sorted by labels.
  std::string Exposition() const;

 private:
  using LabelSet = std::vector<std::string>;  // values, in the family's label order
  struct Family {
    size_t limit;
    std::map<LabelSet, uint64_t> series;
  };
  void Count(Family& family, LabelSet labels);

  const std::string version_;
  const Limits limits_;
  std::atomic<uint64_t> lines_{0}, bytes_{0}, files_{0};
  std::atomic<int64_t> backlog_since_ns_{0};  // steady clock; 0: nothing waits
  std::atomic<int64_t> loop_alive_ns_{0};     // steady clock; 0: never
  mutable std::mutex mu_;
  Family incidents_, verifications_, notifications_;
  double last_incident_ = 0;
  std::string store_unreachable_;
};

// `value` as a label value of the text format: cut, made valid UTF-8 without control
// characters, escaped (without the surrounding quotes).
std::string EscapeLabelValue(std::string_view value, size_t max_bytes);

}  // namespace triage::daemon

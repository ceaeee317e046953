// Tells someone about each incident the daemon stores (`[notify]`): runs a program with the
// incident's JSON on its stdin, and/or POSTs it to a webhook. On a background thread, so that
// ingestion never waits for a hook or a network.
//
// The document (docs/notifications.md is the contract):
//   {"text": "one line a chat shows", "event": "new" | "recurrence", "host": "<this host>",
//    "incident": {the incident object of `analyze --json`}}
//
// Bounds: at most `per_minute` notifications in any 60 s (the rest are dropped, counted and
// logged: the first drop of a burst, then how many went when sending resumes); at most
// `queue_limit` waiting (the oldest dropped). The program runs from its argv (never a shell), in
// its own process group, with stdout to /dev/null and stderr kept for the log (its first 1 KiB);
// past the deadline its group is killed. The webhook gets the same deadline. A failure is
// logged and counted, never more. Stopping delivers what waits for one deadline more.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http.h"
#include "triage/core/incident.h"
#include "triage/daemon/daemon.h"
#include "triage/daemon/metrics.h"

namespace triage::daemon::detail {

struct NotifySettings {
  std::vector<std::string> exec;   // argv; empty: no program. argv[0] is an absolute path.
  std::optional<HttpUrl> webhook;  // none: no webhook
  double deadline_seconds = 10;
  double per_minute = 10;
  size_t queue_limit = 64;
  bool enabled() const { return !exec.empty() || webhook.has_value(); }
};

// The document sent for one incident. `recurrence`: its fingerprint was stored before.
std::string NotificationJson(const core::Incident& incident, bool recurrence,
                             const std::string& host);

// Runs `argv` with `input` on its stdin; Ok when it exits 0 within the deadline, Timeout when
// it was killed at the deadline, Unavailable with its status (and the start of its stderr)
// otherwise.
Status RunHook(const std::vector<std::string>& argv, const std::string& input,
               double deadline_seconds);

class Notifier {
 public:
  using Log = std::function<void(LogRecord)>;  // thread-safe
  // `metrics` may be null; it must outlive the notifier.
  Notifier(Metrics* metrics, Log log);
  ~Notifier();  // Stop()
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // Takes effect for the next notification (a reload).
  void Configure(NotifySettings settings);
  // Called for each stored incident; never blocks on a hook.
  void Submit(const core::Incident& incident, bool recurrence);
  // Takes no more; delivers what waits for at most one deadline more (the rest is dropped and
  // logged); joins the thread.
  void Stop();

 private:
  void Loop();
  void Deliver(const NotifySettings& settings, const std::string& doc);

  Metrics* metrics_;
  Log log_;
  std::string host_;
  std::mutex mu_;
  std::condition_variable cv_;
  NotifySettings settings_;
  std::deque<std::string> queue_;  // documents
  std::deque<std::chrono::steady_clock::time_point> sent_;  // admissions in the last minute
  uint64_t limited_in_burst_ = 0;
  bool stop_ = false;
  std::chrono::steady_clock::time_point drain_until_{};  // set by Stop()
  std::thread thread_;
};

}  // namespace triage::daemon::detail

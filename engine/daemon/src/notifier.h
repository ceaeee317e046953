// Tells someone about each incident the daemon stores (`[notify]`): runs a program with the
// incident's JSON on its stdin, and/or POSTs a document to a webhook (http or https) in triage's
// own JSON or in the shape of Slack, PagerDuty or Alertmanager (notify_payload.h). On a
// background thread, so that ingestion never waits for a hook or a network.
//
// Bounds: at most `per_minute` notifications in any 60 s. One past it is held back (counted,
// logged at the start of a burst), unless its cause is a hardware fault (critical): that one is
// always sent. What was held back goes out as one summary ("7 incidents held back in the last
// minute: 5 cuda.oom, 2 native.crash") once the burst has been quiet for kSummaryQuiet, or a
// minute after its first held one, at most one summary a minute. At most `queue_limit` waiting:
// past it the oldest that is not critical is dropped. The program runs from its argv (never a
// shell), in its own process group, with stdout to /dev/null and stderr kept for the log (its
// first 1 KiB); past the deadline its group is killed. The webhook gets the same deadline. A
// failure is logged and counted, never more. Stopping delivers what waits (and the summary of
// what was held) for one deadline more.
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
#include "notify_payload.h"
#include "triage/core/config.h"
#include "triage/core/incident.h"
#include "triage/daemon/daemon.h"
#include "triage/daemon/metrics.h"

namespace triage::daemon::detail {

struct NotifySettings {
  std::vector<std::string> exec;   // argv; empty: no program. argv[0] is an absolute path.
  std::optional<HttpUrl> webhook;  // none: no webhook
  PayloadSettings payload;         // the webhook's document
  std::string ca_file;             // an https webhook's trust; empty: the system's store
  double deadline_seconds = 10;
  double per_minute = 10;
  size_t queue_limit = 64;
  bool enabled() const { return !exec.empty() || webhook.has_value(); }
};

// The settings of `[notify]` (the configuration has checked its keys; the webhook's URL is
// parsed here).
Result<NotifySettings> NotifySettingsFrom(const core::Config& config);

// Runs `argv` with `input` on its stdin; Ok when it exits 0 within the deadline, Timeout when
// it was killed at the deadline, Unavailable with its status (and the start of its stderr)
// otherwise.
Status RunHook(const std::vector<std::string>& argv, const std::string& input,
               double deadline_seconds);

// One notification's documents: the program's (triage's JSON) and the webhook's (its format;
// empty: nothing for the webhook).
struct NotifyDocuments {
  bool critical = false;
  std::string exec;
  std::string webhook;
};

// Sends `docs` through the channels of `settings` now, on the calling thread; `outcome` is told
// each channel's result ("exec" or "webhook").
using NotifyOutcome = std::function<void(const char* channel, const Status& status)>;
void DeliverNow(const NotifySettings& settings, const NotifyDocuments& docs,
                const NotifyOutcome& outcome);

class Notifier {
 public:
  using Log = std::function<void(LogRecord)>;  // thread-safe
  static constexpr auto kSummaryQuiet = std::chrono::seconds(5);

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
  // When the summary of what is held is due (mu_ held; held_.total > 0).
  std::chrono::steady_clock::time_point SummaryDue() const;
  void Deliver(const NotifySettings& settings, const NotifyDocuments& docs);
  void Channels(const NotifySettings& settings, std::vector<std::string>& out) const;

  Metrics* metrics_;
  Log log_;
  std::string host_;
  std::mutex mu_;
  std::condition_variable cv_;
  NotifySettings settings_;
  std::deque<NotifyDocuments> queue_;
  std::deque<std::chrono::steady_clock::time_point> sent_;  // admissions in the last minute
  HeldBack held_;                                           // held back since the last summary
  std::chrono::steady_clock::time_point held_first_{}, held_last_{};
  std::optional<std::chrono::steady_clock::time_point> last_summary_;
  bool stop_ = false;
  std::chrono::steady_clock::time_point drain_until_{};  // set by Stop()
  std::thread thread_;
};

}  // namespace triage::daemon::detail

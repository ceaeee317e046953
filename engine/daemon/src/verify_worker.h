// Runs the verifiers for stored incidents on a background thread, so that ingestion never waits
// for a check (each of which may take seconds). At most one incident is verified per
// `min_interval`; when more than `queue_limit` wait, the oldest is dropped (and counted). The
// verdicts are added to the store through the worker's own connection.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "triage/core/incident.h"
#include "triage/core/verifier.h"
#include "triage/daemon/daemon.h"
#include "triage/daemon/metrics.h"

namespace triage::daemon::detail {

class VerifyWorker {
 public:
  using Log = std::function<void(LogRecord)>;  // thread-safe
  // `metrics` (may be null) counts the verdicts; it must outlive the worker.
  VerifyWorker(std::string db_path, double min_interval_seconds, size_t queue_limit,
               Metrics* metrics, Log log);
  ~VerifyWorker();  // Stop()
  VerifyWorker(const VerifyWorker&) = delete;
  VerifyWorker& operator=(const VerifyWorker&) = delete;

  // Replaces the runner (null: requests are dropped until one is set). Takes effect between two
  // incidents.
  void SetRunner(std::unique_ptr<core::VerificationRunner> runner);
  // Queues a stored incident (its id set). Never blocks on a verification.
  void Submit(core::Incident incident);
  // Finishes the incident in progress, drops the rest, joins the thread.
  void Stop();

  uint64_t verified() const { return verified_; }
  uint64_t dropped() const { return dropped_; }
  uint64_t failed() const { return failed_; }

 private:
  void Loop();

  std::string db_path_;
  std::chrono::duration<double> min_interval_;
  size_t queue_limit_;
  Metrics* metrics_;
  Log log_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<core::Incident> queue_;
  std::shared_ptr<core::VerificationRunner> runner_;
  bool stop_ = false;
  std::atomic<uint64_t> verified_{0}, dropped_{0}, failed_{0};
  std::thread thread_;
};

}  // namespace triage::daemon::detail

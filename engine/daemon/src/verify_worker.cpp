#include "verify_worker.h"

#include <chrono>

#include "triage/store/store.h"

namespace triage::daemon::detail {

VerifyWorker::VerifyWorker(std::string db_path, double min_interval_seconds, size_t queue_limit,
                           Metrics* metrics, Log log)
    : db_path_(std::move(db_path)),
      min_interval_(min_interval_seconds),
      queue_limit_(queue_limit == 0 ? 1 : queue_limit),
      metrics_(metrics),
      log_(std::move(log)),
      thread_([this] { Loop(); }) {}

VerifyWorker::~VerifyWorker() { Stop(); }

void VerifyWorker::SetRunner(std::unique_ptr<core::VerificationRunner> runner) {
  std::lock_guard<std::mutex> lock(mu_);
  runner_ = std::move(runner);
}

void VerifyWorker::Submit(core::Incident incident) {
  std::optional<int64_t> dropped_id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    if (queue_.size() >= queue_limit_) {
      dropped_id = queue_.front().id;
      queue_.pop_front();
      ++dropped_;
    }
    queue_.push_back(std::move(incident));
  }
  cv_.notify_one();
  if (dropped_id) {
    log_({LogRecord::Level::kWarning,
          "verify.dropped",
          {{"incident", std::to_string(*dropped_id)}, {"reason", "verification backlog"}}});
  }
}

void VerifyWorker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void VerifyWorker::Loop() {
  std::optional<store::Store> db;
  auto last_start = std::chrono::steady_clock::time_point{};
  for (;;) {
    core::Incident incident;
    std::shared_ptr<core::VerificationRunner> runner;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      // The rate limit: wait out the interval since the last start (Stop() cuts it short).
      auto next = last_start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   min_interval_);
      if (cv_.wait_until(lock, next, [&] { return stop_; })) return;
      if (queue_.empty()) continue;
      incident = std::move(queue_.front());
      queue_.pop_front();
      runner = runner_;
    }
    if (!runner || !incident.id) {
      ++dropped_;
      continue;
    }
    last_start = std::chrono::steady_clock::now();
    runner->VerifyIncident(incident);
    if (metrics_) {
      for (const auto& cause : incident.causes)
        for (const auto& v : cause.verifications)
          metrics_->VerificationDone(v.verifier, core::VerdictName(v.verdict));
    }
    if (!db) {
      auto opened = store::Store::Open(db_path_);
      if (!opened.ok()) {
        ++failed_;
        log_({LogRecord::Level::kError, "verify.store", {{"error", opened.status().message()}}});
        continue;
      }
      db.emplace(std::move(opened).value());
    }
    size_t verdicts = 0;
    bool ok = true;
    for (const auto& cause : incident.causes) {
      if (cause.verifications.empty()) continue;
      verdicts += cause.verifications.size();
      Status st = db->AddVerifications(*incident.id, cause.cause, cause.verifications);
      if (!st.ok()) {
        ok = false;
        log_({LogRecord::Level::kError,
              "verify.store",
              {{"incident", std::to_string(*incident.id)}, {"error", st.message()}}});
      }
    }
    if (ok) {
      ++verified_;
    } else {
      ++failed_;
    }
    std::string first_verdict;
    for (const auto& cause : incident.causes)
      for (const auto& v : cause.verifications)
        if (first_verdict.empty())
          first_verdict = v.verifier + ":" + core::VerdictName(v.verdict);
    log_({LogRecord::Level::kInfo,
          "verify.done",
          {{"incident", std::to_string(*incident.id)},
           {"verdicts", std::to_string(verdicts)},
           {"first", first_verdict.empty() ? "-" : first_verdict}}});
  }
}

}  // namespace triage::daemon::detail

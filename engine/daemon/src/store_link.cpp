#include "store_link.h"

#include <algorithm>

namespace triage::daemon::detail {

namespace {

// The waits between reconnections, doubling from the first to the last.
constexpr std::chrono::milliseconds kFirstReconnect{1000}, kLastReconnect{30000};

}  // namespace

Result<std::vector<store::SourceCheckpoint>> StoreLink::Open(const std::string& db_path,
                                                             int answer_timeout_ms,
                                                             store::IncidentSink::Stored on_stored) {
  auto lock = DatabaseLock::Acquire(db_path);
  if (!lock.ok()) return lock.status();
  lock_ = std::move(lock).value();
  // A server's URL may hold a password: messages name the store as it names itself.
  const bool server = store::IsServerUrl(db_path);
  store::StoreOptions options;
  options.answer_timeout_ms = answer_timeout_ms;
  auto db = store::Store::Open(db_path, options);
  if (!db.ok()) return server ? db.status() : db.status().Annotate(db_path);
  store_.emplace(std::move(db).value());
  sink_.emplace(nullptr, &*store_, std::move(on_stored));
  if (Status st = lock_->NoteDatabase(); !st.ok()) return st;
  timer_ = std::make_unique<boost::asio::steady_timer>(io_);
  delay_ = kFirstReconnect;
  auto saved = store_->ListCheckpoints();
  if (!saved.ok()) return saved.status().Annotate(store_->path());
  return saved;
}

Status StoreLink::Put(std::vector<core::Incident>& incidents,
                      const std::vector<store::SourceCheckpoint>& checkpoints,
                      store::RecordOutcome& outcome) {
  if (down_) return Status::Unavailable(store_->path() + ": the store is unreachable");
  Status st = sink_->Put(incidents, &checkpoints, &outcome);
  if (!st.ok()) {
    log_.Error("store.write", st.message(), {{"incidents", std::to_string(incidents.size())}});
    if (st.kind() == Status::Kind::kUnavailable) Unreachable(st);
  }
  return st;
}

void StoreLink::PutHeartbeat(const store::Heartbeat& heartbeat) {
  if (down_) return;
  if (Status st = store_->PutHeartbeat(heartbeat); !st.ok()) {
    log_.Error("store.heartbeat", st.message());
    if (st.kind() == Status::Kind::kUnavailable) Unreachable(st);
  }
}

void StoreLink::Stop() {
  stopped_ = true;
  if (timer_) timer_->cancel();
}

void StoreLink::Unreachable(const Status& st) {
  if (!down_) {
    down_ = true;
    metrics_.SetStoreUnreachable(st.message());
  }
  ReconnectLater();
}

void StoreLink::ReconnectLater() {
  if (!reconnect_ || stopped_ || armed_) return;
  armed_ = true;
  timer_->expires_after(delay_);
  timer_->async_wait([this](const boost::system::error_code& ec) {
    armed_ = false;
    if (ec || stopped_) return;
    Reconnect();
  });
}

// One reconnection; once it succeeds, the owner writes what waited.
void StoreLink::Reconnect() {
  const std::string waiting = std::to_string(waiting_ ? waiting_() : 0);
  if (Status st = store_->Reconnect(); !st.ok()) {
    metrics_.SetStoreUnreachable(st.message());
    delay_ = std::min(2 * delay_, kLastReconnect);
    log_.Warn("store.reconnect", {{"error", st.message()},
                                  {"waiting", waiting},
                                  {"next_seconds", std::to_string(delay_.count() / 1000)}});
    ReconnectLater();
    return;
  }
  down_ = false;
  delay_ = kFirstReconnect;
  metrics_.ClearStoreUnreachable();
  log_.Info("store.reconnected", {{"waiting", waiting}});
  if (on_reconnected_) on_reconnected_();
}

}  // namespace triage::daemon::detail

// The daemon's link to its store: the lock that keeps a second daemon off the database, the store
// with the sink that records into it, and the way back to a server that stopped answering.
//
// A write that finds the server unreachable (Status::Kind::kUnavailable) marks the link down:
// /healthz says so (Metrics::SetStoreUnreachable), nothing is written, and reconnections are
// tried further and further apart (1 s doubling to 30 s) until one succeeds; then the owner is
// told (on_reconnected) and writes what waited. Any other refusal leaves the link up, and the
// owner tries again.
//
// Not thread-safe; owned by the daemon's thread, its timer on the daemon's loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "database_lock.h"
#include "event_log.h"
#include "triage/daemon/metrics.h"
#include "triage/status.h"
#include "triage/store/incident_sink.h"
#include "triage/store/store.h"

namespace triage::daemon::detail {

class StoreLink {
 public:
  // `on_stored` is the sink's: called for every incident recorded, with how it was filed.
  // Without `reconnect` (--once) an unreachable server stays down.
  StoreLink(boost::asio::io_context& io, EventLog& log, Metrics& metrics, bool reconnect)
      : io_(io), log_(log), metrics_(metrics), reconnect_(reconnect) {}
  StoreLink(const StoreLink&) = delete;
  StoreLink& operator=(const StoreLink&) = delete;

  // Takes the lock for `db_path`, opens the store (commands wait at most `answer_timeout_ms` for
  // a server's answer) and returns the checkpoints saved in it.
  Result<std::vector<store::SourceCheckpoint>> Open(const std::string& db_path,
                                                    int answer_timeout_ms,
                                                    store::IncidentSink::Stored on_stored);

  // Records `incidents` with `checkpoints` in one transaction. On failure the error is logged,
  // and an unreachable server takes the link down.
  Status Put(std::vector<core::Incident>& incidents,
             const std::vector<store::SourceCheckpoint>& checkpoints,
             store::RecordOutcome& outcome);
  void PutHeartbeat(const store::Heartbeat& heartbeat);

  // `waiting` tells how many incidents wait for the server (for the log); `then` is called once a
  // reconnection succeeded.
  void OnReconnected(std::function<size_t()> waiting, std::function<void()> then) {
    waiting_ = std::move(waiting);
    on_reconnected_ = std::move(then);
  }
  // No reconnection is tried after this.
  void Stop();

  bool down() const { return down_; }
  // The store as it names itself (a server's URL without its password).
  const std::string& path() const { return store_->path(); }
  const std::string& lock_path() const { return lock_->path(); }
  // The database file was deleted or replaced while the daemon ran (DatabaseLock).
  bool DatabaseReplaced() const { return lock_->DatabaseReplaced(); }

 private:
  void Unreachable(const Status& st);
  void ReconnectLater();
  void Reconnect();

  boost::asio::io_context& io_;
  EventLog& log_;
  Metrics& metrics_;
  const bool reconnect_;
  std::unique_ptr<DatabaseLock> lock_;
  std::optional<store::Store> store_;
  std::optional<store::IncidentSink> sink_;
  std::unique_ptr<boost::asio::steady_timer> timer_;
  std::function<void()> on_reconnected_;
  bool down_ = false;
  bool armed_ = false;
  bool stopped_ = false;
  std::chrono::milliseconds delay_{0};  // set by Open
  std::function<size_t()> waiting_;
};

}  // namespace triage::daemon::detail

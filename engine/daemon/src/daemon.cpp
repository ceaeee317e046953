// The daemon: one Asio event loop (one thread) over inotify, signals and timers. It schedules;
// the work is in its units: the followed files (tail.h: reading, closing, rotation), the folders
// that hold them (folders.h), where a file resumes (file_identity.h, checkpoints.h), the store
// with its lock and reconnection (store_link.h) and the heartbeat (heartbeat.h).
//
// Why the checkpoint discipline looks the way it does: a checkpoint is the offset where a fresh
// pipeline would be in exactly the state the running one is in. That holds only where the
// running one holds nothing (StreamPipeline::Settled), so a file's checkpoint moves only to such
// offsets, and every incident that closed before one is written in the transaction that moves
// it. An incident closed while something else of its file is still open waits in memory for the
// next settled offset (or the quiet gap); after a crash it is simply found again.
#include "triage/daemon/daemon.h"

#include <sys/stat.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <deque>

#include "checkpoints.h"
#include "event_log.h"
#include "exporter.h"
#include "folders.h"
#include "heartbeat.h"
#include "inotify_watcher.h"
#include "notifier.h"
#include "outside_deaths.h"
#include "store_link.h"
#include "tail.h"
#include "triage/atomic_file.h"
#include "triage/core/rules.h"
#include "triage/daemon/file_selector.h"
#include "triage/daemon/metrics.h"
#include "verify_worker.h"

namespace triage::daemon {

namespace {

namespace asio = boost::asio;
using detail::Clock;
using detail::FsChange;
using detail::Tail;
using detail::TailSet;

// A PostgreSQL store: how long a command waits for the server's answer before the connection is
// given up. With the connect_timeout of 10 s (postgres.cpp), SIGTERM ends the daemon within 20 s
// whatever the server does, within the unit's TimeoutStopSec.
constexpr int kStoreAnswerMs = 10000;

class Daemon final : public detail::TailHost {
 public:
  explicit Daemon(const WatchOptions& options)
      : opts_(options), log_(options.log), metrics_(options.version) {}
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;
  Status Start();
  Status RunLoop();

  // detail::TailHost
  void Ready(Tail& t) override;
  void Forget(Tail& t) override { std::erase(ready_, &t); }
  void CommitSoon(std::chrono::milliseconds delay) override { ScheduleCommit(delay); }
  void LookAgain(const std::string& folder, int wd) override {
    folders_->Reconcile(folder, wd, /*startup=*/false);
  }
  void DueTimesChanged() override { ArmTick(); }

 private:
  // Configuration and rules.
  Status LoadSettings(bool initial);
  Status StartStore();
  Status StartExporter();
  void PublishGauges();
  std::vector<std::string> OwnFiles() const;

  // Reading: one turn per ready file, round robin.
  void Drain();
  void RetryFoldersLater();

  // Store.
  void ScheduleCommit(std::chrono::milliseconds delay);
  void Commit();
  void Stored(core::Incident& incident, store::RecordOutcome::Filed filed);
  void WriteHeartbeat(bool running);
  void HeartbeatLater();

  // Events.
  void WaitForSignal();
  void OnSignal(int signo);
  void Tick();
  void ArmTick();
  void Shutdown();
  void StopLoop();

  const WatchOptions& opts_;
  detail::EventLog log_;
  // Before everything that counts into it (the verifier, the notifier), so destroyed after.
  Metrics metrics_;
  asio::io_context io_;
  std::unique_ptr<asio::signal_set> signals_;
  std::unique_ptr<asio::steady_timer> tick_timer_, commit_timer_, heartbeat_timer_, retry_timer_;
  bool retry_armed_ = false;
  // Hands each incident stored to Stored; verification runs apart, afterwards. While its server
  // cannot be reached, what closes waits in pending_.
  std::unique_ptr<detail::StoreLink> store_;
  Status fatal_ = Status::Ok();
  std::unique_ptr<detail::InotifyWatcher> inotify_;
  std::string db_path_;

  core::Config config_;
  std::unique_ptr<FileSelector> selector_;
  detail::TailSettings tail_settings_;
  bool verify_ = false;
  std::unique_ptr<detail::VerifyWorker> verifier_;

  std::vector<std::string> roots_;
  detail::SavedCheckpoints saved_;
  detail::PendingWrite pending_;  // the next transaction
  detail::Counters counters_;
  std::unique_ptr<TailSet> tails_;
  std::unique_ptr<detail::Folders> folders_;
  std::deque<Tail*> ready_;
  bool draining_posted_ = false;
  bool commit_armed_ = false;
  bool tick_armed_ = false;
  bool stopping_ = false;

  std::unique_ptr<detail::MetricsExporter> exporter_;
  std::unique_ptr<detail::Notifier> notifier_;
  std::string started_at_;
};

// ---------------------------------------------------------------------------------------------
// configuration

Status Daemon::LoadSettings(bool initial) {
  auto cfg = core::LoadConfig(opts_.config_path);
  if (!cfg.ok()) return cfg.status().Annotate("configuration");
  auto loaded = core::LoadRules(core::RuleFolders(cfg->rule_folders, opts_.rule_folders));
  if (!loaded.rules || (!initial && !loaded.diagnostics.empty())) {
    std::string first = loaded.diagnostics.empty() ? std::string("no rules loaded")
                                                   : loaded.diagnostics.front().ToString();
    for (const auto& d : loaded.diagnostics) log_.Log({LogRecord::Level::kError, "rules.error", {{"diagnostic", d.ToString()}}});
    const size_t more = loaded.diagnostics.size() > 1 ? loaded.diagnostics.size() - 1 : 0;
    return Status::InvalidInput("rules: " + first +
                                (more ? " (and " + std::to_string(more) + " more)" : std::string()));
  }
  for (const auto& d : loaded.diagnostics) log_.Warn("rules.warning", {{"diagnostic", d.ToString()}});
  for (const auto& w : cfg->warnings) log_.Warn("config.warning", {{"diagnostic", w}});
  auto notify_settings = detail::NotifySettingsFrom(*cfg);
  if (!notify_settings.ok()) return notify_settings.status();
  detail::NotifySettings notify = std::move(notify_settings).value();

  config_ = std::move(cfg).value();
  selector_ = std::make_unique<FileSelector>(
      !opts_.include.empty() ? opts_.include : config_.watch_include,
      !opts_.exclude.empty() ? opts_.exclude : config_.watch_exclude);
  tail_settings_ = detail::TailSettingsOf(loaded.rules, opts_, config_);
  verify_ = opts_.verify || config_.verify_enabled;
  if (initial) {
    db_path_ = opts_.db_path.empty() ? core::ResolveDbPath(std::nullopt, config_) : opts_.db_path;
  }
  auto log = [this](LogRecord r) { log_.Log(std::move(r)); };
  if (verify_ && !opts_.once) {
    if (!opts_.runner_factory) return Status::InvalidInput("verification: no verifier runner");
    if (!verifier_) {
      verifier_ = std::make_unique<detail::VerifyWorker>(
          db_path_, opts_.verify_min_interval_seconds, opts_.verify_queue_limit, &metrics_, log);
    }
    verifier_->SetRunner(opts_.runner_factory(config_));
  } else if (verifier_) {
    verifier_->SetRunner(nullptr);
  }
  if (notify.enabled() && !opts_.once && !notifier_)
    notifier_ = std::make_unique<detail::Notifier>(&metrics_, log);
  if (notifier_) notifier_->Configure(std::move(notify));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// start

Status Daemon::Start() {
  started_at_ = detail::NowUtc();
  // First, so that a signal during start-up (rules compiling, a long first scan) is handled
  // once the loop runs rather than killing the process. --once never runs the loop: its
  // signals keep their default action.
  if (!opts_.once) {
    signals_ = std::make_unique<asio::signal_set>(io_, SIGTERM, SIGINT, SIGHUP);
    WaitForSignal();
  }
  if (Status st = LoadSettings(/*initial=*/true); !st.ok()) return st;
  if (Status st = StartStore(); !st.ok()) return st;
  roots_ = opts_.folders.empty() ? config_.watch_folders : opts_.folders;
  if (roots_.empty()) return Status::InvalidInput("no folder to watch (give DIR or [watch] folders)");

  io_.restart();
  tick_timer_ = std::make_unique<asio::steady_timer>(io_);
  commit_timer_ = std::make_unique<asio::steady_timer>(io_);
  heartbeat_timer_ = std::make_unique<asio::steady_timer>(io_);
  retry_timer_ = std::make_unique<asio::steady_timer>(io_);
  if (!opts_.once) {
    auto watcher = detail::InotifyWatcher::Create(io_, [this](std::vector<FsChange>& changes) {
      if (stopping_) return;
      folders_->Apply(changes);
      PublishGauges();
    });
    if (!watcher.ok()) return watcher.status();
    inotify_ = std::move(watcher).value();
  }
  tails_ = std::make_unique<TailSet>(tail_settings_, saved_, pending_, counters_, metrics_, log_,
                                     *this);
  folders_ = std::make_unique<detail::Folders>(inotify_.get(), selector_, opts_.recursive, *tails_,
                                               log_, [this] { RetryFoldersLater(); });
  folders_->SetOwnFiles(OwnFiles());
  // A pod's container that restarted may have been killed from outside.
  folders_->SetOnNewFile([this](const std::string& path) {
    auto found = detail::DeathsAtRestart(path, opts_.kernel_log_paths, tail_settings_.rules,
                                         tail_settings_.analyzer.host, log_);
    if (found.empty()) return;
    for (auto& inc : found) pending_.incidents.push_back(std::move(inc));
    ScheduleCommit(std::chrono::milliseconds(0));
  });
  for (const auto& root : roots_)
    if (Status st = folders_->AddRoot(root); !st.ok()) return st;
  log_.Info("watch.start", {{"folders", std::to_string(roots_.size())},
                            {"files", std::to_string(tails_->size())},
                            {"db", store_->path()},
                            {"quiet_gap", std::to_string(tail_settings_.quiet_gap)},
                            {"verify", verify_ ? "on" : "off"},
                            {"once", opts_.once ? "yes" : "no"}});
  if (inotify_) inotify_->Start();
  if (!opts_.once) {
    if (Status st = StartExporter(); !st.ok()) return st;
    WriteHeartbeat(true);
    HeartbeatLater();
    if (opts_.service_state) opts_.service_state("READY=1");
  }
  return Status::Ok();
}

// The files the daemon writes, which it never reads even where a watched folder holds them (a
// database beside the logs, --include '*'): the database with SQLite's files, the lock, the
// metrics textfile and its temporary file.
std::vector<std::string> Daemon::OwnFiles() const {
  std::vector<std::string> own;
  if (!store::IsServerUrl(db_path_))
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) own.push_back(db_path_ + suffix);
  own.push_back(store_->lock_path());
  if (!config_.metrics_textfile.empty()) {
    own.push_back(config_.metrics_textfile);
    own.push_back(TemporaryFileOf(config_.metrics_textfile));
  }
  return own;
}

// The lock, the store and the checkpoints saved in it.
Status Daemon::StartStore() {
  store_ = std::make_unique<detail::StoreLink>(io_, log_, metrics_, /*reconnect=*/!opts_.once);
  auto saved = store_->Open(db_path_, kStoreAnswerMs,
                            [this](core::Incident& inc, store::RecordOutcome::Filed filed) {
                              Stored(inc, filed);
                            });
  if (!saved.ok()) return saved.status();
  saved_.Load(std::move(saved).value());
  store_->OnReconnected([this] { return pending_.incidents.size(); },
                        [this] {
                          Commit();
                          WriteHeartbeat(true);
                        });
  return Status::Ok();
}

Status Daemon::StartExporter() {
  detail::ExporterSettings es;
  const std::string listen = !opts_.metrics_listen.empty() ? opts_.metrics_listen : config_.metrics_listen;
  if (!listen.empty()) {
    auto address = detail::ParseListenAddress(listen);
    if (!address.ok()) return address.status().Annotate("metrics");
    es.listen = *address;
  }
  es.textfile = config_.metrics_textfile;
  if (!es.listen && es.textfile.empty()) return Status::Ok();
  es.textfile_seconds = opts_.metrics_textfile_seconds;
  es.healthy_loop_seconds = std::max(30.0, 3 * opts_.heartbeat_seconds);
  PublishGauges();
  auto exporter = detail::MetricsExporter::Start(metrics_, es,
                                                 [this](LogRecord r) { log_.Log(std::move(r)); });
  if (!exporter.ok()) return exporter.status().Annotate("metrics");
  exporter_ = std::move(exporter).value();
  detail::LogFields fields;
  if (es.listen) fields.emplace_back("address", exporter_->bound());
  if (!es.textfile.empty()) fields.emplace_back("textfile", es.textfile);
  log_.Info("metrics.listen", std::move(fields));
  return Status::Ok();
}

// The gauges only the daemon's thread can read, and the loop's liveness for /healthz.
void Daemon::PublishGauges() {
  metrics_.SetFilesWatched(tails_->size());
  Clock::time_point oldest = Clock::time_point::max();
  for (const Tail* t : ready_)
    if (t->ready_since != Clock::time_point{}) oldest = std::min(oldest, t->ready_since);
  if (oldest == Clock::time_point::max()) {
    metrics_.ClearReadBacklog();
  } else {
    metrics_.SetReadBacklogSince(oldest);
  }
  metrics_.LoopAlive();
}

Status Daemon::RunLoop() {
  if (opts_.once) {
    // Catch up: read every file to its end, then end every stream there.
    while (!ready_.empty()) {
      Tail* t = ready_.front();
      ready_.pop_front();
      t->queued = false;
      while (tails_->Read(*t, TailSet::kTurnBudget)) {
      }
    }
    tails_->FinishAll("once");
    Commit();
    if (!pending_.empty()) {
      return Status::Io("the store refused the last write: " + log_.last_error());
    }
    log_.Info("watch.done", {{"files", std::to_string(tails_->size())},
                             {"bytes", std::to_string(counters_.bytes)},
                             {"incidents", std::to_string(counters_.incidents)}});
    return Status::Ok();
  }
  try {
    io_.run();
  } catch (const std::exception& e) {
    return Status::Io(std::string("event loop: ") + e.what());
  }
  return fatal_;
}

// ---------------------------------------------------------------------------------------------
// reading

void Daemon::Ready(Tail& t) {
  t.queued = true;
  if (t.ready_since == Clock::time_point{}) t.ready_since = Clock::now();
  ready_.push_back(&t);
  if (!opts_.once && !draining_posted_) {
    draining_posted_ = true;
    asio::post(io_, [this] { Drain(); });
  }
}

void Daemon::Drain() {
  draining_posted_ = false;
  if (stopping_) return;
  // One turn each, round robin: a busy file cannot starve the others, and inotify events and
  // signals are handled between turns.
  size_t turns = ready_.size();
  for (size_t i = 0; i < turns && !ready_.empty(); ++i) {
    Tail* t = ready_.front();
    ready_.pop_front();
    t->queued = false;
    if (tails_->Read(*t, TailSet::kTurnBudget)) {
      tails_->MarkReady(*t);
    } else {
      t->ready_since = {};
    }
  }
  if (!pending_.incidents.empty()) Commit();
  PublishGauges();
  if (!ready_.empty() && !draining_posted_) {
    draining_posted_ = true;
    asio::post(io_, [this] { Drain(); });
  }
  ArmTick();
}

// A folder whose listing failed is looked at again shortly.
void Daemon::RetryFoldersLater() {
  if (opts_.once || retry_armed_ || stopping_) return;
  retry_armed_ = true;
  retry_timer_->expires_after(std::chrono::seconds(1));
  retry_timer_->async_wait([this](const boost::system::error_code& ec) {
    retry_armed_ = false;
    if (ec || stopping_) return;
    folders_->RetryNow();
  });
}

// ---------------------------------------------------------------------------------------------
// store

void Daemon::ScheduleCommit(std::chrono::milliseconds delay) {
  if (opts_.once || stopping_) return;
  if (commit_armed_ && delay.count() > 0) return;
  commit_armed_ = true;
  commit_timer_->expires_after(delay);
  commit_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    commit_armed_ = false;
    Commit();
  });
}

void Daemon::Commit() {
  if (pending_.empty() || store_->down()) return;
  // An incident without a root cause cannot be filed (and would fail the whole batch).
  std::erase_if(pending_.incidents, [](const core::Incident& i) { return i.causes.empty(); });
  // The files of one job (a torchrun log folder, files named by rank) whose incidents close in
  // one batch are one incident of the job (docs/correlation.md, "Jobs").
  // Each job's incident is named for its job, so that the store joins the parts of it that
  // close in later batches, or on other hosts, into the incident it holds.
  if (!pending_.incidents.empty() && tail_settings_.rules)
    core::FoldJobs(pending_.incidents, tails_->JobInputs(), *tail_settings_.rules);
  const std::vector<store::SourceCheckpoint> cps = pending_.CheckpointList();
  store::RecordOutcome outcome;
  if (Status st = store_->Put(pending_.incidents, cps, outcome); !st.ok()) {
    for (auto& inc : pending_.incidents) inc.id.reset();
    if (st.kind() != Status::Kind::kUnavailable && !stopping_) {
      commit_armed_ = false;
      ScheduleCommit(std::chrono::milliseconds(1000));  // kept; tried again
    }
    return;
  }
  ++counters_.commits;
  counters_.incidents += static_cast<int64_t>(pending_.incidents.size());
  counters_.new_incidents += outcome.new_incidents;
  for (const auto& [id, cp] : pending_.checkpoints)
    if (Tail* t = tails_->FindLive(id); t && !cp.forget) t->committed_offset = cp.offset;
  pending_.Clear();
}

// An occurrence stored: counted and handed to the notifier (a same occurrence read again is
// neither), logged, and queued for verification.
void Daemon::Stored(core::Incident& inc, store::RecordOutcome::Filed filed) {
  // A part of a job's failure joined into its stored incident was counted and notified with it.
  if (filed != store::RecordOutcome::Filed::kReadAgain &&
      filed != store::RecordOutcome::Filed::kJoined) {
    const double now = static_cast<double>(
                           std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count()) /
                       1000.0;
    metrics_.IncidentStored(inc.service, inc.causes.empty() ? "-" : inc.causes.front().cause,
                            inc.host, now);
    if (notifier_) notifier_->Submit(inc, filed == store::RecordOutcome::Filed::kRecurrence);
  }
  log_.Log(IncidentLogRecord(inc));
  if (verifier_ && verify_ && inc.id) verifier_->Submit(std::move(inc));
}

void Daemon::WriteHeartbeat(bool running) {
  detail::HeartbeatState state;
  state.running = running;
  state.started_at = started_at_;
  state.last_error = log_.last_error();
  state.errors = log_.errors();
  state.files = static_cast<int64_t>(tails_->size());
  state.folders = static_cast<int64_t>(folders_->size());
  state.heartbeat_seconds = opts_.heartbeat_seconds;
  state.quiet_gap_seconds = tail_settings_.quiet_gap;
  if (verifier_) {
    state.verifying = true;
    state.verified = static_cast<int64_t>(verifier_->verified());
    state.verify_dropped = static_cast<int64_t>(verifier_->dropped());
    state.verify_failed = static_cast<int64_t>(verifier_->failed());
  }
  store_->PutHeartbeat(detail::MakeHeartbeat(counters_, state));
}

void Daemon::HeartbeatLater() {
  heartbeat_timer_->expires_after(
      std::chrono::milliseconds(static_cast<int64_t>(opts_.heartbeat_seconds * 1000)));
  heartbeat_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    if (store_->DatabaseReplaced()) {
      // Exits with an error rather than reopening: a new empty database would have no
      // checkpoints, and every file would be read again from its start into it.
      fatal_ = Status::Io(db_path_ +
                          ": the database was deleted or replaced while the daemon ran; "
                          "restart `triage watch`");
      log_.Error("store.gone", fatal_.message());
      stopping_ = true;
      StopLoop();
      return;
    }
    PublishGauges();
    WriteHeartbeat(true);
    HeartbeatLater();
  });
}

// ---------------------------------------------------------------------------------------------
// events

void Daemon::WaitForSignal() {
  signals_->async_wait([this](const boost::system::error_code& ec, int signo) {
    if (!ec) OnSignal(signo);
  });
}

void Daemon::OnSignal(int signo) {
  if (signo != SIGHUP) {
    log_.Info("watch.stop", {{"signal", signo == SIGTERM ? "TERM" : "INT"}});
    if (opts_.service_state) opts_.service_state("STOPPING=1");
    Shutdown();
    return;
  }
  ++counters_.reloads;
  if (opts_.service_state) opts_.service_state("RELOADING=1");
  if (Status st = LoadSettings(/*initial=*/false); !st.ok()) {
    log_.Error("reload", st.message(), {{"kept", "previous rules and configuration"}});
  } else {
    log_.Info("reload",
              {{"rules", std::to_string(tail_settings_.rules->signatures().size()) + " signatures"},
               {"quiet_gap", std::to_string(tail_settings_.quiet_gap)}});
    if (opts_.folders.empty())
      for (const auto& f : config_.watch_folders)
        if (!folders_->Watched(f)) {
          roots_.push_back(f);
          folders_->AddFolderRoot(f);
        }
    folders_->RescanAll();
  }
  if (opts_.service_state) opts_.service_state("READY=1");
  WaitForSignal();
}

void Daemon::ArmTick() {
  // One timer, set to the earliest due time: an idle daemon has no timer but the heartbeat's.
  if (stopping_ || opts_.once) return;
  const Clock::time_point next = tails_->NextDue();
  if (next == Clock::time_point::max()) return;
  if (tick_armed_ && tick_timer_->expiry() <= next) return;
  tick_armed_ = true;
  tick_timer_->expires_at(next);
  tick_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    tick_armed_ = false;
    Tick();
  });
}

void Daemon::Tick() {
  if (stopping_) return;
  tails_->CloseDue(Clock::now());
  if (!pending_.incidents.empty()) Commit();
  ArmTick();
}

void Daemon::Shutdown() {
  if (stopping_) return;
  // What has closed is written with the checkpoints of settled offsets; what is still open is
  // read again after a restart (from those checkpoints), so nothing is cut in two. Files that
  // are gone cannot be read again, and a complete failure is written now (TailSet::FinishForStop).
  tails_->FinishForStop();
  ready_.clear();
  Commit();
  if (!pending_.incidents.empty()) {
    // The store could not be written: what is in files still there is read again at the next
    // start (their checkpoints did not move).
    log_.Warn("watch.unwritten", {{"incidents", std::to_string(pending_.incidents.size())},
                                  {"store", store_->down() ? "unreachable" : "refused the write"}});
  }
  stopping_ = true;
  StopLoop();
  WriteHeartbeat(false);
}

// Ends the loop: no more news, signals, timers or checks.
void Daemon::StopLoop() {
  if (inotify_) inotify_->Stop();
  boost::system::error_code ec;
  if (signals_) signals_->cancel(ec);
  tick_timer_->cancel();
  commit_timer_->cancel();
  heartbeat_timer_->cancel();
  retry_timer_->cancel();
  store_->Stop();
  if (verifier_) verifier_->Stop();
  io_.stop();
}

}  // namespace

Status Run(const WatchOptions& options) {
  Daemon daemon(options);
  if (Status st = daemon.Start(); !st.ok()) return st;
  return daemon.RunLoop();
}

}  // namespace triage::daemon

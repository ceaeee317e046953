#include "notifier.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "triage/core/host.h"

extern char** environ;

namespace triage::daemon::detail {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kStderrKept = 1024;
constexpr auto kPollStep = std::chrono::milliseconds(20);

std::string ThisHost() { return core::ThisHost(); }

// Sets O_NONBLOCK; false on failure.
bool NonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// SIGPIPE blocked on this thread for a scope: writing to a hook that closed its stdin gives
// EPIPE, never the signal's default action (ending the daemon). A SIGPIPE left pending by such a
// write is taken before the mask is restored.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlocked() {
    if (!sigismember(&old_, SIGPIPE)) {
      const timespec zero{};
      while (sigtimedwait(&pipe_, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_, old_;
};

// A descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Close(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Result<NotifySettings> NotifySettingsFrom(const core::Config& config) {
  NotifySettings out;
  out.exec = config.notify_exec;
  out.deadline_seconds = config.notify_deadline_seconds;
  out.per_minute = config.notify_per_minute;
  out.ca_file = config.notify_ca_file;
  out.payload.format = ParseNotifyFormat(config.notify_format);
  out.payload.routing_key = config.notify_routing_key;
  out.payload.link = config.notify_link;
  if (!config.notify_webhook.empty()) {
    auto url = ParseHttpUrl(config.notify_webhook);
    if (!url.ok()) return url.status().Annotate("notify.webhook");
    out.webhook = *url;
  }
  return out;
}

void DeliverNow(const NotifySettings& settings, const NotifyDocuments& docs,
                const NotifyOutcome& outcome) {
  if (!settings.exec.empty() && !docs.exec.empty())
    outcome("exec", RunHook(settings.exec, docs.exec, settings.deadline_seconds));
  if (settings.webhook && !docs.webhook.empty()) {
    outcome("webhook", HttpPost(*settings.webhook, "application/json", docs.webhook,
                                settings.deadline_seconds, settings.ca_file));
  }
}

Status RunHook(const std::vector<std::string>& argv, const std::string& input,
               double deadline_seconds) {
  if (argv.empty()) return Status::InvalidInput("no program");
  const std::string& program = argv.front();
  SigpipeBlocked no_sigpipe;
  int in[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return Status::Io(program + ": pipe: " + std::strerror(errno));
  Fd in_read(in[0]), in_write(in[1]);
  if (pipe2(err, O_CLOEXEC) != 0) return Status::Io(program + ": pipe: " + std::strerror(errno));
  Fd err_read(err[0]), err_write(err[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_read.get(), 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), 2);
  // The daemon's own descriptors (log files, the database, inotify) stay with the daemon.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, to be killed whole at the deadline; signals as a fresh process has.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  in_read.Close();
  err_write.Close();
  if (rc != 0) return Status::Unavailable(program + ": " + std::strerror(rc));

  NonBlocking(in_write.get());
  NonBlocking(err_read.get());
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(deadline_seconds));
  size_t written = 0;
  if (input.empty()) in_write.Close();
  std::string errors;
  int wstatus = 0;
  bool exited = false;
  auto read_errors = [&] {
    char buf[512];
    for (;;) {
      const ssize_t n = read(err_read.get(), buf, sizeof buf);
      if (n > 0) {
        errors.append(buf, std::min(static_cast<size_t>(n), kStderrKept - std::min(kStderrKept, errors.size())));
        continue;
      }
      if (n == 0 || (errno != EINTR && errno != EAGAIN)) err_read.Close();
      return;
    }
  };
  for (;;) {
    const pid_t r = waitpid(pid, &wstatus, WNOHANG);
    if (r == pid) {
      exited = true;
      if (err_read.get() >= 0) read_errors();
      break;
    }
    const auto now = Clock::now();
    if (now >= deadline) break;
    pollfd fds[2];
    nfds_t n = 0;
    if (in_write.get() >= 0) fds[n++] = {in_write.get(), POLLOUT, 0};
    if (err_read.get() >= 0) fds[n++] = {err_read.get(), POLLIN, 0};
    const auto wait = std::min<Clock::duration>(kPollStep, deadline - now);
    const int ms = static_cast<int>(
        std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::milliseconds>(wait).count()));
    if (poll(n ? fds : nullptr, n, ms) <= 0) continue;
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].fd == in_write.get() && fds[i].revents) {
        const ssize_t w = write(in_write.get(), input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        // Done, or the hook closed its stdin (EPIPE): either way nothing more goes to it.
        if (written == input.size() || (w < 0 && errno != EAGAIN && errno != EINTR))
          in_write.Close();
      } else if (fds[i].fd == err_read.get() && fds[i].revents) {
        read_errors();
      }
    }
  }
  if (!exited) {
    kill(-pid, SIGKILL);
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    char after[64];
    std::snprintf(after, sizeof after, ": still running after %g s, killed", deadline_seconds);
    return Status::Timeout(program + after);
  }
  const std::string said = Trimmed(errors);
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return Status::Ok();
  std::string why = WIFEXITED(wstatus) ? "exited with status " + std::to_string(WEXITSTATUS(wstatus))
                    : WIFSIGNALED(wstatus) ? "killed by signal " + std::to_string(WTERMSIG(wstatus))
                                           : std::string("stopped");
  if (!said.empty()) why += ": " + said;
  return Status::Unavailable(program + ": " + why);
}

Notifier::Notifier(Metrics* metrics, Log log)
    : metrics_(metrics), log_(std::move(log)), host_(ThisHost()), thread_([this] { Loop(); }) {}

Notifier::~Notifier() { Stop(); }

void Notifier::Configure(NotifySettings settings) {
  std::lock_guard<std::mutex> lock(mu_);
  settings_ = std::move(settings);
}

void Notifier::Channels(const NotifySettings& settings, std::vector<std::string>& out) const {
  if (!settings.exec.empty()) out.emplace_back("exec");
  if (settings.webhook) out.emplace_back("webhook");
}

void Notifier::Submit(const core::Incident& incident, bool recurrence) {
  const std::string id = incident.id ? std::to_string(*incident.id) : "-";
  NotifyDocuments docs;
  docs.critical = IsCritical(incident);
  std::vector<std::string> channels;
  bool held = false, first_held = false;
  double limit = 0;
  PayloadSettings payload;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || !settings_.enabled()) return;
    Channels(settings_, channels);
    payload = settings_.payload;
    const auto now = Clock::now();
    while (!sent_.empty() && now - sent_.front() >= std::chrono::minutes(1)) sent_.pop_front();
    limit = settings_.per_minute;
    // A hardware fault is never held back; it still counts against the limit.
    if (static_cast<double>(sent_.size()) >= limit && !docs.critical) {
      held = true;
      first_held = held_.total == 0;
      if (first_held) held_first_ = now;
      held_last_ = now;
      ++held_.total;
      ++held_.by_cause[AlertCauseOf(incident)];
    } else {
      sent_.push_back(now);
    }
  }
  if (held) {
    if (metrics_)
      for (const auto& c : channels) metrics_->Notification(c, "limited");
    if (first_held) {
      log_({LogRecord::Level::kWarning,
            "notify.limited",
            {{"incident", id}, {"limit", std::to_string(static_cast<int64_t>(limit)) + "/min"}}});
    }
    cv_.notify_one();  // the summary's time
    return;
  }
  const NotifyEvent event = recurrence ? NotifyEvent::kRecurrence : NotifyEvent::kNew;
  docs.exec = NotificationJson(incident, event, host_);
  docs.webhook = payload.format == NotifyFormat::kJson ? docs.exec
                                                       : WebhookDocument(payload, incident, event, host_);
  bool dropped = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    if (queue_.size() >= std::max<size_t>(1, settings_.queue_limit)) {
      // The oldest that is not a hardware fault; when all are, none (the queue grows by one).
      auto victim = std::find_if(queue_.begin(), queue_.end(),
                                 [](const NotifyDocuments& d) { return !d.critical; });
      if (victim != queue_.end()) {
        queue_.erase(victim);
        dropped = true;
      }
    }
    queue_.push_back(std::move(docs));
  }
  cv_.notify_one();
  if (dropped) {
    if (metrics_)
      for (const auto& c : channels) metrics_->Notification(c, "dropped");
    log_({LogRecord::Level::kWarning, "notify.dropped", {{"reason", "queue full"}}});
  }
}

void Notifier::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stop_) {
      stop_ = true;
      drain_until_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(settings_.deadline_seconds));
    }
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Clock::time_point Notifier::SummaryDue() const {
  // Once the burst has been quiet a while, or a minute after its first held one; never sooner
  // than a minute after the last summary.
  auto due = std::min(held_last_ + kSummaryQuiet, held_first_ + std::chrono::minutes(1));
  if (last_summary_) due = std::max(due, *last_summary_ + std::chrono::minutes(1));
  return due;
}

void Notifier::Loop() {
  for (;;) {
    NotifyDocuments docs;
    NotifySettings settings;
    std::optional<HeldBack> summary;
    size_t dropped = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (!stop_ && queue_.empty() && (held_.total == 0 || Clock::now() < SummaryDue())) {
        if (held_.total == 0) {
          cv_.wait(lock);
        } else {
          cv_.wait_until(lock, SummaryDue());
        }
      }
      const auto now = Clock::now();
      settings = settings_;
      if (held_.total > 0 && (stop_ || now >= SummaryDue())) {
        summary = std::move(held_);
        held_ = {};
        last_summary_ = now;
      } else if (queue_.empty()) {
        return;  // stopped
      } else if (stop_ && now >= drain_until_) {
        dropped = queue_.size();
        queue_.clear();
      } else {
        docs = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    if (dropped) {
      log_({LogRecord::Level::kWarning,
            "notify.dropped",
            {{"count", std::to_string(dropped)}, {"reason", "stopping"}}});
      return;
    }
    if (summary) {
      log_({LogRecord::Level::kInfo, "notify.held_back",
            {{"count", std::to_string(summary->total)}, {"summary", HeldBackText(*summary, host_)}}});
      docs.exec = HeldBackJson(*summary, host_);
      docs.webhook = HeldBackDocument(settings.payload, *summary, host_);
    }
    Deliver(settings, docs);
  }
}

void Notifier::Deliver(const NotifySettings& settings, const NotifyDocuments& docs) {
  DeliverNow(settings, docs, [&](const char* channel, const Status& st) {
    const char* result = st.ok() ? "sent" : st.kind() == Status::Kind::kTimeout ? "timeout" : "failed";
    if (metrics_) metrics_->Notification(channel, result);
    if (st.ok()) {
      log_({LogRecord::Level::kDebug, "notify.sent", {{"channel", channel}}});
    } else {
      log_({LogRecord::Level::kWarning, "notify.failed",
            {{"channel", channel}, {"error", st.message()}}});
    }
  });
}

}  // namespace triage::daemon::detail

namespace triage::daemon {

Status NotifyResolved(const core::Config& config, const core::Incident& incident) {
  auto settings = detail::NotifySettingsFrom(config);
  if (!settings.ok()) return settings.status();
  if (!settings->enabled()) return Status::Ok();
  const std::string host = core::ThisHost();
  detail::NotifyDocuments docs;
  docs.exec = detail::NotificationJson(incident, detail::NotifyEvent::kResolved, host);
  docs.webhook = detail::WebhookDocument(settings->payload, incident, detail::NotifyEvent::kResolved, host);
  Status first = Status::Ok();
  detail::DeliverNow(*settings, docs, [&](const char* channel, const Status& st) {
    if (!st.ok() && first.ok()) first = Status(st).Annotate(std::string("notify.") + channel);
  });
  return first;
}

}  // namespace triage::daemon

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
#include "triage/core/report.h"
#include "triage/json.h"

extern char** environ;

namespace triage::daemon::detail {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kStderrKept = 1024;
constexpr size_t kTextPart = 200;  // bytes of each log-borne part of the summary line
constexpr auto kPollStep = std::chrono::milliseconds(20);

std::string ThisHost() { return core::ThisHost(); }

// A part of the summary line: one line, no control characters, bounded, and nothing a chat
// reads as markup (the text comes from a log): Slack's commands and mentions ("<!channel>",
// "<@U123>", "<url|label>") lose their angle brackets to look-alikes, "@here", "@channel" and
// "@everyone" their at sign, a Markdown link its "](", and the bidirectional controls (U+202A to
// U+202E, U+2066 to U+2069, U+200E, U+200F, U+061C) that reorder what a reader sees are dropped.
std::string Part(std::string_view s) {
  const std::string clean = SanitizeUtf8(s.substr(0, std::min(s.size(), kTextPart)));
  std::string out;
  for (size_t i = 0; i < clean.size(); ++i) {
    const auto c = static_cast<unsigned char>(clean[i]);
    const std::string_view rest = std::string_view(clean).substr(i);
    if (c < 0x20 || c == 0x7f) {
      out += ' ';
    } else if (c == '<') {
      out += "\u2039";
    } else if (c == '>') {
      out += "\u203a";
    } else if (c == '@' && (rest.substr(1, 4) == "here" || rest.substr(1, 7) == "channel" ||
                            rest.substr(1, 8) == "everyone")) {
      out += "\uff20";
    } else if (c == ']' && rest.substr(1, 1) == "(") {
      out += "] ";
    } else if (c == 0xe2 && i + 2 < clean.size() &&
               ((clean[i + 1] == '\x80' && ((clean[i + 2] >= '\xaa' && clean[i + 2] <= '\xae') ||
                                            clean[i + 2] == '\x8e' || clean[i + 2] == '\x8f')) ||
                (clean[i + 1] == '\x81' && clean[i + 2] >= '\xa6' && clean[i + 2] <= '\xa9'))) {
      i += 2;
    } else if (c == 0xd8 && i + 1 < clean.size() && clean[i + 1] == '\x9c') {
      i += 1;
    } else {
      out += clean[i];
    }
  }
  return out;
}

std::string SummaryLine(const core::Incident& inc, bool recurrence, const std::string& host) {
  std::string text = recurrence ? "triage: incident recurred" : "triage: new incident";
  if (inc.id) text += " #" + std::to_string(*inc.id);
  text += " on ";
  text += Part(inc.host.empty() ? host : inc.host);
  text += ": ";
  text += Part(inc.service);
  if (!inc.causes.empty()) {
    const core::Cause& top = inc.causes.front();
    text += ": ";
    text += Part(top.title.empty() ? top.cause : top.title);
    text += " (";
    text += Part(top.cause);
    text += ")";
  }
  return text;
}

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

std::string NotificationJson(const core::Incident& incident, bool recurrence,
                             const std::string& host) {
  JsonWriter w;
  w.BeginObject();
  w.Key("text").String(SummaryLine(incident, recurrence, host));
  w.Key("event").String(recurrence ? "recurrence" : "new");
  w.Key("host").String(host);
  w.Key("incident");
  core::WriteIncidentJson(w, incident);
  w.EndObject();
  return w.Take();
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

void Notifier::Submit(const core::Incident& incident, bool recurrence) {
  const std::string id = incident.id ? std::to_string(*incident.id) : "-";
  std::vector<std::string> channels;
  uint64_t resumed_after = 0;
  bool limited = false, first_limited = false;
  double limit = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || !settings_.enabled()) return;
    if (!settings_.exec.empty()) channels.emplace_back("exec");
    if (settings_.webhook) channels.emplace_back("webhook");
    const auto now = Clock::now();
    while (!sent_.empty() && now - sent_.front() >= std::chrono::minutes(1)) sent_.pop_front();
    limit = settings_.per_minute;
    if (static_cast<double>(sent_.size()) >= limit) {
      limited = true;
      first_limited = ++limited_in_burst_ == 1;
    } else {
      sent_.push_back(now);
      resumed_after = limited_in_burst_;
      limited_in_burst_ = 0;
    }
  }
  if (limited) {
    if (metrics_)
      for (const auto& c : channels) metrics_->Notification(c, "limited");
    if (first_limited) {
      log_({LogRecord::Level::kWarning,
            "notify.limited",
            {{"incident", id}, {"limit", std::to_string(static_cast<int64_t>(limit)) + "/min"}}});
    }
    return;
  }
  if (resumed_after) {
    log_({LogRecord::Level::kInfo, "notify.resumed", {{"dropped", std::to_string(resumed_after)}}});
  }
  std::string doc = NotificationJson(incident, recurrence, host_);
  std::optional<std::string> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    if (queue_.size() >= std::max<size_t>(1, settings_.queue_limit)) {
      queue_.pop_front();
      dropped = "queue full";
    }
    queue_.push_back(std::move(doc));
  }
  cv_.notify_one();
  if (dropped) {
    if (metrics_)
      for (const auto& c : channels) metrics_->Notification(c, "dropped");
    log_({LogRecord::Level::kWarning, "notify.dropped", {{"reason", *dropped}}});
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

void Notifier::Loop() {
  for (;;) {
    std::string doc;
    NotifySettings settings;
    size_t dropped = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopped
      if (stop_ && Clock::now() >= drain_until_) {
        dropped = queue_.size();
        queue_.clear();
      } else {
        doc = std::move(queue_.front());
        queue_.pop_front();
        settings = settings_;
      }
    }
    if (dropped) {
      log_({LogRecord::Level::kWarning,
            "notify.dropped",
            {{"count", std::to_string(dropped)}, {"reason", "stopping"}}});
      return;
    }
    Deliver(settings, doc);
  }
}

void Notifier::Deliver(const NotifySettings& settings, const std::string& doc) {
  auto outcome = [&](const char* channel, const Status& st) {
    const char* result = st.ok() ? "sent" : st.kind() == Status::Kind::kTimeout ? "timeout" : "failed";
    if (metrics_) metrics_->Notification(channel, result);
    if (st.ok()) {
      log_({LogRecord::Level::kDebug, "notify.sent", {{"channel", channel}}});
    } else {
      log_({LogRecord::Level::kWarning, "notify.failed",
            {{"channel", channel}, {"error", st.message()}}});
    }
  };
  if (!settings.exec.empty()) outcome("exec", RunHook(settings.exec, doc, settings.deadline_seconds));
  if (settings.webhook) {
    outcome("webhook",
            HttpPost(*settings.webhook, "application/json", doc, settings.deadline_seconds));
  }
}

}  // namespace triage::daemon::detail

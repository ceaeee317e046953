// The isolated run of a check (fork, pipe, deadline), the registry and the runner.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "common.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {

const char* HostStatusName(HostStatus s) {
  switch (s) {
    case HostStatus::kPass: return "pass";
    case HostStatus::kWarn: return "warn";
    case HostStatus::kFail: return "fail";
    case HostStatus::kUnavailable: return "unavailable";
  }
  return "?";
}

Finding Finding::Inconclusive(std::string reason, std::string facts) {
  return {core::Verdict::kInconclusive, std::move(reason), std::move(facts),
          HostStatus::kUnavailable};
}
Finding Finding::Skipped(std::string reason, std::string facts) {
  return {core::Verdict::kSkipped, std::move(reason), std::move(facts), HostStatus::kUnavailable};
}
Finding Finding::Confirmed(std::string reason, std::string facts) {
  return {core::Verdict::kConfirmed, std::move(reason), std::move(facts), HostStatus::kFail};
}
Finding Finding::Refuted(std::string reason, std::string facts) {
  return {core::Verdict::kRefuted, std::move(reason), std::move(facts), HostStatus::kPass};
}
Finding Finding::Host(HostStatus status, std::string detail, std::string facts) {
  return {core::Verdict::kConfirmed, std::move(detail), std::move(facts), status};
}

// --- registry ---

Registry Registry::Builtin() {
  Registry r;
  r.Add(MakeGpuDevices());
  r.Add(MakeCudaToolkits());
  r.Add(MakeCudaCompileLaunch());
  r.Add(MakeCudaFatbin());
  r.Add(MakeCudaMemory());
  r.Add(MakeGpuHealth());
  r.Add(MakeGpuPeers());
  r.Add(MakePythonEnv());
  r.Add(MakeHostOom());
  r.Add(MakeNativeLib());
  r.Add(MakeNetPort());
  return r;
}

void Registry::Add(std::unique_ptr<Verifier> verifier) {
  for (auto& v : verifiers_)
    if (v->name() == verifier->name()) {
      v = std::move(verifier);
      return;
    }
  verifiers_.push_back(std::move(verifier));
}

const Verifier* Registry::Find(std::string_view name) const {
  for (const auto& v : verifiers_)
    if (v->name() == name) return v.get();
  return nullptr;
}

// --- the child's answer on the pipe: "<verdict> <status> <reason length> <facts length>\n"
// followed by the reason and the facts bytes.

namespace {

std::string Encode(const Finding& f) {
  std::string out = std::to_string(static_cast<int>(f.verdict)) + " " +
                    std::to_string(static_cast<int>(f.status)) + " " +
                    std::to_string(f.reason.size()) + " " + std::to_string(f.facts_json.size()) +
                    "\n";
  out += f.reason;
  out += f.facts_json;
  return out;
}

bool Decode(const std::string& data, Finding& f) {
  size_t nl = data.find('\n');
  if (nl == std::string::npos) return false;
  int verdict = -1, status = -1;
  unsigned long long reason_len = 0, facts_len = 0;
  if (std::sscanf(data.substr(0, nl).c_str(), "%d %d %llu %llu", &verdict, &status, &reason_len,
                  &facts_len) != 4)
    return false;
  if (verdict < 0 || verdict > 3 || status < 0 || status > 3) return false;
  if (data.size() != nl + 1 + reason_len + facts_len) return false;
  f.verdict = static_cast<core::Verdict>(verdict);
  f.status = static_cast<HostStatus>(status);
  f.reason = data.substr(nl + 1, reason_len);
  f.facts_json = data.substr(nl + 1 + reason_len, facts_len);
  return true;
}

void WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

std::string DeadlineText(double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  return buf;
}

[[noreturn]] void ChildMain(int fd, const Verifier& verifier, const VerifyConfig& config,
                            const Hypothesis& hypothesis) {
  int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    ::dup2(null_fd, 0);
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    if (null_fd > 2) ::close(null_fd);
  }
  ::signal(SIGPIPE, SIG_IGN);
  Finding f;
  try {
    f = verifier.Check(config, hypothesis);
  } catch (const std::exception& e) {
    f = Finding::Inconclusive(std::string("crashed: ") + e.what());
  } catch (...) {
    f = Finding::Inconclusive("crashed: unknown exception");
  }
  WriteAll(fd, Encode(f));
  ::close(fd);
  ::_exit(0);
}

}  // namespace

IsolatedResult RunIsolated(const Verifier& verifier, const VerifyConfig& config,
                           const Hypothesis& hypothesis) {
  IsolatedResult result;
  core::Verification& v = result.verification;
  v.verifier = std::string(verifier.name());
  v.host = HostName();
  v.facts_json = "{}";
  const auto start = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
  };

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    v.verdict = core::Verdict::kInconclusive;
    v.reason = std::string("cannot isolate: pipe: ") + std::strerror(errno);
    return result;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    v.verdict = core::Verdict::kInconclusive;
    v.reason = std::string("cannot isolate: fork: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::close(fds[0]);
    ChildMain(fds[1], verifier, config, hypothesis);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before any kill
  ::close(fds[1]);

  const double deadline_s = config.deadline_seconds > 0 ? config.deadline_seconds : 10;
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(deadline_s));
  std::string data;
  bool timed_out = false;
  bool eof = false;
  while (!eof) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[65536];
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof = true;
      break;
    }
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);

  int wstatus = 0;
  bool reaped = false;
  if (!timed_out) {
    // The child closed its end: it is exiting (or a grandchild kept the pipe, whose group we
    // kill below). Give it until the deadline to finish.
    while (std::chrono::steady_clock::now() < deadline) {
      pid_t w = ::waitpid(pid, &wstatus, WNOHANG);
      if (w == pid) {
        reaped = true;
        break;
      }
      if (w < 0 && errno != EINTR) break;
      ::usleep(2000);
    }
    if (!reaped) timed_out = true;
  }
  ::kill(-pid, SIGKILL);  // the child's whole group: a hang, or programs it left behind
  if (!reaped) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }
  v.ms = elapsed_ms();

  Finding f;
  if (timed_out && !Decode(data, f)) {
    v.verdict = core::Verdict::kInconclusive;
    v.reason = "deadline: killed after " + DeadlineText(deadline_s);
    return result;
  }
  if (WIFSIGNALED(wstatus) && !Decode(data, f)) {
    int sig = WTERMSIG(wstatus);
    v.verdict = core::Verdict::kInconclusive;
    v.reason = "crashed: signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
    return result;
  }
  if (!Decode(data, f)) {
    v.verdict = core::Verdict::kInconclusive;
    v.reason = "crashed: exited with status " +
               std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) +
               " without an answer";
    return result;
  }
  v.verdict = f.verdict;
  v.reason = std::move(f.reason);
  v.facts_json = f.facts_json.empty() ? "{}" : std::move(f.facts_json);
  result.status = f.status;
  return result;
}

namespace {

// A rule's argument whose capture was absent arrives empty or as its "{name}" placeholder: it
// says nothing, so the verifier falls back (to the device, the search) as if it were not given.
std::map<std::string, std::string> UsableArgs(const std::map<std::string, std::string>& args) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : args) {
    bool placeholder = v.size() >= 2 && v.front() == '{' && v.back() == '}' &&
                       v.find_first_of("{}", 1) == v.size() - 1;
    if (!v.empty() && !placeholder) out.emplace(k, v);
  }
  return out;
}

class IsolatedRunner final : public core::VerificationRunner {
 public:
  IsolatedRunner(VerifyConfig config, std::shared_ptr<const Registry> registry)
      : config_(std::move(config)), registry_(std::move(registry)) {}

  void VerifyIncident(core::Incident& incident) override {
    for (auto& cause : incident.causes) {
      for (const auto& request : cause.verify) {
        Hypothesis h{cause.cause, UsableArgs(request.args)};
        const Verifier* verifier = registry_->Find(request.verifier);
        if (!verifier) {
          core::Verification v;
          v.verifier = request.verifier;
          v.verdict = core::Verdict::kInconclusive;
          v.reason = "unknown verifier " + request.verifier;
          v.facts_json = "{}";
          char buf[256] = {};
          v.host = ::gethostname(buf, sizeof buf - 1) == 0 ? buf : "localhost";
          cause.verifications.push_back(std::move(v));
          continue;
        }
        cause.verifications.push_back(RunIsolated(*verifier, config_, h).verification);
      }
    }
  }

 private:
  VerifyConfig config_;
  std::shared_ptr<const Registry> registry_;
};

}  // namespace

std::unique_ptr<core::VerificationRunner> MakeVerificationRunner(
    const VerifyConfig& config, std::shared_ptr<const Registry> registry) {
  return std::make_unique<IsolatedRunner>(config, std::move(registry));
}

std::unique_ptr<core::VerificationRunner> MakeVerificationRunner(const VerifyConfig& config) {
  return MakeVerificationRunner(config, std::make_shared<const Registry>(Registry::Builtin()));
}

VerifyConfig VerifyConfigFrom(const core::Config& config, bool trust_log_paths) {
  VerifyConfig v;
  if (config.verify_deadline_seconds > 0) v.deadline_seconds = config.verify_deadline_seconds;
  v.allowed_prefixes = config.verify_allowed_prefixes;
  v.driver_search_paths = config.verify_driver_paths;
  v.toolkit_search_paths = config.verify_toolkit_paths;
  v.trust_log_paths = trust_log_paths;
  return v;
}

std::vector<HostCheck> RunHostChecks(const VerifyConfig& config, const Registry& registry) {
  std::vector<HostCheck> checks;
  for (const auto& v : registry.verifiers()) {
    if (!v->host_check()) continue;
    IsolatedResult r = RunIsolated(*v, config, Hypothesis{});
    HostCheck c;
    c.name = std::string(v->name());
    c.status = r.status;
    if (r.verification.verdict == core::Verdict::kInconclusive ||
        r.verification.verdict == core::Verdict::kSkipped) {
      // A check that could not run (deadline, crash, no driver) is unavailable, whatever the
      // child managed to say.
      if (c.status == HostStatus::kPass) c.status = HostStatus::kUnavailable;
    }
    c.detail = r.verification.reason;
    c.facts_json = r.verification.facts_json;
    c.ms = r.verification.ms;
    checks.push_back(std::move(c));
  }
  return checks;
}

}  // namespace triage::verifiers

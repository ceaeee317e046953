// The isolated run of a check (fork, pipe, deadline), the registry and the runner.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common.h"
#include "triage/core/host.h"
#include "triage/core/known_bugs.h"
#include "triage/core/versions.h"
#include "triage/verifiers/detail/site.h"
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
Finding Finding::NotReproduced(std::string reason, std::string facts) {
  return {core::Verdict::kNotReproduced, std::move(reason), std::move(facts), HostStatus::kPass};
}
Finding Finding::NotApplicable(std::string reason, std::string facts) {
  return {core::Verdict::kNotApplicable, std::move(reason), std::move(facts), HostStatus::kUnavailable};
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
  r.Add(MakeHostDisk());
  r.Add(MakeHostShm());
  r.Add(MakeHostPath());
  r.Add(MakeGpuVisible());
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
  if (verdict < 0 || verdict > static_cast<int>(core::Verdict::kNotApplicable) || status < 0 ||
      status > 3)
    return false;
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

std::string HostName() { return core::ThisHost(); }

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

// A placeholder a template left for a capture the log did not have: "{port}" (the rule's own
// text) or "<port>" (a filled template's mark for a missing capture).
bool IsPlaceholder(const std::string& v) {
  if (v.size() < 3) return false;
  const char open = v.front(), close = v.back();
  if (!((open == '{' && close == '}') || (open == '<' && close == '>'))) return false;
  for (size_t i = 1; i + 1 < v.size(); ++i) {
    const char c = v[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '|') return false;
  }
  return true;
}

// A rule's argument whose capture was absent arrives empty or as a placeholder: it says nothing,
// so the verifier falls back (to the device, the search) as if it were not given. A placeholder
// must never reach a reason as if the log had said it.
std::map<std::string, std::string> UsableArgs(const std::map<std::string, std::string>& args) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : args)
    if (!v.empty() && !IsPlaceholder(v)) out.emplace(k, v);
  return out;
}

// This machine's GPUs, asked in a child like any check (a wedged driver costs only this), and
// sent back as lines: "known 0|1", "note <text>", "gpu <arch> <name>".
class GpuInventory final : public Verifier {
 public:
  std::string_view name() const override { return "host.gpus"; }
  Finding Check(const VerifyConfig& config, const Hypothesis&) const override {
    HostIdentity id = detail::ProbeGpus(config);
    std::string text = std::string("known ") + (id.gpus_known ? "1" : "0") + "\n";
    if (!id.gpu_note.empty()) text += "note " + Oneline(id.gpu_note) + "\n";
    for (const auto& g : id.gpus) text += "gpu " + std::to_string(g.arch) + " " + Oneline(g.name) + "\n";
    if (!id.driver_release.empty()) text += "driver " + Oneline(id.driver_release) + "\n";
    return Finding::Inconclusive(text);
  }
  static void Read(const std::string& text, HostIdentity& id) {
    for (const auto& line : SplitLines(text)) {
      if (StartsWith(line, "known ")) id.gpus_known = line == "known 1";
      if (StartsWith(line, "note ")) id.gpu_note = line.substr(5);
      if (StartsWith(line, "driver ")) id.driver_release = line.substr(7);
      if (StartsWith(line, "gpu ")) {
        size_t sp = line.find(' ', 4);
        if (sp == std::string::npos) continue;
        id.gpus.push_back({line.substr(sp + 1), std::atoi(line.substr(4, sp - 4).c_str())});
      }
    }
  }

 private:
  static std::string Oneline(std::string s) {
    for (char& c : s)
      if (c == '\n' || c == '\r') c = ' ';
    return s;
  }
};

core::Verification NotRun(const std::string& verifier, const std::string& host, std::string reason,
                          core::Verdict verdict, std::string facts = "{}") {
  core::Verification v;
  v.verifier = verifier;
  v.verdict = verdict;
  v.reason = std::move(reason);
  v.facts_json = std::move(facts);
  v.host = host;
  return v;
}

class IsolatedRunner final : public core::VerificationRunner {
 public:
  IsolatedRunner(VerifyConfig config, std::shared_ptr<const Registry> registry)
      : config_(std::move(config)), registry_(std::move(registry)) {}

  void VerifyIncident(core::Incident& incident) override {
    const std::vector<std::string> wanted = core::PackagesToLookUp(incident);
    if (wanted.empty() && std::all_of(incident.causes.begin(), incident.causes.end(),
                                      [](const core::Cause& c) { return c.verify.empty(); }))
      return;  // nothing to check: no site to read or judge
    const std::string here_name = config_.identity ? config_.identity->name : HostName();
    LogSite log = detail::ReadLogSite(incident, here_name, source_budget_);
    HostIdentity here;
    const bool wants_driver = std::find(wanted.begin(), wanted.end(), "driver") != wanted.end();
    if (config_.identity) {
      here = *config_.identity;
    } else {
      here.name = here_name;
      // Only a log that names GPUs (or a known bug the driver's version decides) needs this
      // machine's: the driver is asked once per runner.
      if (detail::NamesGpus(log) || wants_driver) here = Gpus(here_name);
    }
    const detail::SiteJudgement site = detail::JudgeSite(log, here);
    incident.verified_on = core::VerificationSite{here.name, site.log_host, site.other_host, site.reason};
    if (!site.other_host) AddHostVersions(log, here, wanted, incident.versions);

    for (auto& cause : incident.causes) {
      for (const auto& request : cause.verify) {
        if (site.other_host) {
          // Nothing here can confirm or refute what happened on another machine.
          cause.verifications.push_back(NotRun(request.verifier, here.name, site.reason,
                                               core::Verdict::kNotApplicable, site.facts_json));
          continue;
        }
        const Verifier* verifier = registry_->Find(request.verifier);
        if (!verifier) {
          cause.verifications.push_back(NotRun(request.verifier, here.name,
                                               "unknown verifier " + request.verifier,
                                               core::Verdict::kInconclusive));
          continue;
        }
        Hypothesis h{cause.cause, UsableArgs(request.args), UsableArgs(cause.captures), log};
        core::Verification v = RunIsolated(*verifier, config_, h).verification;
        v.host = here.name;
        cause.verifications.push_back(std::move(v));
      }
    }
  }

 private:
  // The versions of `wanted` packages this host has: the Python distributions in the package
  // folders the log names (their .dist-info and .egg-info folders' names; nothing is run), and
  // the driver's release as NVML gives it. A package found in neither stays unknown.
  static void AddHostVersions(const LogSite& log, const HostIdentity& here,
                              const std::vector<std::string>& wanted,
                              std::vector<core::PackageVersion>& versions) {
    auto want = [&](const std::string& p) {
      return std::find(wanted.begin(), wanted.end(), p) != wanted.end() &&
             std::none_of(versions.begin(), versions.end(),
                          [&](const core::PackageVersion& v) { return v.package == p; });
    };
    if (want("driver") && !here.driver_release.empty())
      versions.push_back({"driver", here.driver_release, "host", "nvml", 0});
    for (const auto& folder : log.python_sites) {
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
        const std::string name = entry.path().filename().string();
        const size_t suffix = name.rfind(name.size() > 10 && name.compare(name.size() - 10, 10, ".dist-info") == 0
                                             ? ".dist-info" : ".egg-info");
        if (suffix == std::string::npos || suffix + 9 > name.size()) continue;
        const size_t dash = name.find('-');
        if (dash == std::string::npos || dash >= suffix) continue;
        std::string package = core::NormalizePackage(name.substr(0, dash));
        std::string version = name.substr(dash + 1, suffix - dash - 1);
        if (version.find('-') != std::string::npos) version.erase(version.find('-'));  // egg-info's -pyX.Y
        if (!want(package) || !core::IsVersion(version)) continue;
        versions.push_back({std::move(package), std::move(version), "host", folder + "/" + name, 0});
      }
    }
    std::sort(versions.begin(), versions.end(),
              [](const core::PackageVersion& a, const core::PackageVersion& b) { return a.package < b.package; });
  }

  HostIdentity Gpus(const std::string& name) {
    if (!gpus_) {
      HostIdentity id;
      IsolatedResult r = RunIsolated(GpuInventory(), config_, Hypothesis{});
      GpuInventory::Read(r.verification.reason, id);
      if (!id.gpus_known && id.gpu_note.empty()) id.gpu_note = r.verification.reason;  // a deadline
      gpus_ = std::move(id);
    }
    HostIdentity id = *gpus_;
    id.name = name;
    return id;
  }

  VerifyConfig config_;
  std::shared_ptr<const Registry> registry_;
  std::optional<HostIdentity> gpus_;
  // What reading the incidents' sources for their context may cost this runner in all: each
  // read starts at its source's beginning, so a large log with many incidents stops being read
  // (its incidents keep their captures and evidence) instead of being read once per incident.
  uint64_t source_budget_ = uint64_t(1) << 30;
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

std::string ThisHostName() { return HostName(); }

std::vector<HostCheck> RunHostChecks(const VerifyConfig& config, const Registry& registry,
                                     const std::function<void(const HostCheck&)>& on_done) {
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
    if (on_done) on_done(c);
    checks.push_back(std::move(c));
  }
  return checks;
}

}  // namespace triage::verifiers

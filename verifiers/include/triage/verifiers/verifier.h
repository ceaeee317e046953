// The verifier interface, the registry of verifiers, the isolated run of one check, and the
// host checks of `triage doctor`.
//
// A Verifier tests one claim of one hypothesis (a cause id, the rule's arguments filled from the
// log's captures, the cause's captures themselves, and what the log says of the machine it ran
// on) on this host, or, asked with no cause, reports the host's state for `doctor`. Check() runs
// in a child process that the runner forks, so it may block, crash or hang without harm: the
// runner kills it at its deadline and answers `inconclusive` with why. Check() must never print,
// and gets everything it needs from its arguments. docs/verifier-claims.md says, for every cause
// a rule verifies, which claim each check tests and what each verdict means.
//
// Applicability comes first (DESIGN.md section 5). The runner compares the machine the incident
// describes (Hypothesis::log) with this one before any check runs: a log of another host name,
// or with GPUs this machine does not have, makes every check `not_applicable` and none is run.
// A check then judges its own premises (the interpreter, library or toolkit the log names must
// be on this file system; a kernel log holds only this boot) and answers `not_applicable` when
// one fails. A verdict only concludes about what the check tested: a condition absent now is
// `not_reproduced`, never `refuted`, unless it cannot have been true when the log was written.
//
// Arguments each built-in verifier reads (a rule's `verify = [{ verifier, args }]`; an argument
// whose capture was absent is dropped by the runner, so each falls back as described):
//   gpu.devices          runtime|required: CUDA version the program needs (cuda.driver_too_old)
//   cuda.toolkits        required: "12.9" (else NVIDIA's minimum for the architecture);
//                        arch|sm|capability: "sm_120", "12.x" (else the device's);
//                        toolkit|cuda_home|nvcc: the toolkit the service uses (else the log's
//                        CUDA_HOME and nvcc lines, else the log's toolkit version, else every one)
//   cuda.compile_launch  device: ordinal (default 0); seed: inputs' seed (default random)
//   cuda.fatbin          library|path|file: the ELF shared object; arch|sm (else the device's)
//   cuda.memory          requested|size|tried: "2.00 GiB"; device: ordinal
//   gpu.health, gpu.peers  none
//   python.env           module, symbol, package; python (the interpreter) or path (a
//                        .../lib/python3.X/site-packages/... file of the log), else python3 on PATH
//   host.oom             pid or process (else the cause's pid and comm captures); cgroup: path
//                        under the cgroup root
//   native.lib           library (a soname, resolved as the loader would and never loaded; or
//                        the file that failed, judged by its ELF header); symbol (mangled);
//                        candidates: ':'- or ','-separated libraries to look the symbol up in
//   net.port             port
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "triage/core/incident.h"
#include "triage/verifiers/runner.h"

namespace triage::verifiers {

// A GPU architecture a log names for its device (not a build target, not a library's minimum).
struct LoggedArch {
  int arch = 0;         // 120 for sm_120 or 12.0; a family's first member (120 for 12.x)
  bool family = false;  // "SM 12.x": any architecture of that major
  std::string text;     // as the log wrote it: "SM 12.x", "compute capability 8.6"
};

// What an incident's log says of the machine it ran on (the runner reads it: detail/site.h).
// Every list is in the order the log first named it, without repeats.
struct LogSite {
  std::vector<std::string> hosts;       // host names: the lines' host field, shell prompts, ...
  std::vector<std::string> gpu_models;  // "NVIDIA RTX PRO 6000 Blackwell Server Edition"
  std::vector<LoggedArch> archs;
  std::vector<std::string> toolkit_roots;  // CUDA_HOME, the folder above a .../bin/nvcc
  std::vector<int> toolkit_versions;       // "release 12.8", "cuda-12.8": 12080
  // The Python package folders the log's paths name (".../lib/python3.10/site-packages"), at
  // most four, in the order they first appear.
  std::vector<std::string> python_sites;
  // The absolute paths the log's lines name (a file being written, a cache or checkpoint
  // folder, an output folder), at most eight, in the order they first appear; not a traceback's
  // source files, Python's package folders, URLs or /proc, /sys and /dev.
  std::vector<std::string> named_paths;
  // The incident's time (its end, else its start) as seconds since the epoch, reading the log's
  // clock as UTC; unset when the log has no dated times.
  std::optional<int64_t> time;
  bool names_this_host = false;  // one of `hosts` is this machine's name
  bool lines_read = false;       // the source's lines were read, not only captures and evidence
};

// What one check is asked. `cause` empty: the host check of `doctor`.
struct Hypothesis {
  Hypothesis() = default;
  // Every part but the cause may be left out: `Hypothesis{"host.oom_killed", {{"pid", "42"}}}`.
  explicit Hypothesis(std::string cause_id, std::map<std::string, std::string> arguments = {},
                      std::map<std::string, std::string> cause_captures = {}, LogSite log_site = {})
      : cause(std::move(cause_id)),
        args(std::move(arguments)),
        captures(std::move(cause_captures)),
        log(std::move(log_site)) {}

  std::string cause;
  std::map<std::string, std::string> args;
  // The cause's captures (Cause::captures): what a check falls back to when the rule's
  // arguments do not name it (the pid of a "883 Killed" line).
  std::map<std::string, std::string> captures;
  LogSite log;
  std::string Arg(const std::string& key) const {
    auto it = args.find(key);
    return it == args.end() ? std::string() : it->second;
  }
  std::string Capture(const std::string& key) const {
    auto it = captures.find(key);
    return it == captures.end() ? std::string() : it->second;
  }
};

// How `triage doctor` shows a check.
enum class HostStatus { kPass, kWarn, kFail, kUnavailable };
const char* HostStatusName(HostStatus s);  // "pass", "warn", "fail", "unavailable"

// A check's answer.
struct Finding {
  core::Verdict verdict = core::Verdict::kInconclusive;
  std::string reason;
  std::string facts_json = "{}";  // a JSON object
  HostStatus status = HostStatus::kUnavailable;

  static Finding Inconclusive(std::string reason, std::string facts = "{}");
  static Finding Skipped(std::string reason, std::string facts = "{}");
  static Finding Confirmed(std::string reason, std::string facts);
  static Finding Refuted(std::string reason, std::string facts);
  static Finding NotReproduced(std::string reason, std::string facts);
  static Finding NotApplicable(std::string reason, std::string facts = "{}");
  // A host check's answer for `doctor` (no hypothesis): what was measured, and how it looks.
  static Finding Host(HostStatus status, std::string detail, std::string facts);
};

class Verifier {
 public:
  virtual ~Verifier() = default;
  virtual std::string_view name() const = 0;
  // Whether `doctor` runs it with no hypothesis.
  virtual bool host_check() const { return true; }
  virtual Finding Check(const VerifyConfig& config, const Hypothesis& hypothesis) const = 0;
};

// The verifiers by name. Not thread-safe to modify; safe to share once built.
class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;
  Registry(Registry&&) = default;
  Registry& operator=(Registry&&) = default;

  // Every verifier of triage: gpu.devices, cuda.toolkits, cuda.compile_launch, cuda.fatbin,
  // cuda.memory, gpu.health, gpu.peers, python.env, host.oom, native.lib, net.port.
  static Registry Builtin();

  // Adds (or replaces, by name) a verifier.
  void Add(std::unique_ptr<Verifier> verifier);
  const Verifier* Find(std::string_view name) const;
  const std::vector<std::unique_ptr<Verifier>>& verifiers() const { return verifiers_; }

 private:
  std::vector<std::unique_ptr<Verifier>> verifiers_;
};

// An isolated answer: the verification plus the doctor status the child reported.
struct IsolatedResult {
  core::Verification verification;
  HostStatus status = HostStatus::kUnavailable;
};

// Runs verifier.Check() in a forked child (its own process group, stdio to /dev/null) that
// answers over a pipe. The child is killed (with its group) at config.deadline_seconds: then
// `inconclusive: deadline ...`; a child that crashes or exits without answering gives
// `inconclusive: crashed ...`. Fills host (this machine's name) and ms (wall time).
IsolatedResult RunIsolated(const Verifier& verifier, const VerifyConfig& config,
                           const Hypothesis& hypothesis);

// A runner over `registry` (which must outlive it). Unknown verifier names give
// `inconclusive: unknown verifier`. Before any check of an incident it reads what the log says of
// its machine (detail/site.h: the incident's host, captures, evidence and source lines) and
// compares it with this machine (config.identity, else its name and a probe of its GPUs).
std::unique_ptr<core::VerificationRunner> MakeVerificationRunner(
    const VerifyConfig& config, std::shared_ptr<const Registry> registry);

// `triage doctor`: every host check of the registry, each isolated, in registry order.
struct HostCheck {
  std::string name;
  HostStatus status = HostStatus::kUnavailable;
  std::string detail;
  std::string facts_json = "{}";
  int64_t ms = 0;
};
// `on_done`, when given, is called with each check as soon as it has finished (doctor prints the
// row then), on the calling thread.
std::vector<HostCheck> RunHostChecks(const VerifyConfig& config, const Registry& registry,
                                     const std::function<void(const HostCheck&)>& on_done = {});

// What shows that this machine has an NVIDIA GPU, driver or not ("an NVIDIA GPU on the PCI bus at
// 0000:3b:00.0": a display-class function of vendor 0x10de in `pci_device_dir`, or an NVIDIA
// device node in `device_node_dir`); empty when nothing does.
std::string NvidiaHardware(const VerifyConfig& config);

// `doctor --strict`: on a machine with NVIDIA hardware, the device check that could not reach a
// driver (gpu.devices 'unavailable') fails, its detail naming the hardware. Other checks keep
// their status.
void ApplyStrict(std::vector<HostCheck>& checks, const VerifyConfig& config);

// This machine's name, as the verifications' `host` says it.
std::string ThisHostName();

}  // namespace triage::verifiers

// The verifier interface, the registry of verifiers, the isolated run of one check, and the
// host checks of `triage doctor`.
//
// A Verifier confirms or refutes one hypothesis (a cause id and the rule's arguments, filled
// from the log's captures) on this host, or, asked with no cause, reports the host's state for
// `doctor`. Check() runs in a child process that the runner forks, so it may block, crash or
// hang without harm: the runner kills it at its deadline and answers `inconclusive` with why.
// Check() must never print, and gets everything it needs from its arguments.
//
// Arguments each built-in verifier reads (a rule's `verify = [{ verifier, args }]`; an argument
// whose capture was absent is dropped by the runner, so each falls back as described):
//   gpu.devices          runtime|required: CUDA version the program needs (cuda.driver_too_old)
//   cuda.toolkits        required: "12.9" (else NVIDIA's minimum for the architecture);
//                        arch|sm|capability: "sm_120", "12.x" (else the device's);
//                        toolkit|cuda_home|nvcc: the toolkit the service uses (else every one)
//   cuda.compile_launch  device: ordinal (default 0); seed: inputs' seed (default random)
//   cuda.fatbin          library|path|file: the ELF shared object; arch|sm (else the device's)
//   cuda.memory          requested|size|tried: "2.00 GiB"; device: ordinal
//   gpu.health, gpu.peers  none
//   python.env           module, symbol, package; python (the interpreter) or path (a
//                        .../lib/python3.X/site-packages/... file of the log), else python3 on PATH
//   host.oom             pid or process; cgroup: path under the cgroup root
//   native.lib           library (a soname, resolved as the loader would and never loaded; or
//                        the file that failed, judged by its ELF header); symbol (mangled);
//                        candidates: ':'- or ','-separated libraries to look the symbol up in
//   net.port             port
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "triage/core/incident.h"
#include "triage/verifiers/runner.h"

namespace triage::verifiers {

// What one check is asked. `cause` empty: the host check of `doctor`.
struct Hypothesis {
  std::string cause;
  std::map<std::string, std::string> args;
  std::string Arg(const std::string& key) const {
    auto it = args.find(key);
    return it == args.end() ? std::string() : it->second;
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
// `inconclusive: unknown verifier`.
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
std::vector<HostCheck> RunHostChecks(const VerifyConfig& config, const Registry& registry);

}  // namespace triage::verifiers

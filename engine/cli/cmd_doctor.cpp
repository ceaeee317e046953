// `triage doctor`: every host and GPU check with no log, as a table of pass / warn / fail /
// unavailable with what each measured, each row printed as its check finishes; --json gives
// {"host", "time", "version", "summary": {"pass", "warn", "fail", "unavailable"},
//  "checks": [{"name", "status", "detail", "facts", "ms"}]}.
#include <array>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "command.h"
#include "triage/core/config.h"
#include "triage/json.h"
#include "triage/store/store.h"
#include "triage/terminal_text.h"
#include "triage/verifiers/runner.h"
#include "triage/verifiers/verifier.h"
#include "triage/version.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage doctor [OPTIONS]\n\n"
    "Runs every host check (GPUs, driver, CUDA toolkits and the architectures their NVRTC can\n"
    "target, compiling and launching triage's kernels on each path, fatbins, device memory, GPU\n"
    "health, peer copies, kernel OOM kills) with no log, each in its own process with a\n"
    "deadline, and shows what would break and why. A check that cannot run here (no driver, no\n"
    "device, a permission) is 'unavailable' with the reason. Each row is printed as its check\n"
    "finishes.\n\n"
    "With --strict, a GPU node (an NVIDIA GPU on the PCI bus, or an NVIDIA device node) whose\n"
    "driver does not answer fails gpu.devices instead of leaving it unavailable, and a failed\n"
    "check is the exit status: for a CI job or a node's admission.\n\n"
    "Exit codes: 0 checks ran (whatever they found); with --strict (or its older name\n"
    "--exit-code), 1 when a check failed; 2 bad usage or configuration.\n\n";

const char* Colour(verifiers::HostStatus s) {
  switch (s) {
    case verifiers::HostStatus::kPass: return "\033[32m";
    case verifiers::HostStatus::kWarn: return "\033[33m";
    case verifiers::HostStatus::kFail: return "\033[31m";
    case verifiers::HostStatus::kUnavailable: return "\033[2m";
  }
  return "";
}

void PrintRow(const verifiers::HostCheck& c, bool colour, bool facts) {
  std::string name = c.name;
  name.resize(std::max<size_t>(name.size(), 20), ' ');
  std::string padded = verifiers::HostStatusName(c.status);
  padded.resize(12, ' ');
  std::cout << name << " " << (colour ? Colour(c.status) : "") << padded << (colour ? "\033[0m" : "")
            << " " << TerminalText(c.detail) << "\n";
  if (facts) std::cout << "    facts: " << TerminalText(c.facts_json) << "\n";
  // A row is there as soon as its check is: the GPU checks may take seconds each.
  std::cout.flush();
}

int RunDoctor(const std::vector<std::string>& argv) {
  Args args;
  args.Flag("json", "print one JSON document (host, time, version, summary, checks) instead")
      .Flag("facts", "print each check's measured facts (JSON) under its row")
      .Flag("strict", "a GPU node without a working driver fails; exit 1 when a check failed")
      .Flag("exit-code", "the same as --strict")
      .Option("config", "FILE", "read this configuration file instead of the default places")
      .Option("deadline", "SECONDS", "per-check deadline (default: [verify] deadline, 10 s)")
      .Option("driver-path", "DIR", "look for libcuda.so.1 and libnvidia-ml.so.1 only here (repeatable)")
      .Option("toolkit-path", "DIR", "look for CUDA toolkits only here (repeatable)")
      .Option("allow", "PREFIX", "also allow interpreters and programs under PREFIX (repeatable)")
      .Option("kernel-log", "FILE",
              "read the kernel log (OOM kills, Xid) from FILE, not /dev/kmsg or kern.log (repeatable)");
  if (!args.Parse(argv)) {
    PrintError("doctor", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  if (!args.Positionals().empty()) {
    PrintError("doctor", "takes no arguments (see 'triage doctor --help')");
    return kExitUsage;
  }
  auto config = LoadConfiguration(args.Get("config"));
  if (!config.ok()) {
    PrintError("config", config.status().message());
    return kExitUsage;
  }
  verifiers::VerifyConfig vc = verifiers::VerifyConfigFrom(*config, false);
  if (auto d = args.Get("deadline")) {
    char* end = nullptr;
    double s = std::strtod(d->c_str(), &end);
    if (!end || *end || !(s > 0) || s > 3600) {
      PrintError("doctor", "--deadline needs seconds between 0 and 3600, not '" + *d + "'");
      return kExitUsage;
    }
    vc.deadline_seconds = s;
  }
  if (auto paths = args.GetAll("driver-path"); !paths.empty()) vc.driver_search_paths = paths;
  if (auto paths = args.GetAll("toolkit-path"); !paths.empty()) vc.toolkit_search_paths = paths;
  for (const auto& p : args.GetAll("allow")) vc.allowed_prefixes.push_back(p);
  if (auto logs = args.GetAll("kernel-log"); !logs.empty()) vc.kernel_log_paths = logs;

  const verifiers::Registry registry = verifiers::Registry::Builtin();
  const bool json = args.Has("json");
  const bool colour = !json && args.color();
  const bool strict = args.Has("strict") || args.Has("exit-code");
  if (!json) std::cout << "CHECK                STATUS       DETAIL\n" << std::flush;
  std::vector<verifiers::HostCheck> checks = verifiers::RunHostChecks(
      vc, registry, [&](const verifiers::HostCheck& c) {
        if (json) return;
        std::vector<verifiers::HostCheck> one{c};
        if (strict) verifiers::ApplyStrict(one, vc);
        PrintRow(one[0], colour, args.Has("facts"));
      });
  std::array<int64_t, 4> count{};  // by HostStatus
  if (strict) verifiers::ApplyStrict(checks, vc);
  for (const auto& c : checks) ++count[static_cast<size_t>(c.status)];

  if (json) {
    JsonWriter w;
    w.BeginObject();
    w.Key("host").String(verifiers::ThisHostName());
    w.Key("time").String(store::NowUtc() + "Z");
    w.Key("version").String(TRIAGE_VERSION_STRING);
    w.Key("summary").BeginObject();
    for (auto s : {verifiers::HostStatus::kPass, verifiers::HostStatus::kWarn,
                   verifiers::HostStatus::kFail, verifiers::HostStatus::kUnavailable})
      w.Key(verifiers::HostStatusName(s)).Int(count[static_cast<size_t>(s)]);
    w.EndObject();
    w.Key("checks").BeginArray();
    for (const auto& c : checks) {
      w.BeginObject().Key("name").String(c.name).Key("status").String(verifiers::HostStatusName(c.status));
      w.Key("detail").String(c.detail).Key("facts").Raw(c.facts_json).Key("ms").Int(c.ms).EndObject();
    }
    w.EndArray().EndObject();
    std::cout << w.str() << "\n";
  }
  const bool failed = count[static_cast<size_t>(verifiers::HostStatus::kFail)] > 0;
  return failed && strict ? kExitFound : kExitOk;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("doctor", "run every host and GPU check with no log: what would break, and why",
                        &RunDoctor);

}  // namespace triage::cli

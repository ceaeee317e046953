// The verifiers' entry point for the rest of triage: a VerificationRunner (core's interface)
// that runs each requested check in a child process with a deadline, and the host checks of
// `triage doctor` (see verifier.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "triage/core/config.h"
#include "triage/core/verifier.h"

namespace triage::verifiers {

// One GPU of this machine, as the driver lists it.
struct HostGpu {
  std::string name;  // "NVIDIA H200"
  int arch = 0;      // 90 for compute capability 9.0
};

// This machine as the applicability check sees it (DESIGN.md section 5): its name and, when they
// can be known, its GPUs.
struct HostIdentity {
  std::string name;
  // Whether `gpus` is this machine's whole list: the driver listed its devices, or there is no
  // driver and no NVIDIA device node at all (then `gpus` is empty: a machine without a GPU).
  bool gpus_known = false;
  std::vector<HostGpu> gpus;
  // Why the GPUs are not known ("no driver: ..." beside a device node), or why there are none.
  std::string gpu_note;
  // The driver's release as NVML gives it ("580.95.05"); empty when it cannot be read.
  std::string driver_release;
};

struct VerifyConfig {
  double deadline_seconds = 10;
  // Where libcuda.so.1 and libnvidia-ml.so.1 are looked for. Empty: the dynamic loader's
  // default search, then the usual driver folders. Set: those folders only (tests point them
  // at folders of fake libraries).
  std::vector<std::string> driver_search_paths;
  // Extra CUDA toolkit roots (folders holding lib64/libnvrtc.so.*, or such a lib folder itself).
  // Set, they replace the automatic search (CUDA_HOME, nvcc on PATH, /usr/local/cuda*).
  std::vector<std::string> toolkit_search_paths;
  // Interpreters and programs a verifier may run: path prefixes from the configuration. The
  // Python environments under them are also searched for NVRTC wheels.
  std::vector<std::string> allowed_prefixes;
  bool trust_log_paths = false;
  // Where the GPU device nodes are (nvidiactl, nvidia0...), to tell "permission" from "no
  // device" when the driver refuses.
  std::string device_node_dir = "/dev";
  // The PCI functions (each a folder with `vendor` and `class`), for telling a GPU node without
  // a driver from a machine without a GPU (doctor --strict).
  std::string pci_device_dir = "/sys/bus/pci/devices";
  // The kernel log: read in order, the first readable one is used.
  std::vector<std::string> kernel_log_paths = {"/dev/kmsg", "/var/log/kern.log"};
  // cgroup v2 mount, for memory.events.
  std::string cgroup_root = "/sys/fs/cgroup";
  // Whether triage's own pre-built kernels may be used; false behaves as a build without nvcc
  // (NVRTC still compiles the same kernels live where a toolkit is found).
  bool use_prebuilt_kernels = true;
  // This machine's identity for the applicability check. Unset: its host name, and its GPUs from
  // the driver (asked once per runner, in an isolated child, only when a log names GPUs). Set:
  // taken as given (tests stand in for a host of another name or with other GPUs).
  std::optional<HostIdentity> identity;
  // Where /proc/uptime is read for this machine's boot time (kernel-log checks); tests point it
  // at a file of their own.
  std::string uptime_path = "/proc/uptime";
};

// The [verify] settings of a configuration, with --trust-log-paths.
VerifyConfig VerifyConfigFrom(const core::Config& config, bool trust_log_paths);

// A runner with every verifier of triage (verifier.h's Registry::Builtin()).
std::unique_ptr<core::VerificationRunner> MakeVerificationRunner(const VerifyConfig& config);

}  // namespace triage::verifiers

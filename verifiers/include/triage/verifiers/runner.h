// The verifiers' entry point for the rest of triage: a VerificationRunner (core's interface)
// that runs each requested check in a child process with a deadline, and the host checks of
// `triage doctor` (see verifier.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "triage/core/config.h"
#include "triage/core/verifier.h"

namespace triage::verifiers {

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
  // The kernel log: read in order, the first readable one is used.
  std::vector<std::string> kernel_log_paths = {"/dev/kmsg", "/var/log/kern.log"};
  // cgroup v2 mount, for memory.events.
  std::string cgroup_root = "/sys/fs/cgroup";
  // Whether triage's own pre-built kernels may be used; false behaves as a build without nvcc
  // (NVRTC still compiles the same kernels live where a toolkit is found).
  bool use_prebuilt_kernels = true;
};

// The [verify] settings of a configuration, with --trust-log-paths.
VerifyConfig VerifyConfigFrom(const core::Config& config, bool trust_log_paths);

// A runner with every verifier of triage (verifier.h's Registry::Builtin()).
std::unique_ptr<core::VerificationRunner> MakeVerificationRunner(const VerifyConfig& config);

}  // namespace triage::verifiers

// Finding the CUDA toolkits installed on this host and asking each one's NVRTC for its version
// and the architectures it can target. Searched: config.toolkit_search_paths when set; else
// $CUDA_HOME, $CUDA_PATH, the folder above nvcc on $PATH, /usr/local/cuda*, /opt/cuda*; plus,
// always, the nvidia-cuda-nvrtc wheels (nvidia/cuda_nvrtc, nvidia/cu13) in the Python
// environments under config.allowed_prefixes.
#pragma once

#include <string>
#include <vector>

#include "triage/verifiers/detail/process.h"
#include "triage/verifiers/runner.h"

namespace triage::verifiers::detail {

struct Toolkit {
  std::string root;        // the toolkit's folder (or the wheel's package folder)
  std::string nvrtc_path;  // the libnvrtc.so.* opened
  std::string found_by;    // "CUDA_HOME", "PATH (nvcc)", "/usr/local/cuda*", "wheel", "configured"
  int version = 0;         // nvrtcVersion: 13000 for 13.0; 0 when the library could not be used
  std::vector<int> archs;  // nvrtcGetSupportedArchs
  std::string error;       // why the library could not be used
};

// The libnvrtc.so.* in a toolkit root or lib folder, or "".
std::string FindNvrtcIn(const std::string& root);

// Every toolkit found, each NVRTC opened to read its version and architectures. Duplicates (the
// same library through two paths) are listed once.
std::vector<Toolkit> FindToolkits(const VerifyConfig& config);

// Reads one toolkit's version and architectures (opens its NVRTC).
Toolkit ProbeToolkit(const std::string& root, const std::string& nvrtc_path, std::string found_by);
// The same for an NVRTC that a log names, which MayLoad checked: loaded through the decision's
// descriptor (ProgramFile::ProcPath()), never by its path again. Not allowed or not open: a
// toolkit with the decision's reason as its error.
Toolkit ProbeToolkit(const std::string& root, const ProgramDecision& nvrtc, std::string found_by);

}  // namespace triage::verifiers::detail

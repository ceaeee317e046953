// Runs triage's kernels (triage::kernels) on one device through the driver API and compares each
// result with its CPU reference, on inputs drawn from a seed. The image may be the pre-built
// fatbin, an NVRTC cubin for the device's exact architecture, or NVRTC PTX for the driver to JIT.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "triage/verifiers/detail/gpu.h"

namespace triage::verifiers::detail {

struct KernelCheck {
  std::string kernel;  // "smoke", "memory_pattern", "bandwidth", "topk_topp_sampling", "wmma_gemm"
  bool ok = false;
  std::string detail;  // what was compared, or what failed
  double figure = 0;   // bandwidth: GB/s; sampling: rows compared; gemm: max abs error
  uint64_t mismatches = 0;
  bool not_run = false;  // the device had no memory for it (not a fault); `detail` says so
};

struct KernelRun {
  bool loaded = false;
  std::string load_error;  // cuModuleLoadData's error, or the context's
  std::vector<KernelCheck> checks;
  // Loaded, at least one kernel ran, and every kernel that ran matched its CPU reference.
  bool AllOk() const;
};

// `image`: what cuModuleLoadData accepts (PTX must be NUL-terminated). `kernels` empty: all.
KernelRun RunKernelChecks(const Driver& driver, const Device& device, const void* image,
                          uint32_t seed, const std::vector<std::string>& kernels = {});

// The JSON array of a run's checks (for facts).
std::string KernelRunJson(const KernelRun& run);

}  // namespace triage::verifiers::detail

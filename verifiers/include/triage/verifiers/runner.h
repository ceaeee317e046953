// The verifiers' entry point for the rest of triage: a VerificationRunner (core's interface)
// that runs each requested check in a child process with a deadline, and the host checks of
// `triage doctor`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "triage/core/verifier.h"

namespace triage::verifiers {

struct VerifyConfig {
  double deadline_seconds = 10;
  // Where libcuda.so.1, libnvidia-ml.so.1 and libnvrtc.so.* are looked for (empty: the
  // dynamic loader's default search, then the usual CUDA install folders).
  std::vector<std::string> driver_search_paths;
  std::vector<std::string> toolkit_search_paths;
  // Interpreters and programs a verifier may run: path prefixes from the configuration.
  std::vector<std::string> allowed_prefixes;
  bool trust_log_paths = false;
};

std::unique_ptr<core::VerificationRunner> MakeVerificationRunner(const VerifyConfig& config);

}  // namespace triage::verifiers

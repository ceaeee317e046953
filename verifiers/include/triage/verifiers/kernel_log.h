// The node's kernel log as the checks read it (OOM kills, Xid events), and as the daemon reads it
// when a pod's container restarts after its log stopped (docs/log-formats.md, "Deaths from
// outside").
#pragma once

#include <string>
#include <vector>

#include "triage/verifiers/runner.h"

namespace triage::verifiers {

// The kernel log, from the first readable of config.kernel_log_paths (/dev/kmsg records are
// reduced to their messages). `permission` names what could not be read when nothing could.
struct KernelLog {
  bool ok = false;
  std::string source;
  std::vector<std::string> lines;
  std::string permission;  // "/dev/kmsg: Operation not permitted", when that is why
  std::string error;       // other reasons nothing was read
};
KernelLog ReadKernelLog(const VerifyConfig& config);

}  // namespace triage::verifiers

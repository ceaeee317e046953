#include "triage/daemon/alert_severity.h"

namespace triage::daemon {

namespace {

constexpr AlertClass kHardware{"hardware", "critical"};        // the GPU itself is failing
constexpr AlertClass kMemory{"memory", "error"};               // device or host memory ran out
constexpr AlertClass kCompatibility{"compatibility", "error"};  // versions that do not fit together
constexpr AlertClass kSoftware{"software", "error"};           // a crash or fault of the program
constexpr AlertClass kHost{"host", "error"};                   // the host's resources or rights
constexpr AlertClass kConfig{"config", "warning"};             // the service's own settings or inputs
constexpr AlertClass kUnclassified{"unclassified", "error"};   // a failure no rule explains
constexpr AlertClass kOther{"other", "error"};

}  // namespace

const std::vector<AlertClassRow>& AlertClassTable() {
  static const std::vector<AlertClassRow> kTable = {
      {"gpu.hardware_fault", kHardware},
      {"cuda.oom", kMemory},
      {"host.oom_killed", kMemory},
      {"host.shm_exhausted", kMemory},
      {"cuda.toolkit_too_old_for_arch", kCompatibility},
      {"cuda.no_kernel_image", kCompatibility},
      {"cuda.driver_too_old", kCompatibility},
      {"lib.arch_unsupported", kCompatibility},
      {"python.symbol_missing", kCompatibility},
      {"python.module_missing", kCompatibility},
      {"python.version_conflict", kCompatibility},
      {"native.undefined_symbol", kCompatibility},
      {"native.lib_not_found", kCompatibility},
      {"engine.model_unsupported", kCompatibility},
      {"jit.build_failed", kCompatibility},
      {"cuda.illegal_memory_access", kSoftware},
      {"native.crash", kSoftware},
      {"nccl.failure", kSoftware},
      {"cuda.no_device", kHost},
      {"host.disk_full", kHost},
      {"host.permission", kHost},
      {"config.invalid", kConfig},
      {"model.load_failed", kConfig},
      {"net.port_in_use", kConfig},
      {"unclassified", kUnclassified},
  };
  return kTable;
}

AlertClass ClassifyCause(std::string_view cause) {
  for (const auto& row : AlertClassTable()) {
    if (cause.substr(0, row.cause.size()) == row.cause &&
        (cause.size() == row.cause.size() || cause[row.cause.size()] == '.'))
      return row.cls;
  }
  return kOther;
}

}  // namespace triage::daemon

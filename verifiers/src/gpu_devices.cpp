// gpu.devices: the driver and CUDA driver versions and every GPU (name, compute capability,
// memory, persistence and compute mode), from the driver API and NVML. Verdict for
// cuda.driver_too_old: the driver's CUDA version against the runtime the log names; a driver that
// supports it now is `not_reproduced` (upgraded since, or the service loaded another libcuda: a
// container's, a forward-compatibility one).
#include <cstdio>

#include "common.h"
#include "triage/verifiers/detail/gpu.h"

namespace triage::verifiers {

namespace {

using namespace detail;

const char* ComputeModeName(int mode) {
  switch (mode) {
    case 0: return "default";
    case 1: return "exclusive_thread";
    case 2: return "prohibited";
    case 3: return "exclusive_process";
  }
  return "unknown";
}

class GpuDevices final : public Verifier {
 public:
  std::string_view name() const override { return "gpu.devices"; }

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    DriverOpen open = OpenDriver(config);
    if (!open.driver) {
      JsonWriter w;
      w.BeginObject().Key("problem").String(open.problem.Reason()).EndObject();
      return Finding::Inconclusive(open.problem.Reason(), w.Take());
    }
    const Driver& driver = *open.driver;
    NvmlOpen nvml = OpenNvml(config);
    std::string driver_text;
    if (nvml.nvml && nvml.nvml->api.nvmlSystemGetDriverVersion) {
      char buf[96] = {};
      if (nvml.nvml->api.nvmlSystemGetDriverVersion(buf, sizeof buf - 1) == kNvmlSuccess)
        driver_text = buf;
    }
    JsonWriter w;
    w.BeginObject();
    w.Key("driver_version").String(driver_text.empty() ? "unknown" : driver_text);
    w.Key("cuda_driver_version").String(CudaVersionText(driver.driver_version));
    w.Key("libcuda").String(driver.api.library.path());
    if (!nvml.nvml) w.Key("nvml").String(nvml.problem.Reason());
    w.Key("devices").BeginArray();
    std::string summary;
    for (const auto& d : driver.devices) {
      w.BeginObject();
      w.Key("index").Int(d.ordinal).Key("name").String(d.name);
      w.Key("compute_capability").String(std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
      w.Key("arch").String("sm_" + std::to_string(d.arch()));
      w.Key("memory_bytes").Uint(d.total_memory).Key("memory").String(ByteSizeText(d.total_memory));
      w.Key("multiprocessors").Int(d.multiprocessors);
      if (nvml.nvml) {
        const NvmlApi& api = nvml.nvml->api;
        NvmlDevice dev = nullptr;
        if (api.nvmlDeviceGetHandleByIndex(static_cast<unsigned>(d.ordinal), &dev) == kNvmlSuccess) {
          int mode = 0;
          if (api.nvmlDeviceGetPersistenceMode &&
              api.nvmlDeviceGetPersistenceMode(dev, &mode) == kNvmlSuccess)
            w.Key("persistence_mode").String(mode ? "enabled" : "disabled");
          if (api.nvmlDeviceGetComputeMode && api.nvmlDeviceGetComputeMode(dev, &mode) == kNvmlSuccess)
            w.Key("compute_mode").String(ComputeModeName(mode));
          char uuid[96] = {};
          if (api.nvmlDeviceGetUUID && api.nvmlDeviceGetUUID(dev, uuid, sizeof uuid - 1) == kNvmlSuccess)
            w.Key("uuid").String(uuid);
        }
      }
      w.EndObject();
      if (!summary.empty()) summary += "; ";
      summary += "GPU " + std::to_string(d.ordinal) + " " + d.name + " (compute capability " +
                 std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ", " +
                 ByteSizeText(d.total_memory) + ")";
    }
    w.EndArray().EndObject();
    std::string facts = w.Take();
    std::string versions = "driver " + (driver_text.empty() ? std::string("?") : driver_text) +
                           ", CUDA " + CudaVersionText(driver.driver_version);

    if (h.cause.empty())
      return Finding::Host(HostStatus::kPass, summary + "; " + versions, facts);
    if (h.cause.rfind("cuda.driver_too_old", 0) == 0) {
      std::string runtime = h.Arg("runtime").empty() ? h.Arg("required") : h.Arg("runtime");
      if (runtime.empty()) runtime = h.Capture("runtime");
      int needed = ParseCudaVersion(runtime);
      if (needed == 0)
        return Finding::Inconclusive("the log names no runtime version to compare with (" +
                                         versions + ")",
                                     facts);
      if (driver.driver_version < needed)
        return Finding::Confirmed("the driver supports CUDA " +
                                      CudaVersionText(driver.driver_version) + " < " +
                                      CudaVersionText(needed) + " that the runtime needs",
                                  facts);
      return Finding::NotReproduced("the driver supports CUDA " + CudaVersionText(driver.driver_version) +
                                        " >= " + CudaVersionText(needed) +
                                        " now: upgraded since, or the service loaded another libcuda",
                                    facts);
    }
    return Finding::Inconclusive("no verdict for " + h.cause + "; facts only: " + summary, facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeGpuDevices() { return std::make_unique<GpuDevices>(); }

}  // namespace triage::verifiers

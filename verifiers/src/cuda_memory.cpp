// cuda.memory: free and used memory per GPU and the processes holding it (NVML; the driver API's
// cuMemGetInfo when NVML is missing). Verdict for cuda.oom: the size the log says was requested
// against what is free now; enough free now is `not_reproduced` (the holder, often the service
// itself, may have exited).
#include <fstream>

#include "common.h"
#include "triage/verifiers/detail/gpu.h"

namespace triage::verifiers {

namespace {

using namespace detail;

std::string ProcessName(unsigned pid) {
  auto comm = ReadSmallFile("/proc/" + std::to_string(pid) + "/comm", 256);
  return comm ? Trim(*comm) : std::string();
}

struct GpuMemory {
  int index = 0;
  std::string name;
  uint64_t total = 0, free = 0, used = 0;
  std::vector<std::pair<unsigned, uint64_t>> processes;
  std::string processes_note;
};

class CudaMemory final : public Verifier {
 public:
  std::string_view name() const override { return "cuda.memory"; }

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    std::vector<GpuMemory> gpus;
    NvmlOpen nvml = OpenNvml(config);
    std::string source;
    if (nvml.nvml) {
      const NvmlApi& api = nvml.nvml->api;
      unsigned count = 0;
      api.nvmlDeviceGetCount(&count);
      for (unsigned i = 0; i < count; ++i) {
        NvmlDevice dev = nullptr;
        if (api.nvmlDeviceGetHandleByIndex(i, &dev) != kNvmlSuccess) continue;
        GpuMemory g;
        g.index = static_cast<int>(i);
        char name[96] = {};
        if (api.nvmlDeviceGetName && api.nvmlDeviceGetName(dev, name, sizeof name - 1) == kNvmlSuccess) g.name = name;
        NvmlMemory mem{};
        if (api.nvmlDeviceGetMemoryInfo && api.nvmlDeviceGetMemoryInfo(dev, &mem) == kNvmlSuccess) {
          g.total = mem.total;
          g.free = mem.free;
          g.used = mem.used;
        }
        if (api.nvmlDeviceGetComputeRunningProcesses) {
          std::vector<NvmlProcessInfo> procs(64);
          unsigned n = static_cast<unsigned>(procs.size());
          NvmlReturn r = api.nvmlDeviceGetComputeRunningProcesses(dev, &n, procs.data());
          if (r == kNvmlSuccess) {
            for (unsigned p = 0; p < n && p < procs.size(); ++p)
              g.processes.emplace_back(procs[p].pid, procs[p].used_gpu_memory);
          } else if (r == kNvmlErrorNoPermission) {
            g.processes_note = "permission: NVML refuses the process list";
          } else {
            g.processes_note = api.ErrorText(r);
          }
        }
        gpus.push_back(std::move(g));
      }
      source = "nvml";
    } else {
      DriverOpen open = OpenDriver(config);
      if (!open.driver) {
        JsonWriter w;
        w.BeginObject().Key("nvml").String(nvml.problem.Reason()).Key("driver").String(open.problem.Reason()).EndObject();
        return Finding::Inconclusive(open.problem.Reason(), w.Take());
      }
      const Driver& driver = *open.driver;
      if (std::string missing = driver.api.MissingForLaunch(); !missing.empty() || !driver.api.cuMemGetInfo)
        return Finding::Inconclusive("device unusable: libcuda.so.1 lacks " + missing + " cuMemGetInfo_v2");
      for (const auto& d : driver.devices) {
        PrimaryContext ctx(driver.api, d.handle);
        if (ctx.status() != kCudaSuccess) continue;
        GpuMemory g;
        g.index = d.ordinal;
        g.name = d.name;
        size_t free = 0, total = 0;
        if (driver.api.cuMemGetInfo(&free, &total) != kCudaSuccess) continue;
        g.total = total;
        g.free = free;
        g.used = total - free;
        g.processes_note = "NVML unavailable (" + nvml.problem.Reason() + "): processes unknown";
        gpus.push_back(std::move(g));
      }
      source = "driver";
    }

    JsonWriter w;
    w.BeginObject().Key("source").String(source).Key("gpus").BeginArray();
    std::string summary;
    bool crowded = false;
    for (const auto& g : gpus) {
      w.BeginObject().Key("index").Int(g.index).Key("name").String(g.name);
      w.Key("total_bytes").Uint(g.total).Key("free_bytes").Uint(g.free).Key("used_bytes").Uint(g.used);
      w.Key("processes").BeginArray();
      for (const auto& [pid, bytes] : g.processes)
        w.BeginObject().Key("pid").Uint(pid).Key("name").String(ProcessName(pid)).Key("used_bytes").Uint(bytes).EndObject();
      w.EndArray();
      if (!g.processes_note.empty()) w.Key("processes_note").String(g.processes_note);
      w.EndObject();
      summary += (summary.empty() ? "" : "; ") + std::string("GPU ") + std::to_string(g.index) + ": " +
                 ByteSizeText(g.free) + " free of " + ByteSizeText(g.total) + ", " +
                 std::to_string(g.processes.size()) + " processes";
      crowded |= g.total > 0 && g.used > g.total / 10 * 9;
    }
    w.EndArray().EndObject();
    std::string facts = w.Take();
    if (gpus.empty()) return Finding::Inconclusive("no device: no GPU reported its memory", facts);
    if (h.cause.empty())
      return Finding::Host(crowded ? HostStatus::kWarn : HostStatus::kPass, summary, facts);

    std::string requested_text;
    for (const char* key : {"requested", "size", "tried"})
      if (!h.Arg(key).empty()) requested_text = h.Arg(key);
    uint64_t requested = ParseByteSize(requested_text);
    if (requested == 0)
      return Finding::Inconclusive("the log gives no requested size to compare; " + summary, facts);
    size_t index = 0;
    if (!h.Arg("device").empty()) index = static_cast<size_t>(std::atoi(h.Arg("device").c_str()));
    if (index >= gpus.size()) index = 0;
    const GpuMemory& g = gpus[index];
    if (g.free < requested)
      return Finding::Confirmed("GPU " + std::to_string(g.index) + " has " + ByteSizeText(g.free) +
                                    " free, less than the " + ByteSizeText(requested) + " requested",
                                facts);
    return Finding::NotReproduced("GPU " + std::to_string(g.index) + " has " + ByteSizeText(g.free) +
                                      " free now, enough for the " + ByteSizeText(requested) +
                                      " requested (the holder may have exited)",
                                  facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeCudaMemory() { return std::make_unique<CudaMemory>(); }

}  // namespace triage::verifiers

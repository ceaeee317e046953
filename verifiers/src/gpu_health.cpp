// gpu.health: NVML's uncorrected ECC counters, retired and remapped pages, and Xid events in the
// kernel log. Verdict for gpu.hardware_fault. An unreadable kernel log is `inconclusive:
// permission` unless NVML already proves a fault.
#include "common.h"
#include "triage/verifiers/detail/gpu.h"

namespace triage::verifiers {

namespace {

using namespace detail;

constexpr int kUncorrected = 1;          // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kAggregateEcc = 1;         // NVML_AGGREGATE_ECC
constexpr int kRetiredDoubleBit = 1;     // NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR

class GpuHealth final : public Verifier {
 public:
  std::string_view name() const override { return "gpu.health"; }

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    NvmlOpen nvml = OpenNvml(config);
    KernelLog klog = ReadKernelLog(config);
    std::vector<std::string> xids;
    if (klog.ok)
      for (const auto& line : klog.lines)
        if (line.find("NVRM: Xid") != std::string::npos || line.find("fallen off the bus") != std::string::npos)
          xids.push_back(line);

    JsonWriter w;
    w.BeginObject();
    std::vector<std::string> faults;
    if (nvml.nvml) {
      const NvmlApi& api = nvml.nvml->api;
      unsigned count = 0;
      api.nvmlDeviceGetCount(&count);
      w.Key("gpus").BeginArray();
      for (unsigned i = 0; i < count; ++i) {
        NvmlDevice dev = nullptr;
        if (api.nvmlDeviceGetHandleByIndex(i, &dev) != kNvmlSuccess) continue;
        w.BeginObject().Key("index").Uint(i);
        std::string gpu = "GPU " + std::to_string(i);
        unsigned long long ecc = 0;
        if (api.nvmlDeviceGetTotalEccErrors &&
            api.nvmlDeviceGetTotalEccErrors(dev, kUncorrected, kAggregateEcc, &ecc) == kNvmlSuccess) {
          w.Key("ecc_uncorrected_aggregate").Uint(ecc);
          if (ecc > 0) faults.push_back(gpu + ": " + std::to_string(ecc) + " uncorrected ECC errors");
        } else {
          w.Key("ecc").String("not supported or disabled");
        }
        unsigned pages = 0;
        if (api.nvmlDeviceGetRetiredPages) {
          NvmlReturn r = api.nvmlDeviceGetRetiredPages(dev, kRetiredDoubleBit, &pages, nullptr);
          if (r == kNvmlSuccess || r == kNvmlErrorInsufficientSize) {
            w.Key("retired_pages_double_bit").Uint(pages);
            if (pages > 0) faults.push_back(gpu + ": " + std::to_string(pages) + " pages retired for double-bit ECC errors");
          }
        }
        unsigned corr = 0, unc = 0, pending = 0, failed = 0;
        if (api.nvmlDeviceGetRemappedRows &&
            api.nvmlDeviceGetRemappedRows(dev, &corr, &unc, &pending, &failed) == kNvmlSuccess) {
          w.Key("remapped_rows").BeginObject().Key("correctable").Uint(corr).Key("uncorrectable").Uint(unc)
              .Key("pending").Bool(pending != 0).Key("failed").Bool(failed != 0).EndObject();
          if (failed) faults.push_back(gpu + ": row remapping failed");
          if (unc > 0) faults.push_back(gpu + ": " + std::to_string(unc) + " rows remapped for uncorrectable errors");
        }
        w.EndObject();
      }
      w.EndArray();
    } else {
      w.Key("nvml").String(nvml.problem.Reason());
    }
    w.Key("kernel_log").String(klog.ok ? klog.source : (klog.permission.empty() ? klog.error : klog.permission));
    w.Key("xid_events").BeginArray();
    for (size_t i = xids.size() > 20 ? xids.size() - 20 : 0; i < xids.size(); ++i) w.String(xids[i]);
    w.EndArray().Key("xid_count").Uint(xids.size());
    w.EndObject();
    std::string facts = w.Take();
    if (!xids.empty()) faults.push_back(std::to_string(xids.size()) + " Xid events in " + klog.source + " (last: " + xids.back() + ")");

    std::string fault_text;
    for (const auto& f : faults) fault_text += (fault_text.empty() ? "" : "; ") + f;
    if (!faults.empty()) {
      if (h.cause.empty()) return Finding::Host(HostStatus::kFail, fault_text, facts);
      return Finding::Confirmed(fault_text, facts);
    }
    if (!klog.ok && !klog.permission.empty())
      return Finding::Inconclusive("permission: cannot read the kernel log (" + klog.permission + ")", facts);
    if (!nvml.nvml) return Finding::Inconclusive(nvml.problem.Reason(), facts);
    std::string clean = "no uncorrected ECC errors, retired pages or remapping failures; no Xid in " +
                        (klog.ok ? klog.source : "the kernel log (" + klog.error + ")");
    if (h.cause.empty()) return Finding::Host(HostStatus::kPass, clean, facts);
    return Finding::Refuted(clean, facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeGpuHealth() { return std::make_unique<GpuHealth>(); }

}  // namespace triage::verifiers

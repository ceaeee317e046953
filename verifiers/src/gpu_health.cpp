// gpu.health: NVML's uncorrected ECC counters, retired and remapped pages, and Xid events in the
// kernel log. Verdict for gpu.hardware_fault: confirmed by a fault found now; a clean GPU now is
// `not_reproduced` (the log's own Xid and ECC lines are facts of that time, and a reset or a
// reboot clears the kernel's). Xids that a faulting program causes (13, 31, 43, 45: a kernel's
// exception, an MMU fault, a stopped context, its cleanup) are not hardware faults. For
// cuda.illegal_memory_access the check says only whether the GPU itself looks broken, which
// neither proves nor rules out a fault in the service's kernel: inconclusive either way. An
// unreadable kernel log is `inconclusive: permission` unless NVML already proves a fault.
#include <cstdlib>
#include <set>

#include "common.h"
#include "triage/verifiers/detail/gpu.h"

namespace triage::verifiers {

namespace {

using namespace detail;

constexpr int kUncorrected = 1;          // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kAggregateEcc = 1;         // NVML_AGGREGATE_ECC
constexpr int kRetiredDoubleBit = 1;     // NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR

// "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus." -> 79; 0 when unnumbered.
int XidNumber(const std::string& line) {
  size_t at = line.find("Xid");
  if (at == std::string::npos) return 0;
  size_t colon = line.find("): ", at);
  if (colon == std::string::npos) return 0;
  return std::atoi(line.c_str() + colon + 3);
}

// Xids a program's own fault produces (NVIDIA's Xid catalog): not the hardware's.
bool IsProgramXid(int xid) {
  static const std::set<int> kProgram = {13, 31, 43, 45};
  return kProgram.count(xid) > 0;
}

class GpuHealth final : public Verifier {
 public:
  std::string_view name() const override { return "gpu.health"; }

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    NvmlOpen nvml = OpenNvml(config);
    KernelLog klog = ReadKernelLog(config);
    std::vector<std::string> xids, program_xids;
    if (klog.ok)
      for (const auto& line : klog.lines)
        if (line.find("NVRM: Xid") != std::string::npos || line.find("fallen off the bus") != std::string::npos)
          (IsProgramXid(XidNumber(line)) ? program_xids : xids).push_back(line);

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
    w.Key("program_xid_count").Uint(program_xids.size());
    w.EndObject();
    std::string facts = w.Take();
    if (!xids.empty()) faults.push_back(std::to_string(xids.size()) + " Xid events in " + klog.source + " (last: " + xids.back() + ")");

    std::string fault_text;
    for (const auto& f : faults) fault_text += (fault_text.empty() ? "" : "; ") + f;
    const bool kernel_fault = h.cause.rfind("cuda.illegal_memory_access", 0) == 0;
    if (!faults.empty()) {
      if (h.cause.empty()) return Finding::Host(HostStatus::kFail, fault_text, facts);
      if (kernel_fault)
        return Finding::Inconclusive("the GPU reports hardware faults (" + fault_text + "): they point at "
                                     "gpu.hardware_fault, and say nothing of the service's kernel",
                                     facts);
      return Finding::Confirmed(fault_text, facts);
    }
    if (!klog.ok && !klog.permission.empty())
      return Finding::Inconclusive("permission: cannot read the kernel log (" + klog.permission + ")", facts);
    if (!nvml.nvml) return Finding::Inconclusive(nvml.problem.Reason(), facts);
    std::string clean = "no uncorrected ECC errors, retired pages or remapping failures; no hardware Xid in " +
                        (klog.ok ? klog.source : "the kernel log (" + klog.error + ")");
    if (!program_xids.empty())
      clean += " (" + std::to_string(program_xids.size()) + " Xids of faulting programs; last: " + program_xids.back() + ")";
    if (h.cause.empty())
      return Finding::Host(program_xids.empty() ? HostStatus::kPass : HostStatus::kWarn, clean, facts);
    if (kernel_fault)
      return Finding::Inconclusive(clean + ": a healthy GPU says nothing of the service's kernel", facts);
    return Finding::NotReproduced(clean + " now; the log's own fault lines are facts of that time (a reset or "
                                  "a reboot clears the kernel's record)",
                                  facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeGpuHealth() { return std::make_unique<GpuHealth>(); }

}  // namespace triage::verifiers

// cuda.toolkits: every installed CUDA toolkit, its version and the architectures its NVRTC can
// target (both read from the library itself). Verdict for cuda.toolkit_too_old_for_arch: the
// toolkit cannot build for the architecture when its version is below the required one (from
// the log, else NVIDIA's minimum for that architecture) or its NVRTC does not list the
// architecture. Versions decide: NVRTC 12.8 lists 120, yet FlashInfer's JIT needs 12.9 there.
#include <algorithm>
#include <map>

#include "common.h"
#include "triage/verifiers/detail/gpu.h"
#include "triage/verifiers/detail/process.h"
#include "triage/verifiers/detail/toolkits.h"

namespace triage::verifiers {

namespace {

using namespace detail;

// NVIDIA's first toolkit for each architecture (the knowledge table the rules fall back to).
int MinimumToolkitFor(int arch) {
  static const std::map<int, int> table = {
      {50, 6000},  {52, 6500},  {53, 6500},  {60, 8000},  {61, 8000},  {62, 8000},
      {70, 9000},  {72, 10000}, {75, 10000}, {80, 11000}, {86, 11010}, {87, 11040},
      {89, 11080}, {90, 11080}, {100, 12080}, {101, 12080}, {103, 12090}, {110, 13000},
      {120, 12080}, {121, 12090}};
  auto it = table.find(arch);
  return it == table.end() ? 0 : it->second;
}

std::string ArchListText(const std::vector<int>& archs) {
  std::string s;
  for (int a : archs) {
    if (!s.empty()) s += ',';
    s += std::to_string(a);
  }
  return s;
}

struct Judged {
  const Toolkit* toolkit;
  bool ok;  // can build for the architecture at the required version
  std::string why;
};

class CudaToolkits final : public Verifier {
 public:
  std::string_view name() const override { return "cuda.toolkits"; }

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    std::vector<Toolkit> toolkits = FindToolkits(config);
    // A toolkit the log names (CUDA_HOME, an nvcc path) that the search did not find.
    std::string named;
    for (const char* key : {"toolkit", "cuda_home", "nvcc", "toolkit_path"})
      if (!h.Arg(key).empty()) named = h.Arg(key);
    if (!named.empty()) {
      std::string root = named;
      if (auto pos = root.find("/bin/nvcc"); pos != std::string::npos) root = root.substr(0, pos);
      bool known = std::any_of(toolkits.begin(), toolkits.end(),
                               [&](const Toolkit& t) { return t.root == root; });
      if (!known) {
        std::string nvrtc = FindNvrtcIn(root);
        if (!nvrtc.empty()) {
          // Loading it runs its code: only a checked file, loaded by its descriptor.
          ProgramDecision d = MayLoad(nvrtc, config);
          if (!d.allowed) return Finding::Skipped("toolkit " + root + ": " + d.reason);
          toolkits.push_back(ProbeToolkit(root, d, "log"));
        }
      }
    }

    // The architecture: from the log, else the device's.
    int arch = 0;
    std::string arch_from = "log";
    std::string arch_text;
    for (const char* key : {"arch", "sm", "capability", "compute_capability"})
      if (!h.Arg(key).empty()) arch_text = h.Arg(key);
    std::string device_note;
    int device_arch = 0;
    if (!h.cause.empty() || arch_text.empty()) {
      DriverOpen open = OpenDriver(config);
      if (open.driver && !open.driver->devices.empty()) device_arch = open.driver->devices[0].arch();
      else device_note = open.problem.Reason();
    }
    if (!arch_text.empty()) {
      arch = ParseArch(arch_text);
      // "12.x": a family; the device's member when the device is in it.
      if (arch_text.find(".x") != std::string::npos && device_arch / 10 == arch / 10 &&
          device_arch > 0)
        arch = device_arch;
    } else if (device_arch > 0) {
      arch = device_arch;
      arch_from = "device";
    }

    int required = ParseCudaVersion(h.Arg("required"));
    std::string required_from = "log";
    if (required == 0 && arch > 0) {
      required = MinimumToolkitFor(arch);
      required_from = "NVIDIA's minimum for sm_" + std::to_string(arch);
    }

    // Candidates: the toolkit the service uses when the log says, else every one found.
    std::vector<const Toolkit*> candidates;
    for (const auto& t : toolkits) {
      if (!named.empty() && named.rfind(t.root, 0) != 0) continue;
      candidates.push_back(&t);
    }
    if (candidates.empty() && named.empty())
      for (const auto& t : toolkits) candidates.push_back(&t);

    std::vector<Judged> judged;
    for (const Toolkit* t : candidates) {
      if (t->version == 0) continue;
      Judged j{t, true, ""};
      std::string v = "NVRTC " + CudaVersionText(t->version) + " (" + t->root + ")";
      bool listed = std::find(t->archs.begin(), t->archs.end(), arch) != t->archs.end();
      if (arch > 0 && !t->archs.empty() && !listed) {
        j.ok = false;
        j.why = v + " cannot target sm_" + std::to_string(arch) + " (it targets " +
                ArchListText(t->archs) + ")";
      } else if (required > 0 && t->version < required) {
        j.ok = false;
        j.why = v + " < " + CudaVersionText(required) + " required (" + required_from + ")" +
                (listed ? "; it lists sm_" + std::to_string(arch) + ", but the version decides" : "");
      } else {
        j.why = v + (arch > 0 ? " targets sm_" + std::to_string(arch) : std::string()) +
                (required > 0 ? " and is >= " + CudaVersionText(required) + " required" : "");
      }
      judged.push_back(std::move(j));
    }

    JsonWriter w;
    w.BeginObject();
    if (arch > 0) w.Key("arch").String("sm_" + std::to_string(arch)).Key("arch_from").String(arch_from);
    if (device_arch > 0) w.Key("device_arch").String("sm_" + std::to_string(device_arch));
    if (!device_note.empty()) w.Key("device").String(device_note);
    if (required > 0)
      w.Key("required").String(CudaVersionText(required)).Key("required_from").String(required_from);
    w.Key("toolkits").BeginArray();
    for (const auto& t : toolkits) {
      w.BeginObject().Key("root").String(t.root).Key("nvrtc").String(t.nvrtc_path);
      w.Key("found_by").String(t.found_by);
      if (t.version) {
        w.Key("nvrtc_version").String(CudaVersionText(t.version));
        w.Key("archs").BeginArray();
        for (int a : t.archs) w.Int(a);
        w.EndArray();
      } else {
        w.Key("error").String(t.error);
      }
      w.EndObject();
    }
    w.EndArray().EndObject();
    std::string facts = w.Take();

    if (h.cause.empty()) {
      if (toolkits.empty())
        return Finding::Host(HostStatus::kWarn, "no CUDA toolkit found (CUDA_HOME, PATH, /usr/local/cuda*)", facts);
      std::string detail;
      bool device_ok = device_arch == 0;
      for (const auto& t : toolkits) {
        if (!detail.empty()) detail += "; ";
        if (t.version == 0) {
          detail += t.root + ": " + t.error;
          continue;
        }
        detail += "CUDA " + CudaVersionText(t.version) + " at " + t.root + " (NVRTC targets " +
                  ArchListText(t.archs) + ")";
        if (std::find(t.archs.begin(), t.archs.end(), device_arch) != t.archs.end()) device_ok = true;
      }
      if (!device_ok)
        return Finding::Host(HostStatus::kWarn,
                             detail + "; none targets the device's sm_" + std::to_string(device_arch),
                             facts);
      return Finding::Host(HostStatus::kPass, detail, facts);
    }

    if (toolkits.empty()) return Finding::Inconclusive("no CUDA toolkit found", facts);
    if (judged.empty())
      return Finding::Inconclusive(
          named.empty() ? "no toolkit's NVRTC could be used" : "the toolkit the log names (" + named + ") was not found",
          facts);
    if (arch == 0 && required == 0)
      return Finding::Inconclusive(
          "no architecture in the log and none from a device" +
              (device_note.empty() ? std::string() : " (" + device_note + ")"),
          facts);
    size_t too_old = std::count_if(judged.begin(), judged.end(), [](const Judged& j) { return !j.ok; });
    std::string whys;
    for (const auto& j : judged) whys += (whys.empty() ? "" : "; ") + j.why;
    if (too_old == judged.size()) return Finding::Confirmed(whys, facts);
    if (too_old == 0) return Finding::Refuted(whys, facts);
    return Finding::Inconclusive("the toolkits disagree and the log does not say which one the "
                                 "service uses: " + whys,
                                 facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeCudaToolkits() { return std::make_unique<CudaToolkits>(); }

}  // namespace triage::verifiers

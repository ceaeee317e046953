// cuda.toolkits: every installed CUDA toolkit, its version and the architectures its NVRTC can
// target (both read from the library itself). Verdict for cuda.toolkit_too_old_for_arch: the
// toolkit the service used (the one the log names by its CUDA_HOME, nvcc path or version) cannot
// build for the architecture when its version is below the required one (from the log, else
// NVIDIA's minimum for that architecture) or its NVRTC does not list the architecture. Versions
// decide: NVRTC 12.8 lists 120, yet FlashInfer's JIT needs 12.9 there. A toolkit of this host
// that the log does not name refutes nothing (not_reproduced); one the log names that is not
// here makes the check not_applicable. For jit.build_failed it concludes only about "no nvcc".
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "common.h"
#include "triage/verifiers/detail/gpu.h"
#include "triage/verifiers/detail/process.h"
#include "triage/verifiers/detail/site.h"
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

bool IsDir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string Canonical(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// "/usr/local/cuda-12.8/bin/nvcc", "/usr/local/cuda-12.8/" -> "/usr/local/cuda-12.8".
std::string RootOf(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  for (const std::string tail : {"/bin/nvcc", "/bin"})
    if (path.size() > tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0)
      path.resize(path.size() - tail.size());
  return path;
}

bool SameRoot(const std::string& a, const std::string& b) {
  return a == b || Canonical(a) == Canonical(b);
}

bool SameMinor(int a, int b) { return a / 10 == b / 10; }

// "/usr/local/cuda-12.8" -> 12080; 0 when the folder's name says no version.
int VersionInName(const std::string& root) {
  const std::string base = root.substr(root.find_last_of('/') + 1);
  if (base.rfind("cuda-", 0) != 0) return 0;
  return ParseCudaVersion(base.substr(5));
}

std::string VersionsText(const std::vector<int>& versions) {
  std::string s;
  for (int v : versions) s += (s.empty() ? "" : " or ") + CudaVersionText(v);
  return s;
}

std::string HereText(const std::vector<Toolkit>& toolkits) {
  std::string s;
  for (const auto& t : toolkits)
    if (t.version) s += (s.empty() ? "" : ", ") + ("CUDA " + CudaVersionText(t.version) + " (" + t.root + ")");
  return s.empty() ? std::string("no usable CUDA toolkit") : s;
}

class CudaToolkits final : public Verifier {
 public:
  std::string_view name() const override { return "cuda.toolkits"; }

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    std::vector<Toolkit> toolkits = FindToolkits(config);
    // The toolkit the service used, as the log names it: the rule's argument, else (for a cause)
    // the log's CUDA_HOME and nvcc lines. A named root the search did not find is probed when it
    // is on this file system.
    std::vector<std::string> named;
    for (const char* key : {"toolkit", "cuda_home", "nvcc", "toolkit_path"})
      if (!h.Arg(key).empty()) named.push_back(RootOf(h.Arg(key)));
    if (!h.cause.empty())
      for (const auto& r : h.log.toolkit_roots)
        if (std::none_of(named.begin(), named.end(), [&](const std::string& n) { return n == r; }))
          named.push_back(r);
    std::vector<int> named_versions = h.cause.empty() ? std::vector<int>{} : h.log.toolkit_versions;
    // "/usr/local/cuda-12.8": a folder's name that says its version says it of the log's toolkit,
    // when the log prints none itself.
    const bool versions_printed = !named_versions.empty();
    for (const auto& root : named)
      if (int v = versions_printed ? 0 : VersionInName(root))
        if (std::find(named_versions.begin(), named_versions.end(), v) == named_versions.end())
          named_versions.push_back(v);
    for (const auto& root : named) {
      bool known = std::any_of(toolkits.begin(), toolkits.end(),
                               [&](const Toolkit& t) { return SameRoot(t.root, root); });
      if (known || !IsDir(root)) continue;
      std::string nvrtc = FindNvrtcIn(root);
      if (nvrtc.empty()) continue;
      // Loading it runs its code: only a checked file, loaded by its descriptor.
      ProgramDecision d = MayLoad(nvrtc, config);
      if (!d.allowed) return Finding::Skipped("toolkit " + root + ": " + d.reason);
      toolkits.push_back(ProbeToolkit(root, d, "log"));
    }

    // The architecture: from the rule's arguments, else the device's the log names, else this
    // machine's device.
    int arch = 0;
    std::string arch_from = "log";
    std::string arch_text;
    for (const char* key : {"arch", "sm", "capability", "compute_capability"})
      if (!h.Arg(key).empty()) arch_text = h.Arg(key);
    if (arch_text.empty() && !h.log.archs.empty()) arch_text = ArchName(h.log.archs.front());
    std::string device_note;
    int device_arch = 0;
    if (h.cause.empty() || arch_text.empty() || arch_text.find(".x") != std::string::npos) {
      DriverOpen open = OpenDriver(config);
      if (open.driver && !open.driver->devices.empty()) device_arch = open.driver->devices[0].arch();
      else device_note = open.problem.Reason();
    }
    if (!arch_text.empty()) {
      arch = ParseArch(arch_text.rfind("SM ", 0) == 0 ? arch_text.substr(3) : arch_text);
      // "12.x": a family; the device's member when the device is in it.
      if (arch_text.find(".x") != std::string::npos && device_arch / 10 == arch / 10 && device_arch > 0)
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

    JsonWriter w;
    w.BeginObject();
    if (arch > 0) w.Key("arch").String("sm_" + std::to_string(arch)).Key("arch_from").String(arch_from);
    if (device_arch > 0) w.Key("device_arch").String("sm_" + std::to_string(device_arch));
    if (!device_note.empty()) w.Key("device").String(device_note);
    if (required > 0)
      w.Key("required").String(CudaVersionText(required)).Key("required_from").String(required_from);
    if (!named.empty()) {
      w.Key("log_toolkits").BeginArray();
      for (const auto& r : named) w.String(r);
      w.EndArray();
    }
    if (!named_versions.empty()) {
      w.Key("log_toolkit_versions").BeginArray();
      for (int v : named_versions) w.String(CudaVersionText(v));
      w.EndArray();
    }
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

    if (h.cause.empty()) return HostCheck(toolkits, device_arch, facts);
    if (h.cause.rfind("jit.build_failed", 0) == 0) return JudgeBuild(h, named, toolkits, facts);
    if (h.cause.rfind("cuda.toolkit_too_old_for_arch", 0) != 0)
      return Finding::Inconclusive("no verdict for " + h.cause + "; facts only: " + HereText(toolkits), facts);
    return JudgeArch(named, named_versions, h.log.names_this_host, toolkits, arch, required, required_from,
                     device_note, facts);
  }

 private:
  static Finding HostCheck(const std::vector<Toolkit>& toolkits, int device_arch, const std::string& facts) {
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
                           detail + "; none targets the device's sm_" + std::to_string(device_arch), facts);
    return Finding::Host(HostStatus::kPass, detail, facts);
  }

  // cuda.toolkit_too_old_for_arch: the toolkit the service used, against the architecture and
  // the version it needs. Only the service's toolkit can refute the claim: a toolkit of this
  // machine that the log does not name may not be the one the service compiled with.
  static Finding JudgeArch(const std::vector<std::string>& named, const std::vector<int>& named_versions,
                           bool this_host_named, const std::vector<Toolkit>& toolkits, int arch, int required,
                           const std::string& required_from, const std::string& device_note,
                           const std::string& facts) {
    std::vector<const Toolkit*> candidates;
    bool service_known = false;
    if (!named.empty()) {
      std::string roots;
      for (const auto& r : named) roots += (roots.empty() ? "" : ", ") + r;
      for (const auto& t : toolkits)
        if (t.version && std::any_of(named.begin(), named.end(), [&](const std::string& r) { return SameRoot(t.root, r); }))
          candidates.push_back(&t);
      for (const auto& t : toolkits)
        if (candidates.empty() && !t.version &&
            std::any_of(named.begin(), named.end(), [&](const std::string& r) { return SameRoot(t.root, r); }))
          return Finding::Inconclusive("the toolkit the log names is here (" + t.root + "), but its NVRTC "
                                       "could not be used: " + t.error,
                                       facts);
      if (candidates.empty())
        return Finding::NotApplicable("the toolkit the log names (" + roots +
                                          (named_versions.empty() ? "" : ", CUDA " + VersionsText(named_versions)) +
                                          (std::any_of(named.begin(), named.end(), IsDir) ? ") has no usable NVRTC"
                                                                                          : ") is not") +
                                          " on this host; this host has " + HereText(toolkits),
                                      facts);
      if (!named_versions.empty()) {
        std::vector<const Toolkit*> same;
        for (const Toolkit* t : candidates)
          if (std::any_of(named_versions.begin(), named_versions.end(), [&](int v) { return SameMinor(v, t->version); }))
            same.push_back(t);
        if (same.empty())
          return Finding::NotApplicable("the log's toolkit at " + roots + " was CUDA " + VersionsText(named_versions) +
                                            "; here it is CUDA " + CudaVersionText(candidates.front()->version) +
                                            ": not the toolkit the service used",
                                        facts);
        candidates = same;
      }
      service_known = true;
    } else if (!named_versions.empty()) {
      for (const auto& t : toolkits)
        if (t.version && std::any_of(named_versions.begin(), named_versions.end(), [&](int v) { return SameMinor(v, t.version); }))
          candidates.push_back(&t);
      if (candidates.empty())
        return Finding::NotApplicable("the log's toolkit is CUDA " + VersionsText(named_versions) +
                                          "; this host has " + HereText(toolkits),
                                      facts);
      service_known = true;
    } else {
      if (toolkits.empty()) return Finding::Inconclusive("no CUDA toolkit found", facts);
      for (const auto& t : toolkits)
        if (t.version) candidates.push_back(&t);
      if (candidates.empty()) return Finding::Inconclusive("no toolkit's NVRTC could be used", facts);
    }
    if (arch == 0 && required == 0)
      return Finding::Inconclusive(
          "no architecture in the log and none from a device" + (device_note.empty() ? std::string() : " (" + device_note + ")"),
          facts);

    std::vector<Judged> judged;
    for (const Toolkit* t : candidates) {
      Judged j{t, true, ""};
      std::string v = "NVRTC " + CudaVersionText(t->version) + " (" + t->root + ")";
      bool listed = std::find(t->archs.begin(), t->archs.end(), arch) != t->archs.end();
      if (arch > 0 && !t->archs.empty() && !listed) {
        j.ok = false;
        j.why = v + " cannot target sm_" + std::to_string(arch) + " (it targets " + ArchListText(t->archs) + ")";
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
    size_t too_old = std::count_if(judged.begin(), judged.end(), [](const Judged& j) { return !j.ok; });
    std::string whys;
    for (const auto& j : judged) whys += (whys.empty() ? "" : "; ") + j.why;
    if (too_old == judged.size()) return Finding::Confirmed(whys, facts);
    if (too_old == 0) {
      // A folder is the service's toolkit only as far as the log pins it: by its version, or by
      // naming this very host. "/usr/local/cuda" alone is a link that differs between machines.
      if (service_known && (!named_versions.empty() || this_host_named))
        return Finding::Refuted("the toolkit the log names: " + whys, facts);
      if (service_known)
        return Finding::NotReproduced("the log names the toolkit's folder but not its version, and the folder "
                                      "may hold another toolkit here than there: " + whys,
                                      facts);
      return Finding::NotReproduced("the log does not say which toolkit the service compiled with; every one "
                                    "here can: " + whys,
                                    facts);
    }
    return Finding::Inconclusive("the toolkits disagree and the log does not say which one the service uses: " + whys,
                                 facts);
  }

  // jit.build_failed: a toolkit being here concludes only about "no toolkit"; and even then the
  // log's own line (CUDA_HOME unset, no nvcc) is a fact of that time: a toolkit here now was
  // installed since, or is not on the service's CUDA_HOME and PATH.
  static Finding JudgeBuild(const Hypothesis& h, const std::vector<std::string>& named,
                            const std::vector<Toolkit>& toolkits, const std::string& facts) {
    if (h.cause != "jit.build_failed.no_nvcc")
      return Finding::Inconclusive("a CUDA toolkit being installed says nothing of a build error (" +
                                       HereText(toolkits) + ")",
                                   facts);
    for (const auto& root : named)
      if (::access((root + "/bin/nvcc").c_str(), X_OK) == 0)
        return Finding::NotReproduced(root + "/bin/nvcc, which the log names, is here now: installed since, or "
                                      "not what the service's environment pointed at",
                                      facts);
    if (!named.empty()) {
      std::string roots;
      for (const auto& r : named) roots += (roots.empty() ? "" : ", ") + r;
      return Finding::Confirmed("no bin/nvcc in " + roots + " on this host, as the log says", facts);
    }
    for (const auto& t : toolkits)
      if (::access((t.root + "/bin/nvcc").c_str(), X_OK) == 0)
        return Finding::NotReproduced("a toolkit with nvcc is here now (" + t.root + "): the service's "
                                      "CUDA_HOME and PATH did not lead to it, or it was installed since",
                                      facts);
    return Finding::Confirmed("no CUDA toolkit with nvcc on this host (CUDA_HOME, PATH, /usr/local/cuda*)", facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeCudaToolkits() { return std::make_unique<CudaToolkits>(); }

}  // namespace triage::verifiers

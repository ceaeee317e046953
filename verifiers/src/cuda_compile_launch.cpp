// cuda.compile_launch: triage's kernels on the device, three ways: compiled by NVRTC for the
// device's exact architecture (a cubin), compiled to PTX and JIT-compiled by the driver, and the
// fatbin nvcc built ahead of time. Each result is compared with its CPU reference on fresh random
// inputs. Verdict for lib.arch_unsupported: when the sampling kernel built for the device's
// sm_XY matches the CPU reference, the GPU can do the operation and the library's own gate is
// what refuses it. Triage's kernels passing says the GPU and driver work: evidence about
// gpu.hardware_fault only (there `not_reproduced`: the log's fault may have been transient or
// cleared by a reset; a failure confirms), never about a fault in the service's own kernel
// (cuda.illegal_memory_access) or the service's toolchain: inconclusive for those.
#include <algorithm>
#include <random>

#include "common.h"
#include "triage/kernels/kernels.h"
#include "triage/verifiers/detail/gpu.h"
#include "triage/verifiers/detail/kernel_checks.h"
#include "triage/verifiers/detail/toolkits.h"

namespace triage::verifiers {

namespace {

using namespace detail;

struct Path {
  std::string name;  // "nvrtc_cubin", "nvrtc_ptx_jit", "prebuilt"
  std::string note;  // why it did not run, when it did not
  KernelRun run;
  bool ran = false;
};

// The toolkit whose NVRTC targets `arch`, the newest; null when none does.
const Toolkit* NvrtcToolkitFor(const std::vector<Toolkit>& toolkits, int arch) {
  const Toolkit* found = nullptr;
  for (const auto& t : toolkits)
    if (t.version > 0 && std::find(t.archs.begin(), t.archs.end(), arch) != t.archs.end() &&
        (!found || t.version > found->version))
      found = &t;
  return found;
}

// Paths 1 and 2: NVRTC for the device's exact architecture as a cubin, then PTX through the
// driver's JIT. `best`: the newest toolkit found at all (for the note when none targets `arch`).
void AddNvrtcPaths(const Toolkit* best, const Toolkit* nvrtc_toolkit, const Driver& driver,
                   const Device& device, int arch, uint32_t seed, std::vector<Path>& paths) {
  std::unique_ptr<NvrtcApi> nvrtc;
  if (nvrtc_toolkit) {
    auto api = OpenNvrtc(nvrtc_toolkit->nvrtc_path);
    if (api.ok()) nvrtc = std::move(api.value());
  }
  for (bool ptx : {false, true}) {
    Path p;
    p.name = ptx ? "nvrtc_ptx_jit" : "nvrtc_cubin";
    if (!nvrtc) {
      p.note = best ? "no NVRTC found targets sm_" + std::to_string(arch) : "no NVRTC found";
    } else if (ptx && driver.driver_version < nvrtc_toolkit->version) {
      p.note = std::string(GpuProblemText(GpuProblem::kDriverTooOld)) + ": the driver supports CUDA " +
               CudaVersionText(driver.driver_version) + ", PTX from NVRTC " +
               CudaVersionText(nvrtc_toolkit->version) + " needs " +
               CudaVersionText(nvrtc_toolkit->version);
    } else {
      Compiled c = CompileWithNvrtc(*nvrtc, std::string(kernels::Source()), arch, ptx);
      if (!c.ok) {
        p.note = c.log;
      } else {
        p.ran = true;
        p.run = RunKernelChecks(driver, device, c.image.data(), seed);
      }
    }
    paths.push_back(std::move(p));
  }
}

// Path 3: the fatbin built ahead of time.
Path PrebuiltPath(bool prebuilt, const Driver& driver, const Device& device, uint32_t seed) {
  Path p;
  p.name = "prebuilt";
  if (!prebuilt) {
    p.note = GpuProblemText(GpuProblem::kBuiltWithoutKernels);
  } else if (driver.driver_version < kernels::PrebuiltCudaVersion()) {
    p.note = std::string(GpuProblemText(GpuProblem::kDriverTooOld)) +
             ": the driver supports CUDA " + CudaVersionText(driver.driver_version) +
             ", triage's kernels were built with CUDA " +
             CudaVersionText(kernels::PrebuiltCudaVersion());
  } else {
    p.ran = true;
    p.run = RunKernelChecks(driver, device, kernels::PrebuiltImage().data(), seed + 1);
  }
  return p;
}

// What the paths showed, and the facts JSON that records them.
struct Outcome {
  std::string facts;
  std::string where;     // "NAME (sm_XY)"
  std::string ran_list;  // the paths that ran with every kernel right
  std::string failures;  // "path: why" of each path with a kernel wrong
  bool any_ran = false, all_ok = true, sampling_ok = false, sampling_bad = false;
};

// Why a path that ran is not all right: its first kernel that differs, else its load error.
std::string PathFailure(const Path& p) {
  std::string why = p.run.loaded ? "no kernel could run (out of device memory)" : p.run.load_error;
  for (const auto& c : p.run.checks)
    if (!c.ok && !c.not_run) return c.kernel + " differs from its CPU reference: " + c.detail;
  return why;
}

Outcome Summarize(const std::vector<Path>& paths, const Driver& driver, const Device& device,
                  int arch, const Toolkit* nvrtc_toolkit, uint32_t seed) {
  Outcome out;
  JsonWriter w;
  w.BeginObject();
  w.Key("device").String(device.name).Key("arch").String("sm_" + std::to_string(arch));
  w.Key("cuda_driver_version").String(CudaVersionText(driver.driver_version));
  if (nvrtc_toolkit)
    w.Key("nvrtc").String(nvrtc_toolkit->nvrtc_path).Key("nvrtc_version").String(CudaVersionText(nvrtc_toolkit->version));
  w.Key("seed").Uint(seed);
  w.Key("paths").BeginObject();
  for (const auto& p : paths) {
    w.Key(p.name).BeginObject();
    if (!p.ran) {
      w.Key("ran").Bool(false).Key("why").String(p.note);
    } else {
      w.Key("ran").Bool(true).Key("loaded").Bool(p.run.loaded);
      if (!p.run.loaded) w.Key("error").String(p.run.load_error);
      w.Key("kernels").Raw(KernelRunJson(p.run));
      out.any_ran = true;
      if (!p.run.AllOk()) {
        out.all_ok = false;
        out.failures += (out.failures.empty() ? "" : "; ") + p.name + ": " + PathFailure(p);
      }
      for (const auto& c : p.run.checks)
        if (c.kernel == "topk_topp_sampling" && !c.not_run) (c.ok ? out.sampling_ok : out.sampling_bad) = true;
    }
    w.EndObject();
  }
  w.EndObject().EndObject();
  out.facts = w.Take();
  out.where = device.name + " (sm_" + std::to_string(arch) + ")";
  for (const auto& p : paths)
    if (p.ran && p.run.AllOk()) out.ran_list += (out.ran_list.empty() ? "" : ", ") + p.name;
  return out;
}

// The host check (no cause given): pass, warn (something skipped) or fail.
Finding HostFinding(const std::vector<Path>& paths, const Outcome& out) {
  if (!out.any_ran) return Finding::Inconclusive("nothing could run on " + out.where, out.facts);
  if (!out.all_ok) return Finding::Host(HostStatus::kFail, out.failures, out.facts);
  std::string skipped;
  for (const auto& p : paths) {
    if (!p.ran) skipped += "; " + p.name + " not run: " + p.note;
    for (const auto& c : p.run.checks)
      if (c.not_run) skipped += "; " + p.name + " " + c.kernel + " " + c.detail;
  }
  return Finding::Host(skipped.empty() ? HostStatus::kPass : HostStatus::kWarn,
                       "every kernel matched its CPU reference on " + out.where + " via " +
                           out.ran_list + skipped,
                       out.facts);
}

// The verdict on `cause` from what ran.
Finding CauseFinding(const std::string& cause, const Outcome& out, int arch,
                     const std::string& device_name) {
  if (cause.rfind("lib.arch_unsupported", 0) == 0) {
    if (out.sampling_ok && !out.sampling_bad)
      return Finding::Confirmed("the sampling kernel built for sm_" + std::to_string(arch) +
                                    " matched the CPU reference on " + device_name +
                                    ": the GPU can do it; the library's gate is what refuses",
                                out.facts);
    // The library refusing this GPU is still what happened; a GPU that cannot do it only
    // makes the refusal right (or points at a fault): nothing to refute.
    if (out.sampling_bad)
      return Finding::Inconclusive("the sampling kernel for sm_" + std::to_string(arch) +
                                       " does not match the CPU reference on " + device_name +
                                       ": the GPU (or its driver) cannot do it, so the library's gate may "
                                       "be right, or the GPU faulty",
                                   out.facts);
    return Finding::Inconclusive("the sampling kernel did not run: " + out.failures, out.facts);
  }
  const std::string passed = "compiled and launched for sm_" + std::to_string(arch) + " via " +
                             out.ran_list + "; every kernel matched its CPU reference";
  if (cause.rfind("gpu.hardware_fault", 0) == 0) {
    if (out.all_ok)
      return Finding::NotReproduced(passed + ": the GPU computes correctly now (a fault the log shows may "
                                    "have been transient or cleared by a reset)",
                                    out.facts);
    return Finding::Confirmed(out.failures, out.facts);
  }
  if (cause.rfind("cuda.illegal_memory_access", 0) == 0) {
    if (out.all_ok)
      return Finding::Inconclusive(passed + ": the GPU and driver work, which says nothing of the "
                                   "service's own kernel",
                                   out.facts);
    return Finding::Inconclusive("triage's kernels fail too (" + out.failures + "): that points at the GPU "
                                 "or its driver (gpu.hardware_fault), not at the service's kernel",
                                 out.facts);
  }
  return Finding::Inconclusive((out.all_ok ? passed : out.failures) + "; with triage's kernels and NVRTC, not the "
                               "service's code or toolchain: no verdict for " + cause,
                               out.facts);
}

class CudaCompileLaunch final : public Verifier {
 public:
  std::string_view name() const override { return "cuda.compile_launch"; }

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    const bool prebuilt = config.use_prebuilt_kernels && kernels::HavePrebuilt();
    std::vector<Toolkit> toolkits = FindToolkits(config);
    const Toolkit* best = nullptr;
    for (const auto& t : toolkits)
      if (t.version > 0 && (!best || t.version > best->version)) best = &t;
    if (!prebuilt && !best)
      return Finding::Inconclusive(
          "built without kernels: no pre-built kernels in this triage and no NVRTC found to "
          "compile them");

    // A driver older than every way of getting kernels (the pre-built image's CUDA, NVRTC's)
    // can run none of them: "driver older than runtime", before cuInit.
    int required = 0;
    if (prebuilt) required = kernels::PrebuiltCudaVersion();
    if (best && (required == 0 || best->version < required)) required = best->version;
    DriverOpen open = OpenDriver(config, required);
    if (!open.driver) {
      JsonWriter w;
      w.BeginObject().Key("problem").String(open.problem.Reason()).EndObject();
      return Finding::Inconclusive(open.problem.Reason(), w.Take());
    }
    const Driver& driver = *open.driver;
    int index = 0;
    if (!h.Arg("device").empty()) index = std::atoi(h.Arg("device").c_str());
    if (index < 0 || index >= static_cast<int>(driver.devices.size()))
      return Finding::Inconclusive("no device " + std::to_string(index));
    const Device& device = driver.devices[static_cast<size_t>(index)];
    const int arch = device.arch();
    std::random_device rd;
    const uint32_t seed = h.Arg("seed").empty() ? rd() : static_cast<uint32_t>(std::stoul(h.Arg("seed")));

    std::vector<Path> paths;
    const Toolkit* nvrtc_toolkit = NvrtcToolkitFor(toolkits, arch);
    AddNvrtcPaths(best, nvrtc_toolkit, driver, device, arch, seed, paths);
    paths.push_back(PrebuiltPath(prebuilt, driver, device, seed));
    const Outcome out = Summarize(paths, driver, device, arch, nvrtc_toolkit, seed);
    if (h.cause.empty()) return HostFinding(paths, out);
    if (!out.any_ran) {
      std::string why;
      for (const auto& p : paths) why += (why.empty() ? "" : "; ") + p.name + ": " + p.note;
      return Finding::Inconclusive(why, out.facts);
    }
    return CauseFinding(h.cause, out, arch, device.name);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeCudaCompileLaunch() { return std::make_unique<CudaCompileLaunch>(); }

}  // namespace triage::verifiers

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
    // 1. NVRTC, the device's exact architecture, as a cubin; 2. PTX through the driver's JIT.
    const Toolkit* nvrtc_toolkit = nullptr;
    for (const auto& t : toolkits)
      if (t.version > 0 && std::find(t.archs.begin(), t.archs.end(), arch) != t.archs.end() &&
          (!nvrtc_toolkit || t.version > nvrtc_toolkit->version))
        nvrtc_toolkit = &t;
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
    // 3. The fatbin built ahead of time.
    {
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
      paths.push_back(std::move(p));
    }

    JsonWriter w;
    w.BeginObject();
    w.Key("device").String(device.name).Key("arch").String("sm_" + std::to_string(arch));
    w.Key("cuda_driver_version").String(CudaVersionText(driver.driver_version));
    if (nvrtc_toolkit)
      w.Key("nvrtc").String(nvrtc_toolkit->nvrtc_path).Key("nvrtc_version").String(CudaVersionText(nvrtc_toolkit->version));
    w.Key("seed").Uint(seed);
    w.Key("paths").BeginObject();
    bool any_ran = false, all_ok = true, sampling_ok = false, sampling_bad = false;
    std::string failures;
    for (const auto& p : paths) {
      w.Key(p.name).BeginObject();
      if (!p.ran) {
        w.Key("ran").Bool(false).Key("why").String(p.note);
      } else {
        w.Key("ran").Bool(true).Key("loaded").Bool(p.run.loaded);
        if (!p.run.loaded) w.Key("error").String(p.run.load_error);
        w.Key("kernels").Raw(KernelRunJson(p.run));
        any_ran = true;
        if (!p.run.AllOk()) {
          all_ok = false;
          std::string why = p.run.loaded ? "no kernel could run (out of device memory)" : p.run.load_error;
          for (const auto& c : p.run.checks)
            if (!c.ok && !c.not_run) {
              why = c.kernel + " differs from its CPU reference: " + c.detail;
              break;
            }
          failures += (failures.empty() ? "" : "; ") + p.name + ": " + why;
        }
        for (const auto& c : p.run.checks)
          if (c.kernel == "topk_topp_sampling" && !c.not_run) (c.ok ? sampling_ok : sampling_bad) = true;
      }
      w.EndObject();
    }
    w.EndObject().EndObject();
    std::string facts = w.Take();
    std::string where = device.name + " (sm_" + std::to_string(arch) + ")";
    std::string ran_list;
    for (const auto& p : paths)
      if (p.ran && p.run.AllOk()) ran_list += (ran_list.empty() ? "" : ", ") + p.name;

    if (h.cause.empty()) {
      if (!any_ran) return Finding::Inconclusive("nothing could run on " + where, facts);
      if (!all_ok) return Finding::Host(HostStatus::kFail, failures, facts);
      std::string skipped;
      for (const auto& p : paths) {
        if (!p.ran) skipped += "; " + p.name + " not run: " + p.note;
        for (const auto& c : p.run.checks)
          if (c.not_run) skipped += "; " + p.name + " " + c.kernel + " " + c.detail;
      }
      return Finding::Host(skipped.empty() ? HostStatus::kPass : HostStatus::kWarn,
                           "every kernel matched its CPU reference on " + where + " via " +
                               ran_list + skipped,
                           facts);
    }
    if (!any_ran) {
      std::string why;
      for (const auto& p : paths) why += (why.empty() ? "" : "; ") + p.name + ": " + p.note;
      return Finding::Inconclusive(why, facts);
    }
    if (h.cause.rfind("lib.arch_unsupported", 0) == 0) {
      if (sampling_ok && !sampling_bad)
        return Finding::Confirmed("the sampling kernel built for sm_" + std::to_string(arch) +
                                      " matched the CPU reference on " + device.name +
                                      ": the GPU can do it; the library's gate is what refuses",
                                  facts);
      // The library refusing this GPU is still what happened; a GPU that cannot do it only
      // makes the refusal right (or points at a fault): nothing to refute.
      if (sampling_bad)
        return Finding::Inconclusive("the sampling kernel for sm_" + std::to_string(arch) +
                                         " does not match the CPU reference on " + device.name +
                                         ": the GPU (or its driver) cannot do it, so the library's gate may "
                                         "be right, or the GPU faulty",
                                     facts);
      return Finding::Inconclusive("the sampling kernel did not run: " + failures, facts);
    }
    const std::string passed = "compiled and launched for sm_" + std::to_string(arch) + " via " + ran_list +
                               "; every kernel matched its CPU reference";
    if (h.cause.rfind("gpu.hardware_fault", 0) == 0) {
      if (all_ok)
        return Finding::NotReproduced(passed + ": the GPU computes correctly now (a fault the log shows may "
                                      "have been transient or cleared by a reset)",
                                      facts);
      return Finding::Confirmed(failures, facts);
    }
    if (h.cause.rfind("cuda.illegal_memory_access", 0) == 0) {
      if (all_ok)
        return Finding::Inconclusive(passed + ": the GPU and driver work, which says nothing of the "
                                     "service's own kernel",
                                     facts);
      return Finding::Inconclusive("triage's kernels fail too (" + failures + "): that points at the GPU "
                                   "or its driver (gpu.hardware_fault), not at the service's kernel",
                                   facts);
    }
    return Finding::Inconclusive((all_ok ? passed : failures) + "; with triage's kernels and NVRTC, not the "
                                 "service's code or toolchain: no verdict for " + h.cause,
                                 facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeCudaCompileLaunch() { return std::make_unique<CudaCompileLaunch>(); }

}  // namespace triage::verifiers

// dlopen'd CUDA driver, NVML and NVRTC: see detail/gpu.h.
#include "triage/verifiers/detail/gpu.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace triage::verifiers::detail {

namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string Join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const auto& i : items) {
    if (!out.empty()) out += sep;
    out += i;
  }
  return out;
}

// Opens `soname` from `dirs` only when given, else through the loader and then `fallbacks`.
// A file that exists but cannot be read is reported as a permission problem.
struct Found {
  SharedLibrary library;
  GpuUnavailable problem;
};
Found OpenSearched(const std::string& soname, const std::vector<std::string>& dirs,
                   const std::vector<std::string>& fallbacks) {
  Found out;
  std::vector<std::string> candidates;
  if (dirs.empty()) {
    candidates.push_back(soname);  // the dynamic loader's own search
    for (const auto& d : fallbacks) candidates.push_back(d + "/" + soname);
  } else {
    for (const auto& d : dirs) candidates.push_back(d + "/" + soname);
  }
  std::string last_error;
  for (const auto& c : candidates) {
    bool bare = c.find('/') == std::string::npos;
    if (!bare && !Exists(c)) continue;
    if (!bare && ::access(c.c_str(), R_OK) != 0 && errno == EACCES) {
      out.problem = {GpuProblem::kNoPermission, "cannot read " + c};
      return out;
    }
    auto lib = SharedLibrary::Open(c);
    if (lib.ok()) {
      out.library = std::move(lib.value());
      return out;
    }
    if (lib.status().kind() != Status::Kind::kNotFound) last_error = lib.status().message();
  }
  if (!last_error.empty()) {
    out.problem = {GpuProblem::kDeviceUnusable, soname + " does not load: " + last_error};
  } else {
    std::vector<std::string> where;
    if (dirs.empty()) where.push_back("the loader's search");
    for (const auto& d : dirs.empty() ? fallbacks : dirs) where.push_back(d);
    out.problem = {GpuProblem::kNoDriver, soname + " not found (searched " + Join(where) + ")"};
  }
  return out;
}

const std::vector<std::string>& DriverFallbacks() {
  static const std::vector<std::string> dirs = {"/usr/lib/x86_64-linux-gnu", "/usr/lib64",
                                                "/usr/lib/aarch64-linux-gnu",
                                                "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib"};
  return dirs;
}

// A device node that exists but this user cannot open: the usual cause of "no device" for a
// user outside the video group.
std::string UnopenableDeviceNode(const std::string& dir) {
  for (const char* name : {"nvidiactl", "nvidia0", "nvidia-uvm"}) {
    std::string path = dir + "/" + name;
    if (Exists(path) && ::access(path.c_str(), R_OK | W_OK) != 0 &&
        (errno == EACCES || errno == EPERM))
      return path;
  }
  return {};
}

template <typename F>
void Bind(const SharedLibrary& lib, F& fn, const char* name) {
  fn = lib.Get<F>(name);
}

}  // namespace

// --- SharedLibrary ---

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& o) noexcept {
  if (this != &o) {
    if (handle_) ::dlclose(handle_);
    handle_ = std::exchange(o.handle_, nullptr);
    path_ = std::move(o.path_);
  }
  return *this;
}

SharedLibrary::~SharedLibrary() {
  if (handle_) ::dlclose(handle_);
}

Result<SharedLibrary> SharedLibrary::Open(const std::string& name_or_path) {
  ::dlerror();
  void* h = ::dlopen(name_or_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* err = ::dlerror();
    std::string why = err ? err : "dlopen failed";
    if (why.find("No such file") != std::string::npos ||
        why.find("cannot open shared object file") != std::string::npos) {
      // "cannot open shared object file: Permission denied" is not a missing file.
      if (why.find("Permission denied") != std::string::npos) return Status::Unavailable(why);
      return Status::NotFound(why);
    }
    return Status::Unavailable(why);
  }
  std::string path = name_or_path;
  struct link_map* map = nullptr;
  if (::dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    path = map->l_name;
  return SharedLibrary(h, path);
}

void* SharedLibrary::Symbol(const char* name) const {
  return handle_ ? ::dlsym(handle_, name) : nullptr;
}

// --- problems ---

const char* GpuProblemText(GpuProblem p) {
  switch (p) {
    case GpuProblem::kNone: return "ok";
    case GpuProblem::kNoDriver: return "no driver";
    case GpuProblem::kDriverTooOld: return "driver older than runtime";
    case GpuProblem::kDeviceUnusable: return "device unusable";
    case GpuProblem::kNoDevice: return "no device";
    case GpuProblem::kNoPermission: return "permission";
    case GpuProblem::kBuiltWithoutKernels: return "built without kernels";
  }
  return "?";
}

std::string GpuUnavailable::Reason() const {
  std::string r = GpuProblemText(problem);
  if (!detail.empty()) r += ": " + detail;
  return r;
}

std::string CudaVersionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

int ParseCudaVersion(const std::string& text) {
  int major = 0, minor = 0;
  size_t i = 0;
  while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  size_t start = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
    major = major * 10 + (text[i++] - '0');
  if (i == start || major > 99) return 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    size_t ms = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - ms < 2)
      minor = minor * 10 + (text[i++] - '0');
  }
  return major * 1000 + minor * 10;
}

int ParseArch(const std::string& text) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* prefix : {"sm_", "compute_", "sm", "compute"})
    if (t.rfind(prefix, 0) == 0) {
      t = t.substr(std::strlen(prefix));
      break;
    }
  size_t dot = t.find('.');
  auto digits = [](const std::string& s) {
    if (s.empty() || s.size() > 3) return -1;
    int v = 0;
    for (char c : s) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
      v = v * 10 + (c - '0');
    }
    return v;
  };
  if (dot != std::string::npos) {
    int major = digits(t.substr(0, dot));
    std::string minor_text = t.substr(dot + 1);
    int minor = minor_text == "x" ? 0 : digits(minor_text);
    if (major <= 0 || minor < 0 || minor > 9) return 0;
    return major * 10 + minor;
  }
  while (!t.empty() && (t.back() == 'a' || t.back() == 'f')) t.pop_back();  // sm_90a, sm_100f
  int v = digits(t);
  return v >= 10 ? v : 0;
}

// --- driver ---

std::string DriverApi::ErrorText(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName) cuGetErrorName(r, &name);
  if (cuGetErrorString) cuGetErrorString(r, &text);
  std::string out = name ? std::string(name) + " (" + std::to_string(r) + ")"
                         : "error " + std::to_string(r);
  if (text) out += ": " + std::string(text);
  return out;
}

std::string DriverApi::MissingForLaunch() const {
  std::vector<std::string> missing;
  auto need = [&](const void* fn, const char* name) {
    if (!fn) missing.push_back(name);
  };
  need(reinterpret_cast<const void*>(cuDeviceGet), "cuDeviceGet");
  need(reinterpret_cast<const void*>(cuDevicePrimaryCtxRetain), "cuDevicePrimaryCtxRetain");
  need(reinterpret_cast<const void*>(cuDevicePrimaryCtxRelease), "cuDevicePrimaryCtxRelease");
  need(reinterpret_cast<const void*>(cuCtxSetCurrent), "cuCtxSetCurrent");
  need(reinterpret_cast<const void*>(cuCtxSynchronize), "cuCtxSynchronize");
  need(reinterpret_cast<const void*>(cuMemAlloc), "cuMemAlloc_v2");
  need(reinterpret_cast<const void*>(cuMemFree), "cuMemFree_v2");
  need(reinterpret_cast<const void*>(cuMemcpyHtoD), "cuMemcpyHtoD_v2");
  need(reinterpret_cast<const void*>(cuMemcpyDtoH), "cuMemcpyDtoH_v2");
  need(reinterpret_cast<const void*>(cuMemsetD8), "cuMemsetD8_v2");
  need(reinterpret_cast<const void*>(cuModuleLoadData), "cuModuleLoadData");
  need(reinterpret_cast<const void*>(cuModuleUnload), "cuModuleUnload");
  need(reinterpret_cast<const void*>(cuModuleGetFunction), "cuModuleGetFunction");
  need(reinterpret_cast<const void*>(cuLaunchKernel), "cuLaunchKernel");
  return Join(missing);
}

DriverOpen OpenDriver(const VerifyConfig& config, int required_version) {
  DriverOpen out;
  Found found = OpenSearched("libcuda.so.1", config.driver_search_paths, DriverFallbacks());
  if (!found.library) {
    out.problem = found.problem;
    return out;
  }
  auto driver = std::make_unique<Driver>();
  DriverApi& api = driver->api;
  api.library = std::move(found.library);
  const SharedLibrary& lib = api.library;
  Bind(lib, api.cuInit, "cuInit");
  Bind(lib, api.cuDriverGetVersion, "cuDriverGetVersion");
  Bind(lib, api.cuDeviceGetCount, "cuDeviceGetCount");
  Bind(lib, api.cuDeviceGet, "cuDeviceGet");
  Bind(lib, api.cuDeviceGetName, "cuDeviceGetName");
  Bind(lib, api.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  Bind(lib, api.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  Bind(lib, api.cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer");
  Bind(lib, api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  Bind(lib, api.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  Bind(lib, api.cuCtxSetCurrent, "cuCtxSetCurrent");
  Bind(lib, api.cuCtxSynchronize, "cuCtxSynchronize");
  Bind(lib, api.cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess");
  Bind(lib, api.cuMemGetInfo, "cuMemGetInfo_v2");
  Bind(lib, api.cuMemAlloc, "cuMemAlloc_v2");
  Bind(lib, api.cuMemFree, "cuMemFree_v2");
  Bind(lib, api.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  Bind(lib, api.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  Bind(lib, api.cuMemcpyPeer, "cuMemcpyPeer");
  Bind(lib, api.cuMemsetD8, "cuMemsetD8_v2");
  Bind(lib, api.cuModuleLoadData, "cuModuleLoadData");
  Bind(lib, api.cuModuleUnload, "cuModuleUnload");
  Bind(lib, api.cuModuleGetFunction, "cuModuleGetFunction");
  Bind(lib, api.cuLaunchKernel, "cuLaunchKernel");
  Bind(lib, api.cuGetErrorName, "cuGetErrorName");
  Bind(lib, api.cuGetErrorString, "cuGetErrorString");
  if (!api.cuInit || !api.cuDriverGetVersion || !api.cuDeviceGetCount) {
    out.problem = {GpuProblem::kDeviceUnusable,
                   api.library.path() + " lacks cuInit, cuDriverGetVersion or cuDeviceGetCount"};
    return out;
  }
  CUresult r = api.cuDriverGetVersion(&driver->driver_version);
  if (r != kCudaSuccess) {
    out.problem = {GpuProblem::kDeviceUnusable, "cuDriverGetVersion: " + api.ErrorText(r)};
    return out;
  }
  if (required_version > 0 && driver->driver_version < required_version) {
    out.problem = {GpuProblem::kDriverTooOld,
                   "the driver supports CUDA " + CudaVersionText(driver->driver_version) +
                       ", CUDA " + CudaVersionText(required_version) + " is needed"};
    return out;
  }
  r = api.cuInit(0);
  if (r != kCudaSuccess) {
    std::string node = UnopenableDeviceNode(config.device_node_dir);
    if (r == kCudaErrorNotPermitted || !node.empty()) {
      out.problem = {GpuProblem::kNoPermission,
                     (node.empty() ? std::string("cuInit") : "cannot open " + node) + ": " +
                         api.ErrorText(r)};
    } else if (r == kCudaErrorNoDevice) {
      out.problem = {GpuProblem::kNoDevice, "cuInit: " + api.ErrorText(r)};
    } else if (r == kCudaErrorInsufficientDriver || r == kCudaErrorSystemDriverMismatch) {
      out.problem = {GpuProblem::kDriverTooOld, "cuInit: " + api.ErrorText(r)};
    } else {
      out.problem = {GpuProblem::kDeviceUnusable, "cuInit: " + api.ErrorText(r)};
    }
    return out;
  }
  int count = 0;
  r = api.cuDeviceGetCount(&count);
  if (r != kCudaSuccess) {
    out.problem = {GpuProblem::kDeviceUnusable, "cuDeviceGetCount: " + api.ErrorText(r)};
    return out;
  }
  if (count == 0) {
    std::string node = UnopenableDeviceNode(config.device_node_dir);
    if (!node.empty())
      out.problem = {GpuProblem::kNoPermission, "cannot open " + node};
    else
      out.problem = {GpuProblem::kNoDevice, "the driver reports 0 devices"};
    return out;
  }
  for (int i = 0; i < count; ++i) {
    Device d;
    d.ordinal = i;
    if (api.cuDeviceGet && api.cuDeviceGet(&d.handle, i) != kCudaSuccess) continue;
    if (!api.cuDeviceGet) d.handle = i;
    char name[256] = {};
    if (api.cuDeviceGetName && api.cuDeviceGetName(name, sizeof name - 1, d.handle) == 0)
      d.name = name;
    if (api.cuDeviceGetAttribute) {
      api.cuDeviceGetAttribute(&d.cc_major, kAttrComputeCapabilityMajor, d.handle);
      api.cuDeviceGetAttribute(&d.cc_minor, kAttrComputeCapabilityMinor, d.handle);
      api.cuDeviceGetAttribute(&d.multiprocessors, kAttrMultiprocessorCount, d.handle);
      api.cuDeviceGetAttribute(&d.pci_bus, kAttrPciBusId, d.handle);
    }
    if (api.cuDeviceTotalMem) api.cuDeviceTotalMem(&d.total_memory, d.handle);
    driver->devices.push_back(std::move(d));
  }
  out.driver = std::move(driver);
  return out;
}

PrimaryContext::PrimaryContext(const DriverApi& api, CUdevice device) : api_(api), device_(device) {
  status_ = api_.cuDevicePrimaryCtxRetain(&ctx_, device_);
  if (status_ == kCudaSuccess) {
    status_ = api_.cuCtxSetCurrent(ctx_);
    if (status_ != kCudaSuccess) {
      api_.cuDevicePrimaryCtxRelease(device_);
      ctx_ = nullptr;
    }
  } else {
    ctx_ = nullptr;
  }
}

PrimaryContext::~PrimaryContext() {
  if (ctx_) {
    api_.cuCtxSetCurrent(nullptr);
    api_.cuDevicePrimaryCtxRelease(device_);
  }
}

Module::Module(const DriverApi& api, const void* image) : api_(api) {
  status_ = api_.cuModuleLoadData(&module_, image);
  if (status_ != kCudaSuccess) module_ = nullptr;
}

Module::~Module() {
  if (module_) api_.cuModuleUnload(module_);
}

DeviceBuffer::DeviceBuffer(const DriverApi& api, size_t bytes) : api_(api), bytes_(bytes) {
  status_ = api_.cuMemAlloc(&ptr_, bytes);
  if (status_ != kCudaSuccess) ptr_ = 0;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) api_.cuMemFree(ptr_);
}

// --- NVML ---

std::string NvmlApi::ErrorText(NvmlReturn r) const {
  const char* s = nvmlErrorString ? nvmlErrorString(r) : nullptr;
  return "NVML error " + std::to_string(r) + (s ? std::string(": ") + s : std::string());
}

Nvml::~Nvml() {
  if (api.nvmlShutdown) api.nvmlShutdown();
}

NvmlOpen OpenNvml(const VerifyConfig& config) {
  NvmlOpen out;
  Found found = OpenSearched("libnvidia-ml.so.1", config.driver_search_paths, DriverFallbacks());
  if (!found.library) {
    out.problem = found.problem;
    return out;
  }
  auto nvml = std::make_unique<Nvml>();
  NvmlApi& api = nvml->api;
  api.library = std::move(found.library);
  const SharedLibrary& lib = api.library;
  Bind(lib, api.nvmlInit, "nvmlInit_v2");
  Bind(lib, api.nvmlErrorString, "nvmlErrorString");
  Bind(lib, api.nvmlSystemGetDriverVersion, "nvmlSystemGetDriverVersion");
  Bind(lib, api.nvmlSystemGetCudaDriverVersion, "nvmlSystemGetCudaDriverVersion");
  Bind(lib, api.nvmlDeviceGetCount, "nvmlDeviceGetCount_v2");
  Bind(lib, api.nvmlDeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2");
  Bind(lib, api.nvmlDeviceGetName, "nvmlDeviceGetName");
  Bind(lib, api.nvmlDeviceGetUUID, "nvmlDeviceGetUUID");
  Bind(lib, api.nvmlDeviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo");
  Bind(lib, api.nvmlDeviceGetPersistenceMode, "nvmlDeviceGetPersistenceMode");
  Bind(lib, api.nvmlDeviceGetComputeMode, "nvmlDeviceGetComputeMode");
  Bind(lib, api.nvmlDeviceGetCudaComputeCapability, "nvmlDeviceGetCudaComputeCapability");
  Bind(lib, api.nvmlDeviceGetComputeRunningProcesses, "nvmlDeviceGetComputeRunningProcesses_v3");
  Bind(lib, api.nvmlDeviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors");
  Bind(lib, api.nvmlDeviceGetRetiredPages, "nvmlDeviceGetRetiredPages");
  Bind(lib, api.nvmlDeviceGetRetiredPagesPendingStatus, "nvmlDeviceGetRetiredPagesPendingStatus");
  Bind(lib, api.nvmlDeviceGetRemappedRows, "nvmlDeviceGetRemappedRows");
  if (!api.nvmlInit || !api.nvmlDeviceGetCount || !api.nvmlDeviceGetHandleByIndex) {
    out.problem = {GpuProblem::kDeviceUnusable, api.library.path() + " lacks nvmlInit_v2"};
    return out;
  }
  NvmlReturn r = api.nvmlInit();
  if (r != kNvmlSuccess) {
    GpuProblem p = GpuProblem::kDeviceUnusable;
    if (r == kNvmlErrorDriverNotLoaded || r == kNvmlErrorLibraryNotFound) p = GpuProblem::kNoDriver;
    if (r == kNvmlErrorNoPermission) p = GpuProblem::kNoPermission;
    if (r == kNvmlErrorRmVersionMismatch) p = GpuProblem::kDriverTooOld;
    out.problem = {p, "nvmlInit: " + api.ErrorText(r)};
    return out;
  }
  Bind(lib, api.nvmlShutdown, "nvmlShutdown");  // bound only once initialised
  out.nvml = std::move(nvml);
  return out;
}

// --- NVRTC ---

Result<std::unique_ptr<NvrtcApi>> OpenNvrtc(const std::string& path) {
  auto lib = SharedLibrary::Open(path);
  if (!lib.ok()) return lib.status();
  auto api = std::make_unique<NvrtcApi>();
  api->library = std::move(lib.value());
  const SharedLibrary& l = api->library;
  Bind(l, api->nvrtcVersion, "nvrtcVersion");
  Bind(l, api->nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs");
  Bind(l, api->nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs");
  Bind(l, api->nvrtcGetErrorString, "nvrtcGetErrorString");
  Bind(l, api->nvrtcCreateProgram, "nvrtcCreateProgram");
  Bind(l, api->nvrtcDestroyProgram, "nvrtcDestroyProgram");
  Bind(l, api->nvrtcCompileProgram, "nvrtcCompileProgram");
  Bind(l, api->nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
  Bind(l, api->nvrtcGetProgramLog, "nvrtcGetProgramLog");
  Bind(l, api->nvrtcGetPTXSize, "nvrtcGetPTXSize");
  Bind(l, api->nvrtcGetPTX, "nvrtcGetPTX");
  Bind(l, api->nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
  Bind(l, api->nvrtcGetCUBIN, "nvrtcGetCUBIN");
  if (!api->nvrtcVersion || !api->nvrtcCreateProgram || !api->nvrtcCompileProgram)
    return Status::Unavailable(path + " lacks nvrtcVersion or nvrtcCompileProgram");
  return api;
}

Compiled CompileWithNvrtc(const NvrtcApi& nvrtc, const std::string& source, int arch, bool ptx) {
  Compiled out;
  NvrtcProgram prog = nullptr;
  int r = nvrtc.nvrtcCreateProgram(&prog, source.c_str(), "triage_kernels.cu", 0, nullptr, nullptr);
  if (r != 0) {
    out.log = "nvrtcCreateProgram failed: " + std::to_string(r);
    return out;
  }
  std::string target =
      std::string("--gpu-architecture=") + (ptx ? "compute_" : "sm_") + std::to_string(arch);
  const char* options[] = {target.c_str(), "--std=c++17"};
  r = nvrtc.nvrtcCompileProgram(prog, 2, options);
  size_t log_size = 0;
  if (nvrtc.nvrtcGetProgramLogSize && nvrtc.nvrtcGetProgramLogSize(prog, &log_size) == 0 &&
      log_size > 1 && nvrtc.nvrtcGetProgramLog) {
    std::string log(log_size, '\0');
    nvrtc.nvrtcGetProgramLog(prog, log.data());
    log.resize(std::strlen(log.c_str()));
    out.log = log;
  }
  if (r != 0) {
    const char* s = nvrtc.nvrtcGetErrorString ? nvrtc.nvrtcGetErrorString(r) : nullptr;
    out.log = std::string("nvrtcCompileProgram (") + target + "): " + (s ? s : "error") +
              (out.log.empty() ? "" : ": " + out.log);
    nvrtc.nvrtcDestroyProgram(&prog);
    return out;
  }
  size_t size = 0;
  if (ptx) {
    if (nvrtc.nvrtcGetPTXSize && nvrtc.nvrtcGetPTXSize(prog, &size) == 0 && nvrtc.nvrtcGetPTX) {
      out.image.assign(size, '\0');
      out.ok = nvrtc.nvrtcGetPTX(prog, out.image.data()) == 0;
    }
  } else if (nvrtc.nvrtcGetCUBINSize && nvrtc.nvrtcGetCUBINSize(prog, &size) == 0 &&
             nvrtc.nvrtcGetCUBIN) {
    out.image.assign(size, '\0');
    out.ok = nvrtc.nvrtcGetCUBIN(prog, out.image.data()) == 0;
  }
  if (!out.ok && out.log.empty()) out.log = "NVRTC returned no image";
  nvrtc.nvrtcDestroyProgram(&prog);
  return out;
}

}  // namespace triage::verifiers::detail

// GPU access with no build- or run-time requirement: the CUDA driver (libcuda.so.1), NVML
// (libnvidia-ml.so.1) and NVRTC (libnvrtc.so.*) are opened with dlopen from configurable
// folders, and the few entry points triage uses are declared here, so no CUDA header is needed.
//
// Opening the driver tells apart the reasons a GPU check cannot run (GpuProblem); each verifier
// turns them into `inconclusive: <reason>`. Everything here is for the verifier child process:
// not thread-safe, and handles must not outlive the library they came from (the owners below
// keep the library alive for as long as they hold it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "triage/status.h"
#include "triage/verifiers/runner.h"

namespace triage::verifiers::detail {

// Owns one dlopen handle. Loading runs a library's constructors, so only what triage names
// itself is opened here: the driver, NVML and NVRTC by their sonames from configured or system
// folders, and the NVRTC of a toolkit a log names only once MayLoad (detail/process.h) checked
// it, through that decision's descriptor (ProgramFile::ProcPath()). A library a log names is
// never loaded to find it: native.lib resolves it as the loader would (detail/binary.h).
class SharedLibrary {
 public:
  SharedLibrary() = default;
  SharedLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  SharedLibrary(SharedLibrary&& o) noexcept
      : handle_(std::exchange(o.handle_, nullptr)), path_(std::move(o.path_)) {}
  SharedLibrary& operator=(SharedLibrary&& o) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary();

  // dlopen(name_or_path, RTLD_NOW | RTLD_LOCAL). Fails with NotFound (no such file), or
  // Unavailable with dlerror()'s text.
  static Result<SharedLibrary> Open(const std::string& name_or_path);

  // The symbol's address, or nullptr.
  void* Symbol(const char* name) const;
  template <typename F>
  F Get(const char* name) const {
    return reinterpret_cast<F>(Symbol(name));
  }
  explicit operator bool() const { return handle_ != nullptr; }
  // The file the loader actually opened (from its link map), or the name asked for.
  const std::string& path() const { return path_; }

 private:
  void* handle_ = nullptr;
  std::string path_;
};

// Why a GPU check could not run. The text of each is the reason's exact prefix.
enum class GpuProblem {
  kNone,
  kNoDriver,             // "no driver"
  kDriverTooOld,         // "driver older than runtime"
  kDeviceUnusable,       // "device unusable"   (error 999 and kin)
  kNoDevice,             // "no device"
  kNoPermission,         // "permission"
  kBuiltWithoutKernels,  // "built without kernels"
};
const char* GpuProblemText(GpuProblem p);

struct GpuUnavailable {
  GpuProblem problem = GpuProblem::kNone;
  std::string detail;
  // "no driver: libcuda.so.1 not found in /x, /y"
  std::string Reason() const;
};

// --- Driver API --------------------------------------------------------------------------------
// The types and values below are the driver API's own (cuda.h); only what triage uses.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;

inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorOutOfMemory = 2;
inline constexpr CUresult kCudaErrorNotInitialized = 3;
inline constexpr CUresult kCudaErrorInsufficientDriver = 35;
inline constexpr CUresult kCudaErrorDevicesUnavailable = 46;
inline constexpr CUresult kCudaErrorNoDevice = 100;
inline constexpr CUresult kCudaErrorInvalidDevice = 101;
inline constexpr CUresult kCudaErrorNoBinaryForGpu = 209;
inline constexpr CUresult kCudaErrorUnsupportedPtxVersion = 222;
inline constexpr CUresult kCudaErrorNotPermitted = 800;
inline constexpr CUresult kCudaErrorSystemNotReady = 802;
inline constexpr CUresult kCudaErrorSystemDriverMismatch = 803;
inline constexpr CUresult kCudaErrorCompatNotSupportedOnDevice = 804;
inline constexpr CUresult kCudaErrorUnknown = 999;

inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;
inline constexpr int kAttrMultiprocessorCount = 16;
inline constexpr int kAttrComputeMode = 20;
inline constexpr int kAttrPciBusId = 33;

struct DriverApi {
  SharedLibrary library;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*cuDeviceCanAccessPeer)(int*, CUdevice, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuCtxEnablePeerAccess)(CUcontext, unsigned) = nullptr;
  CUresult (*cuMemGetInfo)(size_t*, size_t*) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemcpyPeer)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;

  // "CUDA_ERROR_UNKNOWN (999): unknown error", from the driver's own names where it has them.
  std::string ErrorText(CUresult r) const;
  // Entry points a check needs that this libcuda lacks, comma-separated ("" when none).
  std::string MissingForLaunch() const;
};

struct Device {
  int ordinal = 0;
  CUdevice handle = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int arch() const { return cc_major * 10 + cc_minor; }  // 90 for 9.0
  size_t total_memory = 0;
  int multiprocessors = 0;
  int pci_bus = -1;
};

struct Driver {
  DriverApi api;
  int driver_version = 0;  // 13000 for CUDA 13.0
  std::vector<Device> devices;
};

// Opens libcuda.so.1 (from config.driver_search_paths when set, else the loader's default
// search and then /usr/lib/x86_64-linux-gnu, /usr/lib64, /usr/local/nvidia/lib64), checks that
// it supports `required_version` (0: any), initialises it and lists the devices. On failure the
// GpuUnavailable says which reason applies; a device node that exists but cannot be opened
// (config.device_node_dir) makes it "permission".
struct DriverOpen {
  std::unique_ptr<Driver> driver;  // set on success
  GpuUnavailable problem;
};
DriverOpen OpenDriver(const VerifyConfig& config, int required_version = 0);

// "13.0" for 13000.
std::string CudaVersionText(int version);
// "12.9" -> 12090; "13" -> 13000; 0 when unparsable.
int ParseCudaVersion(const std::string& text);
// "sm_120", "120", "12.0", "compute_120", "sm120", "12.x" (-> 120) -> 120; 0 when unparsable.
int ParseArch(const std::string& text);

// A retained primary context, current on this thread while held.
class PrimaryContext {
 public:
  PrimaryContext(const DriverApi& api, CUdevice device);
  ~PrimaryContext();
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  CUresult status() const { return status_; }
  CUcontext get() const { return ctx_; }
  CUresult MakeCurrent() const { return api_.cuCtxSetCurrent(ctx_); }

 private:
  const DriverApi& api_;
  CUdevice device_;
  CUcontext ctx_ = nullptr;
  CUresult status_ = kCudaSuccess;
};

// A loaded module (cuModuleLoadData of a cubin, fatbin or PTX image).
class Module {
 public:
  Module(const DriverApi& api, const void* image);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  CUresult status() const { return status_; }
  CUmodule get() const { return module_; }

 private:
  const DriverApi& api_;
  CUmodule module_ = nullptr;
  CUresult status_ = kCudaSuccess;
};

// Device memory.
class DeviceBuffer {
 public:
  DeviceBuffer(const DriverApi& api, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUresult status() const { return status_; }
  CUdeviceptr get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  const DriverApi& api_;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
  CUresult status_ = kCudaSuccess;
};

// --- NVML --------------------------------------------------------------------------------------
using NvmlReturn = int;
struct NvmlDevice_st;
using NvmlDevice = NvmlDevice_st*;
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlProcessInfo {  // nvmlProcessInfo_t as of the _v3 entry point
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};
inline constexpr NvmlReturn kNvmlSuccess = 0;
inline constexpr NvmlReturn kNvmlErrorNotSupported = 3;
inline constexpr NvmlReturn kNvmlErrorNoPermission = 4;
inline constexpr NvmlReturn kNvmlErrorDriverNotLoaded = 9;
inline constexpr NvmlReturn kNvmlErrorInsufficientSize = 7;
inline constexpr NvmlReturn kNvmlErrorLibraryNotFound = 12;
inline constexpr NvmlReturn kNvmlErrorGpuIsLost = 15;
inline constexpr NvmlReturn kNvmlErrorRmVersionMismatch = 18;

struct NvmlApi {
  SharedLibrary library;
  NvmlReturn (*nvmlInit)() = nullptr;
  NvmlReturn (*nvmlShutdown)() = nullptr;
  const char* (*nvmlErrorString)(NvmlReturn) = nullptr;
  NvmlReturn (*nvmlSystemGetDriverVersion)(char*, unsigned) = nullptr;
  NvmlReturn (*nvmlSystemGetCudaDriverVersion)(int*) = nullptr;
  NvmlReturn (*nvmlDeviceGetCount)(unsigned*) = nullptr;
  NvmlReturn (*nvmlDeviceGetHandleByIndex)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*nvmlDeviceGetName)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*nvmlDeviceGetUUID)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*nvmlDeviceGetMemoryInfo)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*nvmlDeviceGetPersistenceMode)(NvmlDevice, int*) = nullptr;
  NvmlReturn (*nvmlDeviceGetComputeMode)(NvmlDevice, int*) = nullptr;
  NvmlReturn (*nvmlDeviceGetCudaComputeCapability)(NvmlDevice, int*, int*) = nullptr;
  NvmlReturn (*nvmlDeviceGetComputeRunningProcesses)(NvmlDevice, unsigned*,
                                                     NvmlProcessInfo*) = nullptr;
  NvmlReturn (*nvmlDeviceGetTotalEccErrors)(NvmlDevice, int, int, unsigned long long*) = nullptr;
  NvmlReturn (*nvmlDeviceGetRetiredPages)(NvmlDevice, int, unsigned*, unsigned long long*) =
      nullptr;
  NvmlReturn (*nvmlDeviceGetRetiredPagesPendingStatus)(NvmlDevice, int*) = nullptr;
  NvmlReturn (*nvmlDeviceGetRemappedRows)(NvmlDevice, unsigned*, unsigned*, unsigned*,
                                          unsigned*) = nullptr;
  std::string ErrorText(NvmlReturn r) const;
};

// NVML opened and initialised (shut down when destroyed), or why not.
class Nvml {
 public:
  ~Nvml();
  NvmlApi api;
};
struct NvmlOpen {
  std::unique_ptr<Nvml> nvml;
  GpuUnavailable problem;
};
NvmlOpen OpenNvml(const VerifyConfig& config);

// --- NVRTC -------------------------------------------------------------------------------------
struct NvrtcProgram_st;
using NvrtcProgram = NvrtcProgram_st*;
struct NvrtcApi {
  SharedLibrary library;
  int (*nvrtcVersion)(int*, int*) = nullptr;
  int (*nvrtcGetNumSupportedArchs)(int*) = nullptr;
  int (*nvrtcGetSupportedArchs)(int*) = nullptr;
  const char* (*nvrtcGetErrorString)(int) = nullptr;
  int (*nvrtcCreateProgram)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                            const char* const*) = nullptr;
  int (*nvrtcDestroyProgram)(NvrtcProgram*) = nullptr;
  int (*nvrtcCompileProgram)(NvrtcProgram, int, const char* const*) = nullptr;
  int (*nvrtcGetProgramLogSize)(NvrtcProgram, size_t*) = nullptr;
  int (*nvrtcGetProgramLog)(NvrtcProgram, char*) = nullptr;
  int (*nvrtcGetPTXSize)(NvrtcProgram, size_t*) = nullptr;
  int (*nvrtcGetPTX)(NvrtcProgram, char*) = nullptr;
  int (*nvrtcGetCUBINSize)(NvrtcProgram, size_t*) = nullptr;
  int (*nvrtcGetCUBIN)(NvrtcProgram, char*) = nullptr;
};

// Opens one libnvrtc.so.* by path; NotFound/Unavailable when it cannot be used.
Result<std::unique_ptr<NvrtcApi>> OpenNvrtc(const std::string& path);

// What NVRTC produced: a CUBIN (sm_XY) or PTX (compute_XY), or the log of why not.
struct Compiled {
  bool ok = false;
  std::string image;  // cubin bytes or PTX text (NUL-terminated inside the string for PTX)
  std::string log;
};
Compiled CompileWithNvrtc(const NvrtcApi& nvrtc, const std::string& source, int arch, bool ptx);

}  // namespace triage::verifiers::detail

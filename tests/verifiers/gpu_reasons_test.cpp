// Every GPU verifier answers `inconclusive` with the exact reason on a host without a usable GPU;
// each reason is produced by pointing the driver search path at a folder of fake libraries.
#include <gtest/gtest.h>

#include "helpers.h"
#include "triage/kernels/kernels.h"
#include "triage/verifiers/detail/gpu.h"
#include "triage/verifiers/detail/toolkits.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {
namespace {

using testing::FixtureDir;
using testing::StartsWith;

VerifyConfig WithDriverDir(const std::string& dir) {
  VerifyConfig c;
  c.driver_search_paths = {dir};
  return c;
}

const std::vector<std::string> kGpuVerifiers = {"gpu.devices", "cuda.compile_launch", "cuda.memory",
                                                "gpu.peers"};

// cuda.compile_launch says "built without kernels" before it looks for a driver when it has
// nothing to launch: no pre-built kernels (a build without nvcc) and no NVRTC on this host.
bool HaveKernelsHere() { return kernels::HavePrebuilt() || !detail::FindToolkits(VerifyConfig{}).empty(); }

std::string Expected(const std::string& verifier, const std::string& reason) {
  if (verifier == "cuda.compile_launch" && !HaveKernelsHere())
    return "built without kernels: no pre-built kernels in this triage and no NVRTC found to compile them";
  return reason;
}

Finding Ask(const std::string& verifier, const VerifyConfig& config, const Hypothesis& h = {}) {
  static const Registry registry = Registry::Builtin();
  return registry.Find(verifier)->Check(config, h);
}

TEST(GpuReasons, EmptyFolderIsNoDriver) {
  testing::TempDir empty;
  for (const auto& v : kGpuVerifiers) {
    Finding f = Ask(v, WithDriverDir(empty.path()));
    EXPECT_EQ(f.verdict, core::Verdict::kInconclusive) << v;
    EXPECT_TRUE(StartsWith(f.reason, Expected(v, "no driver: libcuda.so.1 not found"))) << v << ": " << f.reason;
    EXPECT_EQ(f.status, HostStatus::kUnavailable) << v;
  }
}

TEST(GpuReasons, Error999IsDeviceUnusable) {
  for (const auto& v : kGpuVerifiers) {
    Finding f = Ask(v, WithDriverDir(FixtureDir("fake_cuda_err999")));
    EXPECT_EQ(f.verdict, core::Verdict::kInconclusive) << v;
    EXPECT_EQ(f.reason, Expected(v, "device unusable: cuInit: CUDA_ERROR_UNKNOWN (999)")) << v;
  }
}

TEST(GpuReasons, OldDriverIsDriverOlderThanRuntime) {
  Finding f = Ask("gpu.devices", WithDriverDir(FixtureDir("fake_cuda_old")));
  EXPECT_EQ(f.reason, "driver older than runtime: cuInit: CUDA_ERROR_INSUFFICIENT_DRIVER (35)");
  // compile_launch knows what it needs (its kernels' CUDA, or NVRTC's) and says so before cuInit.
  Finding c = Ask("cuda.compile_launch", WithDriverDir(FixtureDir("fake_cuda_old")));
  EXPECT_EQ(c.verdict, core::Verdict::kInconclusive);
  EXPECT_TRUE(StartsWith(c.reason, Expected("cuda.compile_launch",
                                            "driver older than runtime: the driver supports CUDA 11.8, CUDA 1")))
      << c.reason;
}

TEST(GpuReasons, ZeroDevicesIsNoDevice) {
  for (const auto& v : kGpuVerifiers) {
    Finding f = Ask(v, WithDriverDir(FixtureDir("fake_cuda_nodev")));
    EXPECT_EQ(f.verdict, core::Verdict::kInconclusive) << v;
    EXPECT_EQ(f.reason, Expected(v, "no device: the driver reports 0 devices")) << v;
  }
}

TEST(GpuReasons, NotPermittedIsPermission) {
  Finding f = Ask("gpu.devices", WithDriverDir(FixtureDir("fake_cuda_noperm")));
  EXPECT_EQ(f.reason, "permission: cuInit: CUDA_ERROR_NOT_PERMITTED (800)");
}

TEST(GpuReasons, UnopenableDeviceNodeIsPermission) {
  // A user outside the video group sees the driver report no device; the node tells why.
  testing::TempDir nodes;
  ::chmod(nodes.path().c_str(), 0755);
  nodes.Write("nvidiactl", "", 0600);
  VerifyConfig config = WithDriverDir(FixtureDir("fake_cuda_nodev"));
  config.device_node_dir = nodes.path();
  Registry registry = Registry::Builtin();
  testing::AsNobody r = testing::CheckAsNobody(*registry.Find("gpu.devices"), config, {});
  ASSERT_TRUE(r.ran) << "could not drop to the user nobody";
  EXPECT_EQ(r.verdict, core::Verdict::kInconclusive);
  EXPECT_EQ(r.reason, "permission: cannot open " + nodes.path() + "/nvidiactl");
}

TEST(GpuReasons, WithoutKernelsOrNvrtcIsBuiltWithoutKernels) {
  testing::TempDir empty;
  VerifyConfig config = WithDriverDir(empty.path());
  config.use_prebuilt_kernels = false;        // as a build without nvcc
  config.toolkit_search_paths = {empty.path()};  // and no toolkit to compile live
  for (const char* cause : {"", "lib.arch_unsupported"}) {
    Finding f = Ask("cuda.compile_launch", config, Hypothesis{cause, {}});
    EXPECT_EQ(f.verdict, core::Verdict::kInconclusive);
    EXPECT_TRUE(StartsWith(f.reason, "built without kernels")) << f.reason;
  }
  Finding fat = Ask("cuda.fatbin", config);
  EXPECT_EQ(fat.reason, "built without kernels");
}

TEST(GpuReasons, ThisHostHasNoDriver) {
  // The machine the suite runs on in CI has no GPU driver: the default search finds none.
  VerifyConfig config;
  detail::DriverOpen open = detail::OpenDriver(config);
  if (open.driver) GTEST_SKIP() << "this host has a CUDA driver; the no-driver case is covered above";
  for (const auto& v : kGpuVerifiers) {
    Finding f = Ask(v, config);
    EXPECT_EQ(f.verdict, core::Verdict::kInconclusive) << v;
    EXPECT_TRUE(StartsWith(f.reason, Expected(v, "no driver"))) << v << ": " << f.reason;
  }
}

TEST(GpuReasons, HealthAndMemoryWithoutNvml) {
  testing::TempDir log;
  VerifyConfig config = WithDriverDir(FixtureDir("fake_cuda_err999"));
  config.kernel_log_paths = {log.Write("kern.log", "nothing of note\n")};
  Finding health = Ask("gpu.health", config);
  EXPECT_EQ(health.verdict, core::Verdict::kInconclusive);
  EXPECT_TRUE(StartsWith(health.reason, "no driver: libnvidia-ml.so.1 not found")) << health.reason;
  // Without NVML, memory falls back to the driver API, which reports error 999.
  Finding memory = Ask("cuda.memory", config);
  EXPECT_EQ(memory.reason, "device unusable: cuInit: CUDA_ERROR_UNKNOWN (999)");
}

TEST(GpuReasons, HealthFindsXidWithoutNvml) {
  testing::TempDir log;
  VerifyConfig config = WithDriverDir(log.path());
  config.kernel_log_paths = {log.Write("kern.log",
                                       "NVRM: Xid (PCI:0000:17:00): 79, pid=1234, GPU has fallen off the bus.\n")};
  Finding f = Ask("gpu.health", config, Hypothesis{"gpu.hardware_fault", {}});
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed);
  EXPECT_NE(f.reason.find("1 Xid events"), std::string::npos) << f.reason;
}

// Xid 13 and 31 are a program's own fault (an exception, an MMU fault), not the hardware's; and a
// hardware fault found says nothing of whether the service's kernel faulted.
TEST(GpuReasons, HealthTellsProgramXidsFromHardwareOnes) {
  testing::TempDir log;
  VerifyConfig config = WithDriverDir(log.path());
  config.kernel_log_paths = {log.Write("kern.log",
                                       "NVRM: Xid (PCI:0000:17:00): 31, pid=1234, name=python3, Ch 00000008, "
                                       "intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f_00000000.\n"
                                       "NVRM: Xid (PCI:0000:17:00): 13, pid=1234, Graphics Exception\n")};
  Finding program = Ask("gpu.health", config, Hypothesis{"gpu.hardware_fault"});
  EXPECT_NE(program.verdict, core::Verdict::kConfirmed) << program.reason;
  EXPECT_NE(program.verdict, core::Verdict::kRefuted) << program.reason;
  config.kernel_log_paths = {log.Write("hw.log", "NVRM: Xid (PCI:0000:17:00): 79, pid=1234, GPU has fallen off the bus.\n")};
  Finding kernel = Ask("gpu.health", config, Hypothesis{"cuda.illegal_memory_access"});
  EXPECT_EQ(kernel.verdict, core::Verdict::kInconclusive) << kernel.reason;
  EXPECT_NE(kernel.reason.find("point at gpu.hardware_fault"), std::string::npos) << kernel.reason;
}

TEST(GpuReasons, UnreadableKernelLogIsPermission) {
  testing::TempDir empty;
  VerifyConfig config = WithDriverDir(empty.path());
  config.kernel_log_paths = {"/dev/kmsg"};
  Registry registry = Registry::Builtin();
  testing::AsNobody r = testing::CheckAsNobody(*registry.Find("gpu.health"), config, {});
  ASSERT_TRUE(r.ran) << "could not drop to the user nobody";
  EXPECT_EQ(r.verdict, core::Verdict::kInconclusive);
  EXPECT_TRUE(StartsWith(r.reason, "permission: cannot read the kernel log (/dev/kmsg: ")) << r.reason;
}

TEST(GpuReasons, ReasonsRoundTripThroughTheIsolatedRunner) {
  VerifyConfig config = WithDriverDir(FixtureDir("fake_cuda_err999"));
  Registry registry = Registry::Builtin();
  IsolatedResult r = RunIsolated(*registry.Find("gpu.devices"), config, {});
  EXPECT_EQ(r.verification.verdict, core::Verdict::kInconclusive);
  EXPECT_EQ(r.verification.reason, "device unusable: cuInit: CUDA_ERROR_UNKNOWN (999)");
  EXPECT_EQ(r.status, HostStatus::kUnavailable);
}

}  // namespace
}  // namespace triage::verifiers

// The GPU suite (ctest label `gpu`): run on a GPU host on purpose. Without a device each test
// calls GTEST_SKIP() with the reason; on a GPU every kernel must match its CPU reference on fresh
// random inputs, NVRTC must compile and launch for the device's exact architecture, the toolkit
// verifier must judge real architectures, the fatbin reader must agree with cuobjdump, and with
// two GPUs every pair must copy.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <random>
#include <regex>
#include <set>

#include "triage/kernels/kernels.h"
#include "triage/verifiers/detail/binary.h"
#include "triage/verifiers/detail/gpu.h"
#include "triage/verifiers/detail/kernel_checks.h"
#include "triage/verifiers/detail/process.h"
#include "triage/verifiers/detail/toolkits.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {
namespace {

using namespace detail;

uint32_t FreshSeed() { return std::random_device{}(); }

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    open_ = OpenDriver(config_);
    if (!open_.driver) GTEST_SKIP() << "no usable GPU: " << open_.problem.Reason();
  }
  const Device& device() const { return open_.driver->devices[0]; }
  VerifyConfig config_;
  DriverOpen open_;
};

void ExpectAllMatch(const KernelRun& run, const std::string& how) {
  ASSERT_TRUE(run.loaded) << how << ": " << run.load_error;
  ASSERT_EQ(run.checks.size(), 5u) << how;
  for (const auto& c : run.checks) {
    EXPECT_TRUE(c.ok) << how << " " << c.kernel << ": " << c.detail;
    std::printf("[%s] %s: %s\n", how.c_str(), c.kernel.c_str(), c.detail.c_str());
  }
}

TEST_F(Gpu, PrebuiltKernelsMatchTheirCpuReferences) {
  ASSERT_TRUE(kernels::HavePrebuilt()) << "this build has no pre-built kernels (built without nvcc)";
  uint32_t seed = FreshSeed();
  std::printf("seed %u\n", seed);
  ExpectAllMatch(RunKernelChecks(*open_.driver, device(), kernels::PrebuiltImage().data(), seed), "prebuilt");
}

TEST_F(Gpu, NvrtcKernelsForTheExactArchitectureMatchTheirCpuReferences) {
  std::vector<Toolkit> toolkits = FindToolkits(config_);
  const Toolkit* t = nullptr;
  for (const auto& k : toolkits)
    if (std::find(k.archs.begin(), k.archs.end(), device().arch()) != k.archs.end()) t = &k;
  ASSERT_NE(t, nullptr) << "no NVRTC on this host targets sm_" << device().arch();
  auto nvrtc = OpenNvrtc(t->nvrtc_path);
  ASSERT_TRUE(nvrtc.ok()) << nvrtc.status().message();
  for (bool ptx : {false, true}) {
    Compiled c = CompileWithNvrtc(**nvrtc, std::string(kernels::Source()), device().arch(), ptx);
    ASSERT_TRUE(c.ok) << c.log;
    ExpectAllMatch(RunKernelChecks(*open_.driver, device(), c.image.data(), FreshSeed()),
                   ptx ? "nvrtc ptx -> driver jit" : "nvrtc cubin");
  }
}

TEST_F(Gpu, CompileLaunchPassesForTheDeviceArchitecture) {
  Finding f = Registry::Builtin().Find("cuda.compile_launch")->Check(config_, Hypothesis{});
  EXPECT_EQ(f.status, HostStatus::kPass) << f.reason;
  EXPECT_NE(f.reason.find("sm_" + std::to_string(device().arch())), std::string::npos) << f.reason;
  EXPECT_NE(f.reason.find("nvrtc_cubin"), std::string::npos) << f.reason;
  Finding verdict = Registry::Builtin().Find("cuda.compile_launch")
                        ->Check(config_, Hypothesis{"lib.arch_unsupported", {}});
  EXPECT_EQ(verdict.verdict, core::Verdict::kConfirmed) << verdict.reason;
  std::printf("%s\n%s\n", f.reason.c_str(), verdict.reason.c_str());
}

TEST_F(Gpu, ToolkitVerifierJudgesSm70AndSm120) {
  static const Registry registry = Registry::Builtin();
  const Verifier* v = registry.Find("cuda.toolkits");
  VerifyConfig config = config_;
  config.toolkit_search_paths = {"/usr/local/cuda"};
  Finding sm70 = v->Check(config, Hypothesis{"cuda.toolkit_too_old_for_arch", {{"arch", "sm_70"}}});
  // The toolkit the log names (its CUDA_HOME) can refute; one it does not name cannot.
  LogSite pinned;
  pinned.toolkit_versions = {13000};  // "release 13.0" in the log
  Finding sm120 = v->Check(config, Hypothesis{"cuda.toolkit_too_old_for_arch",
                                              {{"arch", "sm_120"}, {"cuda_home", "/usr/local/cuda"}}, {}, pinned});
  Finding unnamed = v->Check(config, Hypothesis{"cuda.toolkit_too_old_for_arch", {{"arch", "sm_120"}}});
  EXPECT_EQ(unnamed.verdict, core::Verdict::kNotReproduced) << unnamed.reason;
  std::printf("sm_70: %s\nsm_120: %s\nfacts: %s\n", sm70.reason.c_str(), sm120.reason.c_str(), sm120.facts_json.c_str());
  EXPECT_EQ(sm70.verdict, core::Verdict::kConfirmed) << sm70.reason;
  EXPECT_NE(sm70.reason.find("NVRTC 13.0"), std::string::npos) << sm70.reason;
  EXPECT_EQ(sm120.verdict, core::Verdict::kRefuted) << sm120.reason;
  EXPECT_NE(sm120.facts_json.find("\"nvrtc_version\":\"13.0\""), std::string::npos);
  EXPECT_NE(sm120.facts_json.find("120"), std::string::npos);
}

TEST_F(Gpu, DevicesReportComputeCapability) {
  Finding f = Registry::Builtin().Find("gpu.devices")->Check(config_, Hypothesis{});
  EXPECT_EQ(f.status, HostStatus::kPass) << f.reason;
  EXPECT_NE(f.reason.find("compute capability " + std::to_string(device().cc_major) + "." +
                          std::to_string(device().cc_minor)),
            std::string::npos);
  std::printf("%s\n%s\n", f.reason.c_str(), f.facts_json.c_str());
}

// The library to compare with cuobjdump: PyTorch's libtorch_cuda.so from the interpreter on PATH.
std::string FindLibtorchCuda() {
  std::vector<std::string> pythons;
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (size_t start = 0; start <= p.size();) {
      size_t colon = std::min(p.find(':', start), p.size());
      if (colon > start && p[start] == '/') pythons.push_back(p.substr(start, colon - start) + "/python3");
      start = colon + 1;
    }
  }
  for (const char* fixed : {"/opt/torch/.venv/bin/python3", "/usr/bin/python3"}) pythons.push_back(fixed);
  for (const std::string& python : pythons) {
    if (::access(python.c_str(), X_OK) != 0) continue;
    ProgramOutput out = RunProgram({python, "-c", "import torch, os; print(os.path.dirname(torch.__file__))"}, 120);
    std::string dir = out.out.substr(0, out.out.find('\n'));
    if (out.exit_code == 0 && !dir.empty() && ::access((dir + "/lib/libtorch_cuda.so").c_str(), R_OK) == 0)
      return dir + "/lib/libtorch_cuda.so";
  }
  return {};
}

TEST_F(Gpu, FatbinReaderEqualsCuobjdumpForLibtorchCuda) {
  const std::string cuobjdump = "/usr/local/cuda/bin/cuobjdump";
  ASSERT_EQ(::access(cuobjdump.c_str(), X_OK), 0) << "cuobjdump not found";
  std::string lib = FindLibtorchCuda();
  if (lib.empty()) GTEST_SKIP() << "PyTorch with libtorch_cuda.so not found";
  ProgramOutput out = RunProgram({cuobjdump, "--list-elf", lib}, 300);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  std::multiset<int> want;
  std::regex elf_arch(R"(sm_(\d+)[a-z]?\.cubin)");
  for (auto it = std::sregex_iterator(out.out.begin(), out.out.end(), elf_arch); it != std::sregex_iterator(); ++it)
    want.insert(std::stoi((*it)[1]));
  auto entries = ReadElfFatbin(lib);
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  std::multiset<int> got;
  for (const auto& e : *entries)
    if (e.kind == FatbinEntry::Kind::kSass) got.insert(e.arch);
  std::set<int> want_set(want.begin(), want.end()), got_set(got.begin(), got.end());
  std::string list;
  for (int a : got_set) list += " sm_" + std::to_string(a) + " x" + std::to_string(got.count(a));
  std::printf("%s: %zu ELF entries (cuobjdump %zu):%s\n", lib.c_str(), got.size(), want.size(), list.c_str());
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got_set, want_set);
  EXPECT_EQ(got, want);
}

TEST_F(Gpu, PeersCopyBetweenEveryPair) {
  if (open_.driver->devices.size() < 2)
    GTEST_SKIP() << "needs 2 GPUs, this host has " << open_.driver->devices.size();
  Finding f = Registry::Builtin().Find("gpu.peers")->Check(config_, Hypothesis{});
  std::printf("%s\n%s\n", f.reason.c_str(), f.facts_json.c_str());
  EXPECT_EQ(f.status, HostStatus::kPass) << f.reason;
  // Peer copies working now do not refute a collective that failed then.
  Finding verdict = Registry::Builtin().Find("gpu.peers")->Check(config_, Hypothesis{"nccl.failure", {}});
  EXPECT_EQ(verdict.verdict, core::Verdict::kNotReproduced) << verdict.reason;
}

TEST_F(Gpu, MemoryAndHealthAnswer) {
  Finding mem = Registry::Builtin().Find("cuda.memory")->Check(config_, Hypothesis{"cuda.oom", {{"requested", "1 TiB"}}});
  EXPECT_EQ(mem.verdict, core::Verdict::kConfirmed) << mem.reason;
  Finding small = Registry::Builtin().Find("cuda.memory")->Check(config_, Hypothesis{"cuda.oom", {{"requested", "2.00 GiB"}}});
  EXPECT_EQ(small.verdict, core::Verdict::kNotReproduced) << small.reason;  // the holder may have exited
  Finding health = Registry::Builtin().Find("gpu.health")->Check(config_, Hypothesis{});
  std::printf("%s\n%s\n%s\n", mem.reason.c_str(), small.reason.c_str(), health.reason.c_str());
  EXPECT_NE(health.status, HostStatus::kFail) << health.reason;
}

}  // namespace
}  // namespace triage::verifiers

// cuda.toolkits against the NVRTC of a real toolkit on this host: versions and architecture
// lists are read from the library, and versions decide.
#include <gtest/gtest.h>
#include <unistd.h>

#include "helpers.h"
#include "triage/kernels/kernels.h"
#include "triage/verifiers/detail/gpu.h"
#include "triage/verifiers/detail/toolkits.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {
namespace {

// The toolkit folders to test with: the CUDA 13 toolkit the build found (nvcc), else
// /usr/local/cuda.
std::string ToolkitRoot() {
  for (const char* root : {"/usr/local/cuda-13.0", "/usr/local/cuda"})
    if (!detail::FindNvrtcIn(root).empty()) return root;
  return {};
}

Finding AskToolkits(const std::string& root, std::map<std::string, std::string> args, LogSite log = {},
                    const std::string& cause = "cuda.toolkit_too_old_for_arch") {
  VerifyConfig config;
  config.toolkit_search_paths = {root};
  testing::TempDir empty;
  config.driver_search_paths = {empty.path()};  // no device: the log's architecture decides
  return Registry::Builtin().Find("cuda.toolkits")->Check(config, Hypothesis{cause, std::move(args), {}, std::move(log)});
}

LogSite ToolkitOfTheLog(const std::string& root, int version) {
  LogSite log;
  if (!root.empty()) log.toolkit_roots = {root};
  if (version) log.toolkit_versions = {version};
  return log;
}

class Toolkits : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ToolkitRoot();
    if (root_.empty()) GTEST_SKIP() << "no CUDA toolkit with NVRTC on this host";
    toolkit_ = detail::ProbeToolkit(root_, detail::FindNvrtcIn(root_), "test");
    ASSERT_GT(toolkit_.version, 0) << toolkit_.error;
  }
  std::string root_;
  detail::Toolkit toolkit_;
};

TEST_F(Toolkits, VersionAndArchitecturesComeFromNvrtc) {
  EXPECT_GE(toolkit_.version, 11000);
  ASSERT_FALSE(toolkit_.archs.empty());
  EXPECT_TRUE(std::is_sorted(toolkit_.archs.begin(), toolkit_.archs.end()));
  std::vector<detail::Toolkit> found = detail::FindToolkits([&] {
    VerifyConfig c;
    c.toolkit_search_paths = {root_};
    return c;
  }());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].version, toolkit_.version);
}

TEST_F(Toolkits, ConfirmsAnArchitectureItsNvrtcDoesNotList) {
  if (toolkit_.version < 13000) GTEST_SKIP() << "needs CUDA 13 (which dropped sm_70)";
  Finding f = AskToolkits(root_, {{"arch", "sm_70"}});
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_NE(f.reason.find("NVRTC 13.0 (" + root_ + ") cannot target sm_70"), std::string::npos) << f.reason;
  EXPECT_NE(f.facts_json.find("\"nvrtc_version\":\"13.0\""), std::string::npos) << f.facts_json;
  EXPECT_NE(f.facts_json.find("\"archs\":[75,"), std::string::npos) << f.facts_json;
}

// Only the toolkit the service used can refute: the log names it (its CUDA_HOME), it is here, and
// it targets the architecture.
TEST_F(Toolkits, RefutesAnArchitectureTheLogsOwnToolkitTargets) {
  if (toolkit_.version < 12080) GTEST_SKIP() << "needs CUDA 12.8 or newer";
  Finding f = AskToolkits(root_, {{"arch", "sm_120"}, {"cuda_home", root_}}, ToolkitOfTheLog("", toolkit_.version));
  EXPECT_EQ(f.verdict, core::Verdict::kRefuted) << f.reason;
  EXPECT_NE(f.reason.find("the toolkit the log names: NVRTC"), std::string::npos) << f.reason;
  EXPECT_NE(f.facts_json.find("\"required\":\"12.8\""), std::string::npos) << f.facts_json;
  Finding by_line = AskToolkits(root_, {{"arch", "sm_120"}}, ToolkitOfTheLog(root_, toolkit_.version));
  EXPECT_EQ(by_line.verdict, core::Verdict::kRefuted) << by_line.reason;
}

// A folder the log names without its version ("/usr/local/cuda", a link) may hold another toolkit
// here than on the log's host: not_reproduced, never refuted.
TEST_F(Toolkits, AFolderWithoutItsVersionDoesNotPinTheToolkit) {
  if (toolkit_.version < 12080) GTEST_SKIP() << "needs CUDA 12.8 or newer";
  testing::TempDir dir;
  const std::string link = dir.path() + "/cuda";
  ASSERT_EQ(::symlink(root_.c_str(), link.c_str()), 0);
  Finding f = AskToolkits(root_, {{"arch", "sm_120"}, {"cuda_home", link}});
  EXPECT_EQ(f.verdict, core::Verdict::kNotReproduced) << f.reason;
  EXPECT_NE(f.reason.find("names the toolkit's folder but not its version"), std::string::npos) << f.reason;
  LogSite here;
  here.names_this_host = true;
  Finding named_host = AskToolkits(root_, {{"arch", "sm_120"}, {"cuda_home", link}}, here);
  EXPECT_EQ(named_host.verdict, core::Verdict::kRefuted) << named_host.reason;
}

// A toolkit of this host that the log does not name may not be the one the service compiled
// with: it targeting the architecture is not_reproduced, never refuted.
TEST_F(Toolkits, AToolkitTheLogDoesNotNameRefutesNothing) {
  if (toolkit_.version < 12080) GTEST_SKIP() << "needs CUDA 12.8 or newer";
  Finding f = AskToolkits(root_, {{"arch", "sm_120"}});
  EXPECT_EQ(f.verdict, core::Verdict::kNotReproduced) << f.reason;
  EXPECT_NE(f.reason.find("the log does not say which toolkit the service compiled with"), std::string::npos)
      << f.reason;
}

// The defining case's toolkit: CUDA_HOME=/usr/local/cuda-12.8 on a host that has another toolkit
// (NVRTC 13.0 targeting sm_120 does not refute that the log's host had 12.8).
TEST_F(Toolkits, TheLogsToolkitAbsentHereIsNotApplicable) {
  testing::TempDir dir;
  const std::string absent = dir.path() + "/cuda-12.8";
  Finding f = AskToolkits(root_, {{"sm", "12.x"}, {"required", "12.9"}}, ToolkitOfTheLog(absent, 12080));
  EXPECT_EQ(f.verdict, core::Verdict::kNotApplicable) << f.reason;
  EXPECT_NE(f.reason.find("the toolkit the log names (" + absent + ", CUDA 12.8) is not on this host"),
            std::string::npos)
      << f.reason;
  EXPECT_NE(f.reason.find("this host has CUDA " + detail::CudaVersionText(toolkit_.version)), std::string::npos)
      << f.reason;
  // Only its version in the log ("release 12.8"): no 12.8 toolkit here.
  if (toolkit_.version / 10 != 1208) {
    Finding v = AskToolkits(root_, {{"sm", "12.x"}, {"required", "12.9"}}, ToolkitOfTheLog("", 12080));
    EXPECT_EQ(v.verdict, core::Verdict::kNotApplicable) << v.reason;
    EXPECT_NE(v.reason.find("the log's toolkit is CUDA 12.8; this host has CUDA"), std::string::npos) << v.reason;
  }
  // The same folder ("/usr/local/cuda", a link), another version than the log printed: not the
  // toolkit the service used.
  const std::string link = dir.path() + "/cuda";
  ASSERT_EQ(::symlink(root_.c_str(), link.c_str()), 0);
  Finding moved = AskToolkits(root_, {{"sm", "12.x"}, {"required", "12.9"}}, ToolkitOfTheLog(link, 11080));
  EXPECT_EQ(moved.verdict, core::Verdict::kNotApplicable) << moved.reason;
  EXPECT_NE(moved.reason.find("was CUDA 11.8; here it is CUDA"), std::string::npos) << moved.reason;
}

// A compile error is not "no toolkit": a toolkit being here says nothing of it. "No nvcc" with
// nvcc here now is not_reproduced: the log's line is a fact of that time.
TEST_F(Toolkits, APresentToolkitNeverRefutesABuildFailure) {
  for (const char* cause : {"jit.build_failed", "jit.build_failed.missing_header", "jit.build_failed.host_compiler"}) {
    Finding f = AskToolkits(root_, {}, {}, cause);
    EXPECT_EQ(f.verdict, core::Verdict::kInconclusive) << cause << ": " << f.reason;
  }
  if (::access((root_ + "/bin/nvcc").c_str(), X_OK) == 0) {
    Finding f = AskToolkits(root_, {}, {}, "jit.build_failed.no_nvcc");
    EXPECT_EQ(f.verdict, core::Verdict::kNotReproduced) << f.reason;
    Finding named = AskToolkits(root_, {}, ToolkitOfTheLog(root_, 0), "jit.build_failed.no_nvcc");
    EXPECT_EQ(named.verdict, core::Verdict::kNotReproduced) << named.reason;
  }
  testing::TempDir dir;
  Finding missing = AskToolkits(root_, {}, ToolkitOfTheLog(dir.path() + "/cuda", 0), "jit.build_failed.no_nvcc");
  EXPECT_EQ(missing.verdict, core::Verdict::kConfirmed) << missing.reason;
}

TEST_F(Toolkits, VersionsDecideEvenWhenTheArchitectureIsListed) {
  // "SM 12.x requires CUDA >= <newer than this toolkit>": NVRTC lists 120, the version decides.
  int next_minor = (toolkit_.version % 1000) / 10 + 1;
  std::string required = std::to_string(toolkit_.version / 1000) + "." + std::to_string(next_minor);
  Finding f = AskToolkits(root_, {{"sm", "12.x"}, {"required", required}});
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_NE(f.reason.find("< " + required + " required (log); it lists sm_120, but the version decides"),
            std::string::npos)
      << f.reason;
  Finding ok = AskToolkits(root_, {{"sm", "12.x"}, {"required", "12.8"}}, ToolkitOfTheLog(root_, toolkit_.version));
  EXPECT_EQ(ok.verdict, core::Verdict::kRefuted) << ok.reason;
}

TEST_F(Toolkits, TheToolkitTheLogNamesIsTheOneJudged) {
  testing::TempDir other;
  Finding f = AskToolkits(root_, {{"arch", "sm_90"}, {"cuda_home", other.path()}});
  EXPECT_EQ(f.verdict, core::Verdict::kNotApplicable);
  EXPECT_NE(f.reason.find("the toolkit the log names (" + other.path() + ") has no usable NVRTC on this host"),
            std::string::npos)
      << f.reason;
}

TEST(ToolkitsSearch, EmptyFolderFindsNothing) {
  testing::TempDir empty;
  VerifyConfig config;
  config.toolkit_search_paths = {empty.path()};
  EXPECT_TRUE(detail::FindToolkits(config).empty());
  Finding f = Registry::Builtin().Find("cuda.toolkits")->Check(config, Hypothesis{"cuda.toolkit_too_old_for_arch", {{"arch", "90"}}});
  EXPECT_EQ(f.verdict, core::Verdict::kInconclusive);
  EXPECT_EQ(f.reason, "no CUDA toolkit found");
}

}  // namespace
}  // namespace triage::verifiers

namespace triage::verifiers {
namespace {

// NVRTC needs no GPU: the live-compilation source must compile for every architecture the
// toolkit lists, as a cubin and as PTX.
TEST_F(Toolkits, NvrtcCompilesTriagesKernelsForEveryListedArchitecture) {
  auto nvrtc = detail::OpenNvrtc(toolkit_.nvrtc_path);
  ASSERT_TRUE(nvrtc.ok()) << nvrtc.status().message();
  for (int arch : toolkit_.archs) {
    for (bool ptx : {false, true}) {
      detail::Compiled c = detail::CompileWithNvrtc(**nvrtc, std::string(kernels::Source()), arch, ptx);
      EXPECT_TRUE(c.ok) << "sm_" << arch << (ptx ? " ptx" : " cubin") << ": " << c.log;
      EXPECT_FALSE(c.image.empty());
    }
  }
}

}  // namespace
}  // namespace triage::verifiers

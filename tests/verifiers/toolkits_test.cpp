// cuda.toolkits against the NVRTC of a real toolkit on this host: versions and architecture
// lists are read from the library, and versions decide.
#include <gtest/gtest.h>

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

Finding AskToolkits(const std::string& root, std::map<std::string, std::string> args) {
  VerifyConfig config;
  config.toolkit_search_paths = {root};
  testing::TempDir empty;
  config.driver_search_paths = {empty.path()};  // no device: the log's architecture decides
  return Registry::Builtin().Find("cuda.toolkits")->Check(
      config, Hypothesis{"cuda.toolkit_too_old_for_arch", std::move(args)});
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

TEST_F(Toolkits, RefutesAnArchitectureItTargets) {
  if (toolkit_.version < 12080) GTEST_SKIP() << "needs CUDA 12.8 or newer";
  Finding f = AskToolkits(root_, {{"arch", "sm_120"}});
  EXPECT_EQ(f.verdict, core::Verdict::kRefuted) << f.reason;
  EXPECT_NE(f.facts_json.find("\"required\":\"12.8\""), std::string::npos) << f.facts_json;
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
  Finding ok = AskToolkits(root_, {{"sm", "12.x"}, {"required", "12.8"}});
  EXPECT_EQ(ok.verdict, core::Verdict::kRefuted) << ok.reason;
}

TEST_F(Toolkits, TheToolkitTheLogNamesIsTheOneJudged) {
  testing::TempDir other;
  Finding f = AskToolkits(root_, {{"arch", "sm_90"}, {"cuda_home", other.path()}});
  EXPECT_EQ(f.verdict, core::Verdict::kInconclusive);
  EXPECT_EQ(f.reason, "the toolkit the log names (" + other.path() + ") was not found");
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

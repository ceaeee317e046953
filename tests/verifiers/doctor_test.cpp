// `triage doctor`'s checks on a host without a GPU: every host check is there, each isolated, and
// the GPU ones are `unavailable` with the reason.
#include <gtest/gtest.h>

#include "helpers.h"
#include "triage/kernels/kernels.h"
#include "triage/verifiers/detail/toolkits.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {
namespace {

TEST(Doctor, EveryHostCheckReportsAndGpuOnesAreUnavailableWithoutADriver) {
  testing::TempDir empty, log;
  VerifyConfig config;
  config.driver_search_paths = {empty.path()};
  config.kernel_log_paths = {log.Write("kern.log", "quiet\n")};
  std::vector<HostCheck> checks = RunHostChecks(config, Registry::Builtin());
  std::vector<std::string> names;
  for (const auto& c : checks) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"gpu.devices", "cuda.toolkits", "cuda.compile_launch",
                                             "cuda.fatbin", "cuda.memory", "gpu.health", "gpu.peers",
                                             "host.oom", "host.disk", "host.shm", "gpu.visible"}));
  for (const auto& c : checks) {
    EXPECT_FALSE(c.detail.empty()) << c.name;
    EXPECT_EQ(c.facts_json.front(), '{') << c.name;
    if (c.name == "gpu.devices" || c.name == "cuda.memory" || c.name == "gpu.peers" ||
        c.name == "gpu.health" || c.name == "gpu.visible" ||
        (c.name == "cuda.compile_launch" &&
         (kernels::HavePrebuilt() || !detail::FindToolkits(VerifyConfig{}).empty()))) {
      EXPECT_EQ(c.status, HostStatus::kUnavailable) << c.name;
      EXPECT_TRUE(testing::StartsWith(c.detail, "no driver")) << c.name << ": " << c.detail;
    }
    if (c.name == "host.oom") {
      EXPECT_EQ(c.status, HostStatus::kPass) << c.detail;
    }
  }
}

}  // namespace
}  // namespace triage::verifiers

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


// doctor --strict: a machine with an NVIDIA GPU on its PCI bus and no driver fails gpu.devices;
// a machine without one (an Intel display function only) keeps it unavailable.
TEST(Doctor, StrictFailsTheDeviceCheckOnlyOnAGpuNodeWithoutADriver) {
  testing::TempDir empty, log, pci, no_nodes;
  VerifyConfig config;
  config.driver_search_paths = {empty.path()};
  config.kernel_log_paths = {log.Write("kern.log", "quiet\n")};
  config.device_node_dir = no_nodes.path();
  config.pci_device_dir = pci.path();
  pci.Write("0000:00:02.0/vendor", "0x8086\n");
  pci.Write("0000:00:02.0/class", "0x030000\n");
  const std::vector<HostCheck> ran = RunHostChecks(config, Registry::Builtin());
  auto device_check = [](const std::vector<HostCheck>& checks) {
    for (const auto& c : checks)
      if (c.name == "gpu.devices") return c;
    return HostCheck{};
  };
  ASSERT_EQ(device_check(ran).status, HostStatus::kUnavailable) << device_check(ran).detail;

  std::vector<HostCheck> no_gpu = ran;
  ApplyStrict(no_gpu, config);
  EXPECT_EQ(NvidiaHardware(config), "");
  EXPECT_EQ(device_check(no_gpu).status, HostStatus::kUnavailable);

  // An NVIDIA function that is no display controller (an audio function of the same card) is
  // not the GPU; the 3D controller is.
  pci.Write("0000:3b:00.1/vendor", "0x10de\n");
  pci.Write("0000:3b:00.1/class", "0x040300\n");
  EXPECT_EQ(NvidiaHardware(config), "");
  pci.Write("0000:3b:00.0/vendor", "0x10de\n");
  pci.Write("0000:3b:00.0/class", "0x030200\n");
  std::vector<HostCheck> gpu_node = ran;
  ApplyStrict(gpu_node, config);
  EXPECT_EQ(device_check(gpu_node).status, HostStatus::kFail);
  EXPECT_TRUE(testing::StartsWith(device_check(gpu_node).detail,
                                  "no working driver beside an NVIDIA GPU on the PCI bus at 0000:3b:00.0: no driver"))
      << device_check(gpu_node).detail;
  for (size_t i = 0; i < ran.size(); ++i) {
    if (ran[i].name != "gpu.devices") {
      EXPECT_EQ(gpu_node[i].status, ran[i].status) << ran[i].name;
    }
  }

  // A device node with no PCI view (a container given /dev/nvidia0 only) tells the same.
  pci.Write("0000:3b:00.0/vendor", "0x8086\n");
  no_nodes.Write("nvidiactl", "");
  EXPECT_EQ(NvidiaHardware(config), "the NVIDIA device node " + no_nodes.path() + "/nvidiactl");
}

}  // namespace
}  // namespace triage::verifiers

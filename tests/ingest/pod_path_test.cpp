// PodLogPathOf: what Kubernetes' log paths say about the pod that wrote them.
#include <gtest/gtest.h>

#include "triage/ingest/pipeline.h"

namespace triage::ingest {
namespace {

TEST(PodLogPath, APodsFolderNamesNamespacePodAndContainer) {
  auto p = PodLogPathOf("/var/log/pods/ml_sglang-0_0f4c2a1e-8b1d-4c3e-9a7f-2d6e5b4c3a21/server/0.log");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pod_namespace, "ml");
  EXPECT_EQ(p->pod, "sglang-0");
  EXPECT_EQ(p->container, "server");
}

TEST(PodLogPath, RotationsAndRestartsAreTheSameContainer) {
  for (const char* name : {"3.log", "0.log.20261102-091451", "0.log.1", "0.log.2.gz"}) {
    auto p = PodLogPathOf(std::string("pods/kube-system_nvidia-dcgm-x7k2p_6f1a2b3c-4d5e-6f70-8192-a3b4c5d6e7f8/dcgm/") + name);
    ASSERT_TRUE(p) << name;
    EXPECT_EQ(p->container, "dcgm");
  }
}

TEST(PodLogPath, AStaticPodsUidIsItsManifestHash) {
  auto p = PodLogPathOf("/var/log/pods/kube-system_etcd-node1_2f1c6e0b9a8d7c6b5a4f3e2d1c0b9a8f/etcd/0.log");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pod, "etcd-node1");
}

TEST(PodLogPath, AContainersLinkNamesThemToo) {
  auto p = PodLogPathOf(
      "/var/log/containers/sglang-0_ml_server-"
      "4f1d2c3b4a5968776655443322110099aabbccddeeff00112233445566778899.log");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pod_namespace, "ml");
  EXPECT_EQ(p->pod, "sglang-0");
  EXPECT_EQ(p->container, "server");
}

TEST(PodLogPath, OtherPathsAreNoPodLogs) {
  for (const char* path : {"0.log", "/var/log/sglang-server.log", "/srv/logs/ml_x_y/server/0.log",
                           "/var/log/pods/ml_sglang-0_0f4c2a1e-8b1d-4c3e-9a7f-2d6e5b4c3a21/server/app.log",
                           "/var/log/containers/sglang-0_ml_server-1234.log", "-"})
    EXPECT_FALSE(PodLogPathOf(path)) << path;
}

}  // namespace
}  // namespace triage::ingest

// The pod an incident's log came from is kept with the incident.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

using testing::TempDir;
using testing::ToolkitTooOld;

TEST(StorePod, NamespacePodAndContainerAreKept) {
  TempDir dir;
  auto s = Store::Open(dir.File("t.db"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  core::Incident inc = ToolkitTooOld("server", "120", "/var/log/pods/ml_sglang-0_u/server/0.log", 1, std::nullopt);
  inc.pod = {"ml", "sglang-0", "server"};
  std::vector<core::Incident> batch{inc};
  ASSERT_TRUE(s->Record(batch).ok());
  ASSERT_TRUE(batch[0].id);
  auto got = s->GetIncident(*batch[0].id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->incident.pod.pod_namespace, "ml");
  EXPECT_EQ(got->incident.pod.pod, "sglang-0");
  EXPECT_EQ(got->incident.pod.container, "server");
}

TEST(StorePod, AnIncidentOfNoPodHasNone) {
  TempDir dir;
  auto s = Store::Open(dir.File("t.db"));
  ASSERT_TRUE(s.ok());
  std::vector<core::Incident> batch{ToolkitTooOld("sglang", "120", "a.log", 1, std::nullopt)};
  ASSERT_TRUE(s->Record(batch).ok());
  auto got = s->GetIncident(*batch[0].id);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->incident.pod.empty());
}

}  // namespace
}  // namespace triage::store

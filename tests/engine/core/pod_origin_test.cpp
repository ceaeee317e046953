// A Kubernetes pod's log: the service is its container, and its incidents name the pod.
#include <gtest/gtest.h>

#include "test_util.h"
#include "triage/core/report.h"

namespace triage::core {
namespace {

constexpr const char* kPodLog =
    "/var/log/pods/ml_sglang-0_0f4c2a1e-8b1d-4c3e-9a7f-2d6e5b4c3a21/server/0.log";

TEST(PodOrigin, APodLogsServiceIsItsContainer) {
  EXPECT_EQ(ServiceFromSourceName(kPodLog), "server");
  EXPECT_EQ(ServiceFromSourceName("/var/log/sglang-server.log.1"), "sglang-server");
}

TEST(PodOrigin, TheAnalyzerNamesThePodInItsIncidents) {
  Analyzer a(testing::FixtureRules(), {});
  a.Add(testing::Line(7, "Fatal Python error: Aborted"), kPodLog);
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].service, "server");
  EXPECT_EQ(incidents[0].pod.pod_namespace, "ml");
  EXPECT_EQ(incidents[0].pod.pod, "sglang-0");
  EXPECT_EQ(incidents[0].pod.container, "server");
}

TEST(PodOrigin, AGivenServiceKeepsThePod) {
  AnalyzerOptions o;
  o.service = "inference";
  Analyzer a(testing::FixtureRules(), o);
  a.Add(testing::Line(7, "Fatal Python error: Aborted"), kPodLog);
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].service, "inference");
  EXPECT_EQ(incidents[0].pod.pod, "sglang-0");
}

Incident PodIncident() {
  Incident inc;
  inc.service = "server";
  inc.host = "gpu-node-7";
  inc.pod = {"ml", "sglang-0", "server"};
  inc.source = kPodLog;
  return inc;
}

TEST(PodOrigin, TheJsonReportHasThePodOnlyForAPodsLog) {
  const std::string doc = ReportJson({PodIncident()});
  EXPECT_NE(doc.find(R"("host":"gpu-node-7","pod":{"namespace":"ml","name":"sglang-0","container":"server"},"source")"),
            std::string::npos)
      << doc;
  Incident plain = PodIncident();
  plain.pod = {};
  EXPECT_EQ(ReportJson({plain}).find("\"pod\""), std::string::npos);
}

TEST(PodOrigin, TheTextReportNamesThePod) {
  const std::string text = ReportText({PodIncident()}, false);
  EXPECT_NE(text.find("Incident: server on gpu-node-7 in pod ml/sglang-0\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace triage::core

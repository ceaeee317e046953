// The metrics registry: label values from logs escaped and bounded, series bounded, every family
// declared, counts from many threads.
#include "triage/daemon/metrics.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "loopback.h"

namespace triage::daemon {
namespace {

TEST(MetricsLabels, QuotesBackslashesAndNewlinesAreEscapedAndControlsReplaced) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd", 128), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeLabelValue("red\x1b[31m\r\tx", 128), "red?[31m??x");
  EXPECT_EQ(EscapeLabelValue("caf\xc3\xa9", 128), "caf\xc3\xa9");
  EXPECT_EQ(EscapeLabelValue("bad\xff", 128), "bad\xef\xbf\xbd") << "invalid UTF-8 becomes U+FFFD";
}

TEST(MetricsLabels, LongValuesAreCutOnACharacterBoundary) {
  EXPECT_EQ(EscapeLabelValue(std::string(500, 'x'), 128), std::string(128, 'x'));
  // "é" is two bytes: a cut through it drops it whole.
  EXPECT_EQ(EscapeLabelValue("abc\xc3\xa9", 4), "abc");
  EXPECT_EQ(EscapeLabelValue("abc\xc3\xa9", 5), "abc\xc3\xa9");
}

TEST(MetricsSeries, LabelSetsPastTheLimitAreFoldedIntoOneSeries) {
  Metrics::Limits limits;
  limits.incident_series = 4;
  Metrics m("1.0", limits);
  for (int i = 0; i < 10; ++i) m.IncidentStored("svc" + std::to_string(i), "cuda.oom", "h", 1);
  m.IncidentStored("svc0", "cuda.oom", "h", 1);  // a series kept counts on
  const std::string text = m.Exposition();
  size_t series = 0;
  for (size_t k = text.find("\ntriage_incidents_total{"); k != std::string::npos;
       k = text.find("\ntriage_incidents_total{", k + 1))
    ++series;
  EXPECT_EQ(series, 4u) << text;
  using testing::SampleValue;
  EXPECT_EQ(SampleValue(text, "triage_incidents_total{service=\"svc0\",cause=\"cuda.oom\",host=\"h\"}"), 2);
  EXPECT_EQ(SampleValue(text, "triage_incidents_total{service=\"_other_\",cause=\"_other_\",host=\"_other_\"}"), 7)
      << text;
}

TEST(MetricsExposition, EveryFamilyIsDeclaredOnceWithHelpAndType) {
  Metrics m("0.1.0");
  const std::string text = m.Exposition();
  for (const char* family :
       {"triage_incidents_total", "triage_lines_read_total", "triage_bytes_read_total",
        "triage_files_watched", "triage_read_lag_seconds", "triage_verifications_total",
        "triage_notifications_total", "triage_last_incident_timestamp_seconds", "triage_store_up",
        "triage_build_info"}) {
    const std::string help = std::string("# HELP ") + family + " ";
    const std::string type = std::string("# TYPE ") + family + " ";
    ASSERT_NE(text.find(help), std::string::npos) << family;
    EXPECT_EQ(text.find(help, text.find(help) + 1), std::string::npos) << family;
    EXPECT_NE(text.find(type), std::string::npos) << family;
  }
  EXPECT_NE(text.find("\ntriage_build_info{version=\"0.1.0\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntriage_read_lag_seconds 0\n"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(MetricsExposition, ReadLagIsTheAgeOfTheOldestWaitingFile) {
  Metrics m("0.1.0");
  m.SetReadBacklogSince(std::chrono::steady_clock::now() - std::chrono::seconds(7));
  double lag = testing::SampleValue(m.Exposition(), "triage_read_lag_seconds");
  EXPECT_GE(lag, 7);
  EXPECT_LT(lag, 60);
  m.ClearReadBacklog();
  EXPECT_EQ(testing::SampleValue(m.Exposition(), "triage_read_lag_seconds"), 0);
}

TEST(MetricsExposition, StoreUpIsZeroWhileTheStoreCannotBeReached) {
  Metrics m("0.1.0");
  EXPECT_EQ(testing::SampleValue(m.Exposition(), "triage_store_up"), 1);
  m.SetStoreUnreachable("connection refused");
  EXPECT_EQ(testing::SampleValue(m.Exposition(), "triage_store_up"), 0);
  m.SetStoreUnreachable("");
  EXPECT_EQ(testing::SampleValue(m.Exposition(), "triage_store_up"), 1);
}

TEST(MetricsCounters, CountsFromManyThreadsAddUp) {
  Metrics m("0.1.0");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&m] {
      for (int i = 0; i < 1000; ++i) {
        m.AddLinesRead(1);
        m.AddBytesRead(10);
        m.VerificationDone("cuda.memory", "confirmed");
      }
    });
  }
  for (auto& t : threads) t.join();
  const std::string text = m.Exposition();
  using testing::SampleValue;
  EXPECT_EQ(SampleValue(text, "triage_lines_read_total"), 4000);
  EXPECT_EQ(SampleValue(text, "triage_bytes_read_total"), 40000);
  EXPECT_EQ(SampleValue(text, "triage_verifications_total{verifier=\"cuda.memory\",verdict=\"confirmed\"}"), 4000);
}

}  // namespace
}  // namespace triage::daemon

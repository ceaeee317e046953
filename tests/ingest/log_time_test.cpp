// Line times as triage keeps them (ingest/src/log_time.h): in UTC when the zone is known, with a
// year when the line has none.
#include <gtest/gtest.h>

#include "../../ingest/src/log_time.h"
#include "ingest_testing.h"

namespace triage::ingest {
namespace {

constexpr int64_t kDec5 = 1796428800;  // 2026-12-05T00:00:00Z

std::string Norm(detail::LogClock& clock, const char* time, std::string_view wrapper = {}) {
  OptionalString t(time);
  clock.Normalize(t, wrapper);
  return *t;
}

TEST(LogClock, AZonedTimeIsTheSameInstantInUtc) {
  detail::LogClock c(kDec5);
  EXPECT_EQ(Norm(c, "2026-12-01T19:23:24+05:00"), "2026-12-01T14:23:24Z");
  EXPECT_EQ(Norm(c, "2026-12-01T19:23:24.0159823-0330"), "2026-12-01T22:53:24.0159823Z");
  EXPECT_EQ(Norm(c, "2026-12-31T23:30:00-01"), "2027-01-01T00:30:00Z");
  EXPECT_EQ(Norm(c, "2026-12-01T19:23:24.5Z"), "2026-12-01T19:23:24.5Z");
}

TEST(LogClock, AFullTimeWithoutZoneIsKeptAsItIs) {
  detail::LogClock c(kDec5);
  EXPECT_EQ(Norm(c, "2026-12-01T19:23:24.123"), "2026-12-01T19:23:24.123");
}

TEST(LogClock, AYearlessTimeTakesTheYearOfTheLogsOwnTimes) {
  detail::LogClock c(kDec5);
  Norm(c, "2024-06-01T10:00:00");
  EXPECT_EQ(Norm(c, "--06-01T10:05:00.25"), "2024-06-01T10:05:00.25");
}

TEST(LogClock, AYearlessTimeTakesTheFilesYearAndIsNotAfterTheFile) {
  detail::LogClock c(kDec5);
  EXPECT_EQ(Norm(c, "--12-01T16:16:57"), "2026-12-01T16:16:57");
  detail::LogClock d(kDec5);
  // The 20th of December is after the file's last change: the December before.
  EXPECT_EQ(Norm(d, "--12-20T08:00:00"), "2025-12-20T08:00:00");
}

TEST(LogClock, ALogRunsOnIntoTheNextYear) {
  detail::LogClock c(kDec5);
  Norm(c, "2026-12-31T23:59:58Z");
  EXPECT_EQ(Norm(c, "--12-31T23:59:59"), "2026-12-31T23:59:59");
  EXPECT_EQ(Norm(c, "--01-01T00:00:01"), "2027-01-01T00:00:01");
}

TEST(LogClock, TheWrappersTimeOfTheSameLineDatesIt) {
  detail::LogClock c(kDec5);
  EXPECT_EQ(Norm(c, "--07-25T18:22:31", "2025-07-25T18:22:31.293592586Z"), "2025-07-25T18:22:31");
}

TEST(LogClock, OtherTimesAreLeftAlone) {
  detail::LogClock c(kDec5);
  EXPECT_EQ(Norm(c, "1714140912"), "1714140912");
  EXPECT_EQ(Norm(c, "--02-30T10:00:00"), "--02-30T10:00:00");
}

TEST(LogClockInThePipeline, AGlogLineGetsItsYearAndIsMarkedDated) {
  IngestOptions o;
  o.reference_time = kDec5;
  auto ev = testing::Assemble("E1201 16:16:57.123456  1234 main.cc:12] Check failed: x\n", o);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].time.value_or(""), "2026-12-01T16:16:57.123456");
  EXPECT_TRUE(ev[0].time_dated);
}

TEST(LogClockInThePipeline, ADockerLinesTimeDatesItsMessagesYearlessTime) {
  auto ev = testing::Assemble(
      R"({"log":"INFO 07-25 18:22:31 [api_server.py:1] up\n","stream":"stderr","time":"2025-07-25T18:22:31.293592586Z"})"
      "\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].time.value_or(""), "2025-07-25T18:22:31");
}

TEST(LogClockInThePipeline, AZonedLineIsNotMarkedDated) {
  auto ev = testing::Assemble("2026-12-01T19:23:24+05:00 ERROR worker died\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].time.value_or(""), "2026-12-01T14:23:24Z");
  EXPECT_FALSE(ev[0].time_dated);
}

}  // namespace
}  // namespace triage::ingest

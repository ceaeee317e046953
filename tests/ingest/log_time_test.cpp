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

TEST(LogClock, AYearlessTimeTakesTheYearTheLinesBeforeItShowed) {
  // A part of a split input: the part before it read "2024-06-01T10:00:00" last.
  int64_t seen = 0;
  ASSERT_TRUE(detail::IsoToEpoch("2024-06-01T10:00:00", seen));
  detail::LogClock c(kDec5, std::nullopt, seen);
  EXPECT_EQ(c.LastFullTime(), seen);
  EXPECT_EQ(Norm(c, "--06-01T10:05:00"), "2024-06-01T10:05:00");
  // The time read last is the next one's reference.
  Norm(c, "2025-01-02T03:04:05");
  int64_t later = 0;
  ASSERT_TRUE(detail::IsoToEpoch("2025-01-02T03:04:05", later));
  EXPECT_EQ(c.LastFullTime(), later);
  EXPECT_EQ(Norm(c, "--01-02T03:05:00"), "2025-01-02T03:05:00");
  EXPECT_EQ(detail::LogClock(kDec5).LastFullTime(), 0);
}

TEST(LogClock, ALogRunsOnIntoTheNextYear) {
  detail::LogClock c(kDec5);
  Norm(c, "2026-12-31T23:59:58Z");
  EXPECT_EQ(Norm(c, "--12-31T23:59:59"), "2026-12-31T23:59:59");
  EXPECT_EQ(Norm(c, "--01-01T00:00:01"), "2027-01-01T00:00:01");
}

TEST(LogClock, TheWrappersTimeOfTheSameLineDatesIt) {
  detail::LogClock c(kDec5);
  // ... and tells its zone: the wrapper's UTC.
  EXPECT_EQ(Norm(c, "--07-25T18:22:31", "2025-07-25T18:22:31.293592586Z"), "2025-07-25T18:22:31Z");
}

TEST(LogClock, TheWrappersClockTellsTheZoneOfTimesWithoutOne) {
  detail::LogClock c(kDec5);
  EXPECT_EQ(c.zone().origin, ZoneOrigin::kNone);
  // A program 8 hours ahead of its wrapper, the wrapper a fraction of a second behind it.
  EXPECT_EQ(Norm(c, "2026-08-05T09:13:49", "2026-08-05T01:13:49.412000000Z"), "2026-08-05T01:13:49Z");
  EXPECT_EQ(c.zone().origin, ZoneOrigin::kWrapper);
  EXPECT_EQ(c.zone().offset, 8 * 3600);
  // Year-less times too, and lines that came in no wrapper.
  EXPECT_EQ(Norm(c, "--08-05T09:14:07.5", "2026-08-05T01:14:07.9Z"), "2026-08-05T01:14:07.5Z");
  EXPECT_EQ(Norm(c, "2026-08-05T09:20:00,125"), "2026-08-05T01:20:00,125Z");
  // A zoned time is the same instant whatever the zone.
  EXPECT_EQ(Norm(c, "2026-08-05T09:20:00+08:00", "2026-08-05T01:20:00Z"), "2026-08-05T01:20:00Z");
}

TEST(LogClock, TheZoneIsTheLargestDifferenceToWholeOrHalfHours) {
  detail::LogClock c(kDec5);
  // 5.5 hours behind; the first line reached the wrapper 20 minutes late (a buffered pipe).
  Norm(c, "2026-11-02T03:24:00", "2026-11-02T09:14:00Z");
  EXPECT_EQ(c.zone().offset, -6 * 3600);
  EXPECT_EQ(Norm(c, "2026-11-02T03:45:00", "2026-11-02T09:15:00.3Z"), "2026-11-02T09:15:00Z");
  EXPECT_EQ(c.zone().offset, -(5 * 3600 + 1800));
  // A difference no zone has (a time quoted at a line's start) changes nothing.
  Norm(c, "2024-01-01T00:00:00", "2026-11-02T09:16:00Z");
  EXPECT_EQ(c.zone().offset, -(5 * 3600 + 1800));
}

TEST(LogClock, AWrappersTimeWithoutZoneTellsNoZone) {
  detail::LogClock c(kDec5);
  EXPECT_EQ(Norm(c, "2026-08-05T09:13:49", "2026-08-05 01:13:49,412"), "2026-08-05T09:13:49");
  EXPECT_EQ(c.zone().origin, ZoneOrigin::kNone);
  // A zoned clock that differs by no zone: read as UTC, and said so.
  detail::LogClock d(kDec5);
  EXPECT_EQ(Norm(d, "2026-08-05T09:13:49", "2026-08-07T01:13:49Z"), "2026-08-05T09:13:49");
  EXPECT_EQ(d.zone().origin, ZoneOrigin::kUnknown);
}

TEST(LogClock, TheGivenZoneWins) {
  detail::LogClock c(kDec5, -(5 * 3600 + 1800));
  EXPECT_EQ(c.zone().origin, ZoneOrigin::kNone);  // no time read in it yet
  EXPECT_EQ(Norm(c, "2026-11-02T03:44:00", "2026-11-02T01:00:00Z"), "2026-11-02T09:14:00Z");
  EXPECT_EQ(c.zone().origin, ZoneOrigin::kSetting);
  EXPECT_EQ(c.zone().offset, -(5 * 3600 + 1800));
  // A year-less time gets its year (the last one not after the file's time, as an instant),
  // then is read in the zone: 23:00 on New Year's Eve in UTC-05:30 is 04:30 the next day in UTC.
  detail::LogClock d(kDec5, -(5 * 3600 + 1800));
  EXPECT_EQ(Norm(d, "--12-31T23:00:00"), "2026-01-01T04:30:00Z");
}

TEST(LogClock, AWrappersTimeIsPutInUtc) {
  OptionalString out;
  detail::WrapperTimeInUtc("2026-11-02T09:14:51.123456789Z", out);
  EXPECT_EQ(out.value_or("-"), "2026-11-02T09:14:51.123456789Z");
  detail::WrapperTimeInUtc("2026-11-02T11:14:51.123+02:00", out);
  EXPECT_EQ(out.value_or("-"), "2026-11-02T09:14:51.123Z");
  detail::WrapperTimeInUtc("2026-11-02T09:14:51", out);
  EXPECT_FALSE(out.has_value());
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
  EXPECT_EQ(ev[0].time.value_or(""), "2025-07-25T18:22:31Z");
  EXPECT_EQ(ev[0].wrapper_time.value_or(""), "2025-07-25T18:22:31.293592586Z");
  EXPECT_EQ(ev[0].zone.origin, ZoneOrigin::kWrapper);
}

TEST(LogClockInThePipeline, ACriLineKeepsTheProgramsTimeInItsZoneAndTheWrappersClock) {
  IngestOptions o;
  o.reference_time = kDec5;
  auto ev = testing::Assemble(
      "2026-08-05T01:13:49.412000000Z stderr F (APIServer pid=5101) INFO 08-05 09:13:49 [api.py:1] up\n"
      "2026-08-05T01:14:07.100000000Z stderr F Traceback (most recent call last):\n"
      "2026-08-05T01:14:07.100000000Z stderr F   File \"/srv/main.py\", line 3, in <module>\n"
      "2026-08-05T01:14:07.100000000Z stderr F ImportError: cannot import name 'x'\n",
      o);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].time.value_or(""), "2026-08-05T01:13:49Z");
  EXPECT_TRUE(ev[0].time_dated);
  EXPECT_EQ(ev[0].wrapper_time.value_or(""), "2026-08-05T01:13:49.412000000Z");
  EXPECT_EQ(ev[1].time.value_or(""), "2026-08-05T01:14:07.100000000Z");
  EXPECT_EQ(ev[1].wrapper_time.value_or(""), "2026-08-05T01:14:07.100000000Z");
  EXPECT_EQ(ev[1].zone.origin, ZoneOrigin::kWrapper);
  EXPECT_EQ(ev[1].zone.offset, 8 * 3600);
}

TEST(LogClockInThePipeline, TheGivenZoneReadsAPlainLogsTimes) {
  IngestOptions o;
  o.zone = 8 * 3600;
  auto ev = testing::Assemble("2026-08-05 09:13:49.125 ERROR worker died\n", o);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].time.value_or(""), "2026-08-05T01:13:49.125Z");
  EXPECT_FALSE(ev[0].wrapper_time.has_value());
  EXPECT_EQ(ev[0].zone.origin, ZoneOrigin::kSetting);
}

TEST(LogClockInThePipeline, AZonedLineIsNotMarkedDated) {
  auto ev = testing::Assemble("2026-12-01T19:23:24+05:00 ERROR worker died\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].time.value_or(""), "2026-12-01T14:23:24Z");
  EXPECT_FALSE(ev[0].time_dated);
}

}  // namespace
}  // namespace triage::ingest

// Times as --since/--until take them and as the store compares them (UTC).
#include <gtest/gtest.h>

#include "triage/store/store.h"

namespace triage::store {
namespace {

constexpr int64_t kNow = 1793610000;  // 2026-11-02T09:00:00Z

TEST(StoreTimes, ATimesZoneIsAppliedWhenStored) {
  // The case: 19:23 at +05:00 is 14:23 UTC, not 19:23.
  EXPECT_EQ(*NormalizeTime("2026-12-01T19:23:24+05:00"), "2026-12-01T14:23:24");
  EXPECT_EQ(*NormalizeTime("2026-12-01T19:23:24.250-0330"), "2026-12-01T22:53:24");
  EXPECT_EQ(*NormalizeTime("2026-12-31T23:30:00-01:00"), "2027-01-01T00:30:00");
  EXPECT_EQ(*NormalizeTime("2026-12-01T19:23:24Z"), "2026-12-01T19:23:24");
}

TEST(StoreTimes, SystemdDayWordsAreUtcMidnights) {
  EXPECT_EQ(*ParseSince("today", kNow), "2026-11-02T00:00:00");
  EXPECT_EQ(*ParseSince("yesterday", kNow), "2026-11-01T00:00:00");
  EXPECT_EQ(*ParseSince("tomorrow", kNow), "2026-11-03T00:00:00");
  EXPECT_EQ(*ParseSince("now", kNow), "2026-11-02T09:00:00");
}

TEST(StoreTimes, SystemdRelativeTimesCountBackFromNow) {
  EXPECT_EQ(*ParseSince("-2h", kNow), "2026-11-02T07:00:00");
  EXPECT_EQ(*ParseSince("2h ago", kNow), "2026-11-02T07:00:00");
  EXPECT_EQ(*ParseSince("-90min", kNow), "2026-11-02T07:30:00");
  EXPECT_FALSE(ParseSince("2 days", kNow).ok());  // a span, not a time
  EXPECT_EQ(*ParseSince("3 days ago", kNow), "2026-10-30T09:00:00");
}

}  // namespace
}  // namespace triage::store

// Store::OccurrencesByDay, the counts `triage serve` draws over time, on both back ends.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "postgres_server.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

class OccurrenceDays : public testing::BackendTest {};

TEST_P(OccurrenceDays, EachIncidentsOccurrencesPerDayFromADay) {
  auto store = Store::Open(target());
  ASSERT_TRUE(store.ok()) << store.status().message();
  // Incident 1 on two days (twice on the second), incident 2 on the second day.
  for (const auto& [service, started] :
       std::vector<std::pair<std::string, std::string>>{{"api", "2026-12-01T09:00:00"},
                                                        {"api", "2026-12-02T09:00:00"},
                                                        {"api", "2026-12-02T17:30:00"},
                                                        {"web", "2026-12-02T10:00:00"}}) {
    std::vector<core::Incident> batch{
        testing::ToolkitTooOld(service, "120", service + ".log", 7, started)};
    auto r = store->Record(batch);
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  auto all = store->OccurrencesByDay("");
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].day, "2026-12-01");
  EXPECT_EQ((*all)[0].count, 1);
  EXPECT_EQ((*all)[1].day, "2026-12-02");
  EXPECT_EQ((*all)[1].incident_id, (*all)[0].incident_id);
  EXPECT_EQ((*all)[1].count, 2);
  EXPECT_EQ((*all)[2].day, "2026-12-02");
  EXPECT_NE((*all)[2].incident_id, (*all)[0].incident_id);
  auto later = store->OccurrencesByDay("2026-12-02");
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->size(), 2u);
  auto none = store->OccurrencesByDay("2026-12-03");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TRIAGE_ON_EACH_BACKEND(OccurrenceDays);

}  // namespace
}  // namespace triage::store

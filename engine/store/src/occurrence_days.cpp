// Occurrences per incident and day, for counts over time.
#include "sql.h"
#include "store_impl.h"
#include "triage/store/store.h"

namespace triage::store {

Result<std::vector<DayCount>> Store::OccurrencesByDay(const std::string& since_day) {
  detail::Db& db = *impl_->db;
  auto st = db.Prepare(
      "SELECT incident_id, day, count FROM occurrences WHERE day >= ?1 ORDER BY day, incident_id");
  if (!st.ok()) return st.status().Annotate("occurrences by day");
  detail::StmtUse rows(**st);
  rows->Bind(1, since_day);
  std::vector<DayCount> out;
  for (;;) {
    auto row = rows->Step();
    if (!row.ok()) return row.status().Annotate("occurrences by day");
    if (!*row) break;
    out.push_back({rows->Int(0), rows->Text(1), rows->Int(2)});
  }
  return out;
}

}  // namespace triage::store

// Stored incidents as JSON: the `analyze --json` incident object, then the store's history of it.
#include "sql.h"
#include "store_impl.h"
#include "triage/core/report.h"
#include "triage/json.h"
#include "triage/store/store.h"

namespace triage::store {

std::string StoredIncidentJson(const StoredIncident& stored) {
  JsonWriter w;
  core::WriteIncidentJson(w, stored.incident);
  const std::string& report = w.str();
  // The report writer closes the object; the history keys go in before that brace, so the
  // object stays exactly `analyze`'s shape with more keys, never a different one.
  const size_t close = report.rfind('}');
  std::string json;
  if (close == std::string::npos || close == 0) {
    json.push_back('{');  // a writer that produced nothing: still a valid object
  } else {
    json.append(report, 0, close);
  }
  JsonWriter extra;
  extra.BeginObject();
  extra.Key("fingerprint").String(stored.summary.fingerprint);
  extra.Key("occurrences").Int(stored.summary.occurrences);
  extra.Key("first_seen").String(stored.summary.first_seen);
  extra.Key("last_seen").String(stored.summary.last_seen);
  extra.Key("status").String(stored.summary.status);
  extra.Key("note").String(stored.summary.note);
  extra.Key("hosts").Int(stored.summary.hosts);
  extra.Key("per_host").BeginArray();
  for (const auto& h : stored.hosts) {
    extra.BeginObject().Key("host").String(h.host).Key("occurrences").Int(h.occurrences);
    extra.Key("first_seen").String(h.first_seen).Key("last_seen").String(h.last_seen).EndObject();
  }
  extra.EndArray();
  // Where `export --after-cursor` continues from after this incident (its id, as text: the
  // form may change, the meaning not).
  extra.Key("cursor").String(std::to_string(stored.summary.id));
  extra.Key("activity").BeginArray();
  for (const auto& a : stored.activity) {
    extra.BeginObject().Key("time").String(a.time).Key("action").String(a.action);
    extra.Key("note").String(a.note).EndObject();
  }
  extra.EndArray();
  extra.EndObject();
  const std::string& tail = extra.str();  // {"fingerprint":...}
  if (json.size() > 1) json.push_back(',');
  json.append(tail, 1, std::string::npos);
  return json;
}

Status Store::Export(const std::optional<std::string>& since,
                     const std::function<Status(std::string_view line)>& line) {
  return Export(since, std::nullopt, line);
}

Status Store::Export(const std::optional<std::string>& since, const std::optional<std::string>& until,
                     const std::function<Status(std::string_view line)>& line) {
  return ExportAfter(-1, since, until, line);
}

Status Store::ExportAfter(int64_t after_id, const std::optional<std::string>& since,
                          const std::optional<std::string>& until,
                          const std::function<Status(std::string_view line)>& line) {
  detail::Db& db = *impl_->db;
  auto txn = detail::Transaction::Begin(db, detail::Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status().Annotate("export");
  std::optional<std::string> from, to;
  if (since) {
    from = NormalizeTime(*since);
    if (!from) from = since;
  }
  if (until) to = NormalizeTime(*until).value_or(*until);
  // Built from constant fragments; every value is bound, numbered in order (PostgreSQL wants
  // no gap in the numbers).
  std::string sql = "SELECT id FROM incidents WHERE 1 = 1";
  int n = 0;
  const int from_at = from ? ++n : 0, to_at = to ? ++n : 0, after_at = after_id >= 0 ? ++n : 0;
  if (from) sql += " AND last_seen >= ?" + std::to_string(from_at);
  if (to) sql += " AND first_seen <= ?" + std::to_string(to_at);
  // A cursor's order is the order of storing: an incident stored later than the cursor's is
  // after it, whatever its log's times say (a late-read log's incidents are not skipped).
  if (after_at) sql += " AND id > ?" + std::to_string(after_at) + " ORDER BY id";
  else sql += " ORDER BY last_seen, id";
  auto st = db.Prepare(sql);
  if (!st.ok()) return st.status().Annotate("export");
  detail::StmtUse ids(**st);
  if (from) ids->Bind(from_at, *from);
  if (to) ids->Bind(to_at, *to);
  if (after_at) ids->Bind(after_at, after_id);
  for (;;) {
    auto row = ids->Step();
    if (!row.ok()) return row.status().Annotate("export");
    if (!*row) break;
    auto incident = detail::ReadIncident(db, ids->Int(0));
    if (!incident.ok()) return incident.status().Annotate("export");
    Status s = line(StoredIncidentJson(*incident));
    if (!s.ok()) return s;
  }
  return (*txn)->Commit();
}

}  // namespace triage::store

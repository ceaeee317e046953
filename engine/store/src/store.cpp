#include "triage/store/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <tuple>

#include "schema.h"
#include "sqlite.h"
#include "store_impl.h"
#include "triage/json.h"

namespace triage::store {

using detail::Db;
using detail::Stmt;
using detail::StmtUse;
using detail::Transaction;

namespace {

// Bounds on what one occurrence may add, so one pathological incident cannot fill the disk
// (documented in docs/schema.md).
constexpr size_t kMaxEvidencePerCause = 200;
constexpr size_t kMaxExcerptBytes = 4096;

#define TRIAGE_TRY(expr)              \
  do {                                \
    Status triage_s_ = (expr);        \
    if (!triage_s_.ok()) return triage_s_; \
  } while (0)

// Prepares (or fetches from the cache) and binds nothing yet.
#define TRIAGE_PREPARE(var, db, sql)        \
  auto var##_r = (db).Prepare(sql);         \
  if (!var##_r.ok()) return var##_r.status(); \
  StmtUse var(**var##_r)

// Creates the folders above `path` that do not exist, user-only.
Status MakeParents(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return Status::Ok();
  std::string dir = path.substr(0, slash);
  struct stat st {};
  if (stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return Status::Io(dir + ": not a folder");
    return Status::Ok();
  }
  TRIAGE_TRY(MakeParents(dir));
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::Io(dir + ": cannot create the folder: " + std::strerror(errno));
  }
  return Status::Ok();
}

// Creates the database file user-only (SQLite would use 0644 less the umask); its -wal and -shm
// files take the same mode from it.
Status CreateFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return Status::Ok();
    return Status::Io(path + ": cannot create the database: " + std::strerror(errno));
  }
  ::close(fd);
  return Status::Ok();
}

std::string Truncated(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  // Back up to a UTF-8 boundary so the excerpt stays valid text.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "…";
}

std::string CapturesJson(const std::map<std::string, std::string>& captures) {
  JsonWriter w;
  w.BeginObject();
  for (const auto& [k, v] : captures) w.Key(k).String(v);
  w.EndObject();
  return w.Take();
}

std::string KeysJson(const std::vector<std::string>& keys) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& k : keys) w.String(k);
  w.EndArray();
  return w.Take();
}

std::string VerifyJson(const std::vector<core::VerifyRequest>& requests) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& r : requests) {
    w.BeginObject().Key("verifier").String(r.verifier).Key("args").BeginObject();
    for (const auto& [k, v] : r.args) w.Key(k).String(v);
    w.EndObject().EndObject();
  }
  w.EndArray();
  return w.Take();
}

Result<std::map<std::string, std::string>> ParseStringMap(Db& db, const std::string& json) {
  TRIAGE_PREPARE(st, db, "SELECT key, value FROM json_each(?1)");
  st->Bind(1, json);
  std::map<std::string, std::string> out;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out[st->Text(0)] = st->Text(1);
  }
  return out;
}

Result<std::vector<std::string>> ParseStringList(Db& db, const std::string& json) {
  TRIAGE_PREPARE(st, db, "SELECT value FROM json_each(?1)");
  st->Bind(1, json);
  std::vector<std::string> out;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(st->Text(0));
  }
  return out;
}

Result<std::vector<core::VerifyRequest>> ParseVerify(Db& db, const std::string& json) {
  std::vector<std::pair<std::string, std::string>> raw;
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT json_extract(value, '$.verifier'), json(json_extract(value, '$.args')) "
                   "FROM json_each(?1)");
    st->Bind(1, json);
    for (;;) {
      auto row = st->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      raw.emplace_back(st->Text(0), st->IsNull(1) ? std::string("{}") : st->Text(1));
    }
  }
  std::vector<core::VerifyRequest> out;
  for (auto& [verifier, args] : raw) {
    auto m = ParseStringMap(db, args);
    if (!m.ok()) return m.status();
    out.push_back({verifier, std::move(*m)});
  }
  return out;
}

// The schema's CHECK admits only the names core writes; anything else (a hand-edited file) reads
// as what says least.
core::Verdict VerdictFromName(const std::string& s) {
  return core::VerdictFromName(s).value_or(core::Verdict::kInconclusive);
}

Status UpsertVerification(Db& db, int64_t incident_id, const std::string& cause,
                          const core::Verification& v, const std::string& now) {
  TRIAGE_PREPARE(st, db,
                 "INSERT INTO verifications (incident_id, cause, verifier, verdict, reason, facts, "
                 "host, time, ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
                 "ON CONFLICT (incident_id, cause, verifier, host) DO UPDATE SET "
                 "verdict = excluded.verdict, reason = excluded.reason, facts = excluded.facts, "
                 "time = excluded.time, ms = excluded.ms");
  st->Bind(1, incident_id).Bind(2, cause).Bind(3, v.verifier).Bind(4, core::VerdictName(v.verdict));
  st->Bind(5, v.reason).Bind(6, v.facts_json.empty() ? std::string("{}") : v.facts_json);
  st->Bind(7, v.host).Bind(8, now).Bind(9, v.ms);
  return st->Run();
}

Status InsertEvidence(Db& db, int64_t incident_id, const char* occurrence,
                      const std::string& cause, const std::string* symptom,
                      const std::vector<core::Evidence>& evidence, RecordOutcome& outcome) {
  TRIAGE_PREPARE(st, db,
                 "INSERT INTO evidence (incident_id, occurrence, cause, symptom, seq, source, "
                 "line, excerpt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  const size_t n = std::min(evidence.size(), kMaxEvidencePerCause);
  for (size_t i = 0; i < n; ++i) {
    const auto& e = evidence[i];
    st->Bind(1, incident_id).Bind(2, occurrence).Bind(3, cause);
    if (symptom) st->Bind(4, *symptom);
    else st->BindNull(4);
    st->Bind(5, int64_t(i)).Bind(6, e.source).Bind(7, int64_t(e.line));
    st->Bind(8, Truncated(e.text, kMaxExcerptBytes));
    TRIAGE_TRY(st->Run());
    st->Reset();
    ++outcome.evidence_rows;
  }
  return Status::Ok();
}

Status InsertCauses(Db& db, int64_t incident_id, const core::Incident& inc,
                    const char* occurrence, RecordOutcome& outcome) {
  TRIAGE_PREPARE(st, db,
                 "INSERT INTO hypotheses (incident_id, cause, rank, score, band, title, remedy, "
                 "captures, fingerprint_keys, independent, explained_by, verify) VALUES "
                 "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  for (const auto& c : inc.causes) {
    st->Bind(1, incident_id).Bind(2, c.cause).Bind(3, int64_t(c.rank)).Bind(4, c.score);
    st->Bind(5, c.band).Bind(6, c.title).Bind(7, c.remedy).Bind(8, CapturesJson(c.captures));
    st->Bind(9, KeysJson(c.fingerprint_keys)).Bind(10, int64_t(c.independent ? 1 : 0));
    st->BindNull(11).Bind(12, VerifyJson(c.verify));
    TRIAGE_TRY(st->Run());
    st->Reset();
    const int64_t parent = sqlite3_last_insert_rowid(db.get());
    for (const auto& s : c.symptoms) {
      st->Bind(1, incident_id).Bind(2, s.cause).BindNull(3).Bind(4, 0.0).Bind(5, "");
      st->Bind(6, s.title).Bind(7, "").Bind(8, "{}").Bind(9, "[]").Bind(10, int64_t(0));
      st->Bind(11, parent).Bind(12, "[]");
      TRIAGE_TRY(st->Run());
      st->Reset();
    }
    TRIAGE_TRY(InsertEvidence(db, incident_id, occurrence, c.cause, nullptr, c.evidence, outcome));
    for (const auto& s : c.symptoms) {
      TRIAGE_TRY(
          InsertEvidence(db, incident_id, occurrence, c.cause, &s.cause, s.evidence, outcome));
    }
  }
  return Status::Ok();
}

// Files one incident inside the caller's write transaction; returns its id.
Result<int64_t> RecordOne(Db& db, core::Incident& inc, const std::string& now,
                          RecordOutcome& outcome) {
  const std::string fp = inc.fingerprint.empty() ? core::Fingerprint(inc) : inc.fingerprint;
  std::string seen = now;
  if (inc.started) {
    if (auto t = NormalizeTime(*inc.started)) seen = *t;
  } else if (inc.ended) {
    if (auto t = NormalizeTime(*inc.ended)) seen = *t;
  }
  const core::Cause& top = inc.causes.front();

  std::optional<int64_t> existing;
  bool same_occurrence = false;
  bool was_resolved = false;
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT id, source, first_line, last_line, started, status = 'resolved' "
                   "FROM incidents WHERE fingerprint = ?1");
    st->Bind(1, fp);
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (*row) {
      existing = st->Int(0);
      was_resolved = st->Int(5) != 0;
      // The very same occurrence read again (same file, lines and the log's own start time) is
      // not a recurrence. Without a log time there is no telling, so it counts.
      same_occurrence = inc.started && !st->IsNull(4) && st->Text(4) == *inc.started &&
                        st->Text(1) == inc.source && uint64_t(st->Int(2)) == inc.first_line &&
                        uint64_t(st->Int(3)) == inc.last_line;
    }
  }

  int64_t id = 0;
  const char* occurrence = "first";
  if (!existing) {
    TRIAGE_PREPARE(st, db,
                   "INSERT INTO incidents (fingerprint, service, host, source, first_line, "
                   "last_line, started, ended, top_cause, title, first_seen, last_seen, "
                   "occurrences, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                   "?11, 1, 'open')");
    st->Bind(1, fp).Bind(2, inc.service).Bind(3, inc.host).Bind(4, inc.source);
    st->Bind(5, int64_t(inc.first_line)).Bind(6, int64_t(inc.last_line));
    st->Bind(7, inc.started).Bind(8, inc.ended).Bind(9, top.cause).Bind(10, top.title);
    st->Bind(11, seen);
    TRIAGE_TRY(st->Run());
    id = sqlite3_last_insert_rowid(db.get());
    ++outcome.new_incidents;
    outcome.filed.push_back(RecordOutcome::Filed::kNew);
  } else if (same_occurrence) {
    id = *existing;
    outcome.filed.push_back(RecordOutcome::Filed::kReadAgain);
  } else {
    id = *existing;
    occurrence = "latest";
    ++outcome.recurrences;
    outcome.filed.push_back(RecordOutcome::Filed::kRecurrence);
    if (was_resolved) ++outcome.reopened;
    TRIAGE_PREPARE(st, db,
                   "UPDATE incidents SET service = ?2, host = ?3, source = ?4, first_line = ?5, "
                   "last_line = ?6, started = ?7, ended = ?8, top_cause = ?9, title = ?10, "
                   "first_seen = min(first_seen, ?11), last_seen = max(last_seen, ?11), "
                   "occurrences = occurrences + 1, "
                   "status = CASE status WHEN 'resolved' THEN 'reopened' ELSE status END "
                   "WHERE id = ?1");
    st->Bind(1, id).Bind(2, inc.service).Bind(3, inc.host).Bind(4, inc.source);
    st->Bind(5, int64_t(inc.first_line)).Bind(6, int64_t(inc.last_line));
    st->Bind(7, inc.started).Bind(8, inc.ended).Bind(9, top.cause).Bind(10, top.title);
    st->Bind(11, seen);
    TRIAGE_TRY(st->Run());
    // The hypotheses follow the latest occurrence; the first occurrence's evidence stays, the
    // previous latest's goes.
    TRIAGE_PREPARE(del_h, db, "DELETE FROM hypotheses WHERE incident_id = ?1");
    del_h->Bind(1, id);
    TRIAGE_TRY(del_h->Run());
    TRIAGE_PREPARE(del_e, db,
                   "DELETE FROM evidence WHERE incident_id = ?1 AND occurrence = 'latest'");
    del_e->Bind(1, id);
    TRIAGE_TRY(del_e->Run());
  }

  if (!inc.pod.empty()) {
    // The pod of the latest occurrence (a recurrence may come from another pod of the same
    // workload).
    TRIAGE_PREPARE(st, db,
                   "UPDATE incidents SET pod_namespace = ?2, pod = ?3, container = ?4 WHERE id = ?1");
    st->Bind(1, id).Bind(2, inc.pod.pod_namespace).Bind(3, inc.pod.pod).Bind(4, inc.pod.container);
    TRIAGE_TRY(st->Run());
  }

  if (!same_occurrence) {
    TRIAGE_TRY(InsertCauses(db, id, inc, occurrence, outcome));
    TRIAGE_PREPARE(st, db,
                   "INSERT INTO occurrences (incident_id, day, count) VALUES (?1, ?2, 1) "
                   "ON CONFLICT (incident_id, day) DO UPDATE SET count = count + 1");
    st->Bind(1, id).Bind(2, seen.substr(0, 10));
    TRIAGE_TRY(st->Run());
  }
  for (const auto& c : inc.causes) {
    for (const auto& v : c.verifications) TRIAGE_TRY(UpsertVerification(db, id, c.cause, v, now));
  }
  return id;
}

Status PutCheckpointRows(Db& db, const std::vector<SourceCheckpoint>& checkpoints,
                         const std::string& now) {
  TRIAGE_PREPARE(st, db,
                 "INSERT INTO source_checkpoints (dev, inode, path, offset, head_len, head_hash, "
                 "updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (dev, inode) DO "
                 "UPDATE SET path = excluded.path, offset = excluded.offset, head_len = "
                 "excluded.head_len, head_hash = excluded.head_hash, updated_at = "
                 "excluded.updated_at");
  TRIAGE_PREPARE(del, db, "DELETE FROM source_checkpoints WHERE dev = ?1 AND inode = ?2");
  for (const auto& c : checkpoints) {
    if (c.forget) {
      del->Bind(1, int64_t(c.dev)).Bind(2, int64_t(c.inode));
      TRIAGE_TRY(del->Run());
      del->Reset();
      continue;
    }
    st->Bind(1, int64_t(c.dev)).Bind(2, int64_t(c.inode)).Bind(3, c.path);
    st->Bind(4, int64_t(c.offset)).Bind(5, int64_t(c.head_len)).Bind(6, int64_t(c.head_hash));
    st->Bind(7, now);
    TRIAGE_TRY(st->Run());
    st->Reset();
  }
  return Status::Ok();
}

IncidentSummary SummaryFromRow(Stmt& st) {
  // Columns: id, fingerprint, service, host, top_cause, title, occurrences, first_seen,
  // last_seen, status, note.
  IncidentSummary s;
  s.id = st.Int(0);
  s.fingerprint = st.Text(1);
  s.service = st.Text(2);
  s.host = st.Text(3);
  s.top_cause = st.Text(4);
  s.title = st.Text(5);
  s.occurrences = st.Int(6);
  s.first_seen = st.Text(7);
  s.last_seen = st.Text(8);
  s.status = st.Text(9);
  s.note = st.Text(10);
  return s;
}

constexpr const char* kSummaryColumns =
    "id, fingerprint, service, host, top_cause, title, occurrences, first_seen, last_seen, "
    "status, note";

// "word another" -> "\"word\" \"another\"": every word an FTS5 string, so nothing the user
// typed is read as query syntax; the words are ANDed.
std::string FtsQuery(std::string_view text) {
  std::string q;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) break;
    if (!q.empty()) q += ' ';
    q += '"';
    for (char c : text.substr(start, i - start)) {
      if (c == '"') q += '"';
      q += c;
    }
    q += '"';
  }
  return q;
}

Result<std::vector<StatsRow>> StatsRows(Db& db, const std::string& sql) {
  TRIAGE_PREPARE(st, db, sql);
  std::vector<StatsRow> rows;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    rows.push_back({st->Text(0), st->Int(1), st->Int(2)});
  }
  return rows;
}

}  // namespace

namespace detail {

Result<StoredIncident> ReadIncident(Db& db, int64_t id) {
  StoredIncident out;
  core::Incident& inc = out.incident;
  {
    TRIAGE_PREPARE(st, db,
                   std::string("SELECT ") + kSummaryColumns +
                       ", source, first_line, last_line, started, ended FROM incidents "
                       "WHERE id = ?1");
    st->Bind(1, id);
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::NotFound("incident " + std::to_string(id) + ": no such incident");
    out.summary = SummaryFromRow(*st);
    inc.id = id;
    inc.fingerprint = out.summary.fingerprint;
    inc.service = out.summary.service;
    inc.host = out.summary.host;
    inc.source = st->Text(11);
    inc.first_line = uint64_t(st->Int(12));
    inc.last_line = uint64_t(st->Int(13));
    inc.started = st->OptText(14);
    inc.ended = st->OptText(15);
  }
  {
    TRIAGE_PREPARE(st, db, "SELECT pod_namespace, pod, container FROM incidents WHERE id = ?1");
    st->Bind(1, id);
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (*row) inc.pod = {st->Text(0), st->Text(1), st->Text(2)};
  }
  struct Row {
    int64_t hid;
    core::Cause cause;
    std::optional<int64_t> parent;
    std::string captures, keys, verify;
  };
  std::vector<Row> rows;
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT id, cause, rank, score, band, title, remedy, captures, "
                   "fingerprint_keys, independent, explained_by, verify FROM hypotheses "
                   "WHERE incident_id = ?1 ORDER BY explained_by IS NOT NULL, rank, id");
    st->Bind(1, id);
    for (;;) {
      auto row = st->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      Row r;
      r.hid = st->Int(0);
      r.cause.cause = st->Text(1);
      r.cause.rank = int(st->Int(2));
      r.cause.score = st->Double(3);
      r.cause.band = st->Text(4);
      r.cause.title = st->Text(5);
      r.cause.remedy = st->Text(6);
      r.captures = st->Text(7);
      r.keys = st->Text(8);
      r.cause.independent = st->Int(9) != 0;
      if (!st->IsNull(10)) r.parent = st->Int(10);
      r.verify = st->Text(11);
      rows.push_back(std::move(r));
    }
  }
  std::map<int64_t, size_t> root_index;  // hypothesis id -> index in inc.causes
  for (auto& r : rows) {
    if (r.parent) {
      auto it = root_index.find(*r.parent);
      if (it == root_index.end()) continue;  // cannot happen: roots sort first, FK holds
      inc.causes[it->second].symptoms.push_back({r.cause.cause, r.cause.title, {}});
      continue;
    }
    auto captures = ParseStringMap(db, r.captures);
    if (!captures.ok()) return captures.status();
    r.cause.captures = std::move(*captures);
    auto keys = ParseStringList(db, r.keys);
    if (!keys.ok()) return keys.status();
    r.cause.fingerprint_keys = std::move(*keys);
    auto verify = ParseVerify(db, r.verify);
    if (!verify.ok()) return verify.status();
    r.cause.verify = std::move(*verify);
    root_index[r.hid] = inc.causes.size();
    inc.causes.push_back(std::move(r.cause));
  }
  auto find_cause = [&](const std::string& name) -> core::Cause* {
    for (auto& c : inc.causes)
      if (c.cause == name) return &c;
    return nullptr;
  };
  {
    // 'first' sorts before 'latest': the first occurrence's lines, then the latest's, each
    // line once.
    TRIAGE_PREPARE(st, db,
                   "SELECT cause, symptom, source, line, excerpt FROM evidence "
                   "WHERE incident_id = ?1 ORDER BY occurrence, seq, id");
    st->Bind(1, id);
    std::set<std::tuple<const void*, std::string, uint64_t, std::string>> seen;
    for (;;) {
      auto row = st->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      core::Cause* c = find_cause(st->Text(0));
      if (!c) continue;  // evidence of a cause the latest occurrence no longer has
      std::vector<core::Evidence>* list = &c->evidence;
      if (!st->IsNull(1)) {
        list = nullptr;
        const std::string symptom = st->Text(1);
        for (auto& s : c->symptoms)
          if (s.cause == symptom) list = &s.evidence;
        if (!list) continue;
      }
      core::Evidence e{st->Text(2), uint64_t(st->Int(3)), st->Text(4)};
      if (!seen.emplace(list, e.source, e.line, e.text).second) continue;
      list->push_back(std::move(e));
    }
  }
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT cause, verifier, verdict, reason, facts, host, ms FROM verifications "
                   "WHERE incident_id = ?1 ORDER BY id");
    st->Bind(1, id);
    for (;;) {
      auto row = st->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      core::Cause* c = find_cause(st->Text(0));
      if (!c) continue;
      core::Verification v;
      v.verifier = st->Text(1);
      v.verdict = VerdictFromName(st->Text(2));
      v.reason = st->Text(3);
      v.facts_json = st->Text(4);
      v.host = st->Text(5);
      v.ms = st->Int(6);
      c->verifications.push_back(std::move(v));
    }
  }
  return out;
}

}  // namespace detail

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

const std::string& Store::path() const { return impl_->path; }

Result<Store> Store::Open(const std::string& path, const StoreOptions& options) {
  if (path.empty()) return Status::InvalidInput("database path is empty");
  if (path == ":memory:" || path.rfind("file:", 0) == 0) {
    // Neither can be shared between the processes that write and read incidents.
    return Status::InvalidInput(path + ": give the database as a file path");
  }
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (options.create) {
    TRIAGE_TRY(MakeParents(path));
    TRIAGE_TRY(CreateFile(path));
  } else if (::access(path.c_str(), F_OK) != 0) {
    return Status::NotFound(path + ": no such database");
  }
  auto db = Db::Open(path, flags);
  if (!db.ok()) return db.status();
  auto impl = std::make_unique<Impl>(Impl{path, options, std::move(*db)});
  Db& d = impl->db;
  sqlite3_busy_timeout(d.get(), options.busy_timeout_ms);
  const std::string what = path;
  TRIAGE_TRY(d.Exec("PRAGMA foreign_keys = ON", what));
  // Reading the schema first tells a foreign file ("file is not a database") apart early.
  auto version = d.QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.status().Annotate(what);
  {
    auto st = d.Prepare("PRAGMA journal_mode = WAL");
    if (!st.ok()) return st.status().Annotate(what);
    StmtUse use(**st);
    auto row = use->Step();
    if (!row.ok()) return row.status().Annotate(what);
    if (!*row || use->Text(0) != "wal") {
      return Status::Io(what + ": cannot use write-ahead logging (journal mode " +
                        (*row ? use->Text(0) : std::string("unknown")) + ")");
    }
  }
  // WAL with synchronous=NORMAL: a crash of the process loses nothing committed; a power cut
  // may lose the last transactions but never corrupts.
  TRIAGE_TRY(d.Exec("PRAGMA synchronous = NORMAL", what));
  // SQLite's default page cache (2 MiB) makes a large batch spill and re-read pages; 32 MiB is
  // allocated only as pages are used, so a short `history` pays nothing for it.
  TRIAGE_TRY(d.Exec("PRAGMA cache_size = -32768", what));
  if (options.max_size_bytes > 0) {
    auto page = d.QueryInt("PRAGMA page_size");
    if (!page.ok()) return page.status().Annotate(what);
    const int64_t pages = std::max<int64_t>(1, options.max_size_bytes / std::max<int64_t>(*page, 512));
    // PRAGMAs take no parameters; the value is a number computed here, not text from outside.
    TRIAGE_TRY(d.Exec(("PRAGMA max_page_count = " + std::to_string(pages)).c_str(), what));
  }
  Status m = detail::Migrate(d);
  if (!m.ok()) return m.Annotate(what);
  return Store(std::move(impl));
}

Result<RecordOutcome> Store::Record(std::vector<core::Incident>& incidents,
                                    const std::vector<SourceCheckpoint>* checkpoints) {
  for (size_t i = 0; i < incidents.size(); ++i) {
    if (incidents[i].causes.empty()) {
      return Status::InvalidInput("incident " + std::to_string(i + 1) + " of the batch (" +
                                  incidents[i].source + ") has no root cause");
    }
  }
  Db& db = impl_->db;
  auto txn = Transaction::Begin(db, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status().Annotate("storing incidents");
  const std::string now = NowUtc();
  RecordOutcome outcome;
  std::vector<int64_t> ids;
  ids.reserve(incidents.size());
  for (auto& inc : incidents) {
    auto id = RecordOne(db, inc, now, outcome);
    if (!id.ok()) return id.status().Annotate("storing incidents");
    ids.push_back(*id);
  }
  if (checkpoints) {
    Status s = PutCheckpointRows(db, *checkpoints, now);
    if (!s.ok()) return s.Annotate("storing checkpoints");
  }
  Status c = (*txn)->Commit();
  if (!c.ok()) return c.Annotate("storing incidents");
  for (size_t i = 0; i < incidents.size(); ++i) {
    incidents[i].id = ids[i];
    if (incidents[i].fingerprint.empty()) incidents[i].fingerprint = core::Fingerprint(incidents[i]);
  }
  return outcome;
}

Result<std::vector<IncidentSummary>> Store::History(const HistoryFilter& filter) {
  // Built from constant fragments; every value is bound.
  std::string sql = std::string("SELECT ") + kSummaryColumns + " FROM incidents WHERE 1";
  if (filter.since) sql += " AND last_seen >= ?1";
  if (filter.until) sql += " AND first_seen <= ?5";
  if (filter.service) sql += " AND service = ?2";
  if (filter.cause) {
    sql +=
        " AND EXISTS (SELECT 1 FROM hypotheses h WHERE h.incident_id = incidents.id AND "
        "h.explained_by IS NULL AND (h.cause = ?3 OR substr(h.cause, 1, length(?3) + 1) = "
        "?3 || '.'))";
  }
  sql += " ORDER BY last_seen DESC, id DESC LIMIT ?4";
  Db& db = impl_->db;
  TRIAGE_PREPARE(st, db, sql);
  std::optional<std::string> since;
  if (filter.since) {
    since = NormalizeTime(*filter.since);
    if (!since) since = filter.since;
    st->Bind(1, *since);
  }
  if (filter.service) st->Bind(2, *filter.service);
  if (filter.cause) st->Bind(3, *filter.cause);
  st->Bind(4, filter.limit > 0 ? filter.limit : int64_t{-1});
  if (filter.until) st->Bind(5, NormalizeTime(*filter.until).value_or(*filter.until));
  std::vector<IncidentSummary> out;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status().Annotate("history");
    if (!*row) break;
    out.push_back(SummaryFromRow(*st));
  }
  return out;
}

Result<StoredIncident> Store::GetIncident(int64_t id) {
  auto txn = Transaction::Begin(impl_->db, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();
  auto r = detail::ReadIncident(impl_->db, id);
  if (!r.ok()) return r.status();
  TRIAGE_TRY((*txn)->Commit());
  return r;
}

Result<std::vector<SearchHit>> Store::Search(std::string_view text, int64_t limit) {
  const std::string query = FtsQuery(text);
  std::vector<SearchHit> out;
  if (query.empty()) return out;
  Db& db = impl_->db;
  TRIAGE_PREPARE(st, db,
                 "SELECT e.incident_id, i.service, e.cause, i.status, i.last_seen, e.source, "
                 "e.line, e.excerpt FROM evidence_fts f "
                 "JOIN evidence e ON e.id = f.rowid JOIN incidents i ON i.id = e.incident_id "
                 "WHERE evidence_fts MATCH ?1 ORDER BY f.rowid DESC LIMIT ?2");
  st->Bind(1, query).Bind(2, limit > 0 ? limit : int64_t{-1});
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status().Annotate("search");
    if (!*row) break;
    SearchHit h;
    h.incident_id = st->Int(0);
    h.service = st->Text(1);
    h.cause = st->Text(2);
    h.status = st->Text(3);
    h.last_seen = st->Text(4);
    h.source = st->Text(5);
    h.line = uint64_t(st->Int(6));
    h.excerpt = st->Text(7);
    out.push_back(std::move(h));
  }
  return out;
}

Result<Stats> Store::GetStats() {
  // Full scans by design. NOT INDEXED: reading the tables in order beats walking an index and
  // fetching each row at random (6x for the services at 30,000 incidents).
  Db& db = impl_->db;
  auto txn = Transaction::Begin(db, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();
  Stats s;
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT count(*), coalesce(sum(occurrences), 0), "
                   "coalesce(sum(status <> 'resolved'), 0) FROM incidents");
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (*row) {
      s.incidents = st->Int(0);
      s.occurrences = st->Int(1);
      s.open = st->Int(2);
    }
  }
  auto by_cause = StatsRows(
      db,
      "SELECT cause, count(*), sum(occurrences) FROM (SELECT DISTINCT h.cause, i.id, "
      "i.occurrences FROM hypotheses h NOT INDEXED JOIN incidents i ON i.id = h.incident_id "
      "WHERE h.explained_by IS NULL) GROUP BY cause ORDER BY 2 DESC, 3 DESC, 1");
  if (!by_cause.ok()) return by_cause.status();
  s.by_cause = std::move(*by_cause);
  auto by_service = StatsRows(db,
                              "SELECT service, count(*), sum(occurrences) FROM incidents "
                              "NOT INDEXED GROUP BY service ORDER BY 2 DESC, 3 DESC, 1");
  if (!by_service.ok()) return by_service.status();
  s.by_service = std::move(*by_service);
  auto by_day = StatsRows(db,
                          "SELECT day, count(*), sum(count) FROM occurrences GROUP BY day "
                          "ORDER BY day DESC");
  if (!by_day.ok()) return by_day.status();
  s.by_day = std::move(*by_day);
  TRIAGE_TRY((*txn)->Commit());
  return s;
}

Status Store::Resolve(int64_t id, const std::string& note) {
  Db& db = impl_->db;
  TRIAGE_PREPARE(st, db,
                 "UPDATE incidents SET status = 'resolved', resolved_at = ?2, note = ?3 "
                 "WHERE id = ?1");
  st->Bind(1, id).Bind(2, NowUtc()).Bind(3, note);
  TRIAGE_TRY(st->Run().Annotate("resolve"));
  if (sqlite3_changes(db.get()) == 0) {
    return Status::NotFound("incident " + std::to_string(id) + ": no such incident");
  }
  return Status::Ok();
}

Status Store::AddVerifications(int64_t id, const std::string& cause,
                               const std::vector<core::Verification>& verifications) {
  Db& db = impl_->db;
  auto txn = Transaction::Begin(db, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT count(*) FROM hypotheses WHERE incident_id = ?1 AND cause = ?2 AND "
                   "explained_by IS NULL");
    st->Bind(1, id).Bind(2, cause);
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row || st->Int(0) == 0) {
      return Status::NotFound("incident " + std::to_string(id) + ": no root cause " + cause);
    }
  }
  const std::string now = NowUtc();
  for (const auto& v : verifications) TRIAGE_TRY(UpsertVerification(db, id, cause, v, now));
  return (*txn)->Commit();
}

Result<std::optional<SourceCheckpoint>> Store::GetCheckpoint(const std::string& path) {
  Db& db = impl_->db;
  TRIAGE_PREPARE(st, db,
                 "SELECT path, inode, offset, updated_at, dev, head_len, head_hash FROM "
                 "source_checkpoints WHERE path = ?1 ORDER BY updated_at DESC LIMIT 1");
  st->Bind(1, path);
  auto row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<SourceCheckpoint>();
  return std::optional<SourceCheckpoint>(
      SourceCheckpoint{st->Text(0), uint64_t(st->Int(1)), uint64_t(st->Int(2)), st->Text(3),
                       uint64_t(st->Int(4)), uint64_t(st->Int(5)), uint64_t(st->Int(6))});
}

Result<std::vector<SourceCheckpoint>> Store::ListCheckpoints() {
  Db& db = impl_->db;
  TRIAGE_PREPARE(st, db,
                 "SELECT path, inode, offset, updated_at, dev, head_len, head_hash FROM "
                 "source_checkpoints ORDER BY path");
  std::vector<SourceCheckpoint> out;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({st->Text(0), uint64_t(st->Int(1)), uint64_t(st->Int(2)), st->Text(3),
                   uint64_t(st->Int(4)), uint64_t(st->Int(5)), uint64_t(st->Int(6))});
  }
  return out;
}

Status Store::PutCheckpoints(const std::vector<SourceCheckpoint>& checkpoints) {
  Db& db = impl_->db;
  auto txn = Transaction::Begin(db, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  TRIAGE_TRY(PutCheckpointRows(db, checkpoints, NowUtc()));
  return (*txn)->Commit();
}

Status Store::PutHeartbeat(const Heartbeat& hb) {
  Db& db = impl_->db;
  JsonWriter w;
  w.BeginObject();
  for (const auto& [k, v] : hb.counters) w.Key(k).Int(v);
  w.EndObject();
  TRIAGE_PREPARE(st, db,
                 "INSERT INTO heartbeat (id, pid, started_at, updated_at, counters, last_error) "
                 "VALUES (1, ?1, ?2, ?3, ?4, ?5) ON CONFLICT (id) DO UPDATE SET "
                 "pid = excluded.pid, started_at = excluded.started_at, "
                 "updated_at = excluded.updated_at, counters = excluded.counters, "
                 "last_error = excluded.last_error");
  st->Bind(1, hb.pid).Bind(2, hb.started_at).Bind(3, NowUtc()).Bind(4, w.str());
  st->Bind(5, hb.last_error);
  return st->Run().Annotate("heartbeat");
}

Result<std::optional<Heartbeat>> Store::GetHeartbeat() {
  Db& db = impl_->db;
  Heartbeat hb;
  std::string counters;
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT pid, started_at, updated_at, counters, last_error FROM heartbeat "
                   "WHERE id = 1");
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return std::optional<Heartbeat>();
    hb.pid = st->Int(0);
    hb.started_at = st->Text(1);
    hb.updated_at = st->Text(2);
    counters = st->Text(3);
    hb.last_error = st->Text(4);
  }
  TRIAGE_PREPARE(st, db, "SELECT key, value FROM json_each(?1)");
  st->Bind(1, counters);
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    hb.counters[st->Text(0)] = st->Int(1);
  }
  return std::optional<Heartbeat>(std::move(hb));
}

Status Store::CheckIntegrity() {
  Db& db = impl_->db;
  TRIAGE_PREPARE(st, db, "PRAGMA integrity_check");
  std::string problems;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    std::string line = st->Text(0);
    if (line == "ok") continue;
    if (!problems.empty()) problems += "; ";
    problems += line;
  }
  if (!problems.empty()) return Status::Corrupt(impl_->path + ": " + problems);
  return Status::Ok();
}

Result<int> Store::SchemaVersion() {
  auto v = impl_->db.QueryInt("PRAGMA user_version");
  if (!v.ok()) return v.status();
  return int(*v);
}

}  // namespace triage::store

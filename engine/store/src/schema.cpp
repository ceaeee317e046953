// The schema, as the list of migrations that build it: step N takes a database from version
// N-1 to N. docs/schema.md describes every table and column; a change to the schema is a new
// step here (never an edit of an old one), a new kSchemaVersion and a new section there.
#include "schema.h"

#include <string>

namespace triage::store::detail {

namespace {

// Version 1: incidents, hypotheses, evidence, source checkpoints, heartbeat.
constexpr const char* kToVersion1 = R"sql(
CREATE TABLE incidents (
  id          INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
  service     TEXT NOT NULL,
  host        TEXT NOT NULL,
  source      TEXT NOT NULL,
  first_line  INTEGER NOT NULL,
  last_line   INTEGER NOT NULL,
  started     TEXT,
  ended       TEXT,
  top_cause   TEXT NOT NULL,
  title       TEXT NOT NULL,
  first_seen  TEXT NOT NULL,
  last_seen   TEXT NOT NULL,
  occurrences INTEGER NOT NULL DEFAULT 1,
  status      TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'reopened'))
);
CREATE INDEX incidents_by_last_seen ON incidents(last_seen);
CREATE INDEX incidents_by_service ON incidents(service, last_seen);
CREATE TABLE hypotheses (
  id               INTEGER PRIMARY KEY,
  incident_id      INTEGER NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  cause            TEXT NOT NULL,
  rank             INTEGER,
  score            REAL NOT NULL,
  band             TEXT NOT NULL,
  title            TEXT NOT NULL,
  remedy           TEXT NOT NULL,
  captures         TEXT NOT NULL,
  fingerprint_keys TEXT NOT NULL,
  independent      INTEGER NOT NULL,
  explained_by     INTEGER REFERENCES hypotheses(id) ON DELETE CASCADE
);
CREATE INDEX hypotheses_by_incident ON hypotheses(incident_id);
CREATE INDEX hypotheses_by_cause ON hypotheses(cause, incident_id);
CREATE INDEX hypotheses_by_parent ON hypotheses(explained_by);
CREATE TABLE evidence (
  id          INTEGER PRIMARY KEY,
  incident_id INTEGER NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  occurrence  TEXT NOT NULL CHECK (occurrence IN ('first', 'latest')),
  cause       TEXT NOT NULL,
  symptom     TEXT,
  seq         INTEGER NOT NULL,
  source      TEXT NOT NULL,
  line        INTEGER NOT NULL,
  excerpt     TEXT NOT NULL
);
CREATE INDEX evidence_by_incident ON evidence(incident_id, occurrence);
CREATE TABLE source_checkpoints (
  path       TEXT PRIMARY KEY,
  inode      INTEGER NOT NULL,
  offset     INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE heartbeat (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  pid        INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  counters   TEXT NOT NULL,
  last_error TEXT NOT NULL
);)sql";

// Version 2: full-text search over evidence (FTS5, external content, kept by triggers), the
// verifications table, occurrences counted per day, the resolve note, and the verify requests
// of each hypothesis (for `triage verify ID`).
constexpr const char* kToVersion2 = R"sql(
ALTER TABLE incidents ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE incidents ADD COLUMN resolved_at TEXT;
ALTER TABLE hypotheses ADD COLUMN verify TEXT NOT NULL DEFAULT '[]';
CREATE TABLE occurrences (
  incident_id INTEGER NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  day         TEXT NOT NULL,
  count       INTEGER NOT NULL,
  PRIMARY KEY (incident_id, day)
) WITHOUT ROWID;
CREATE INDEX occurrences_by_day ON occurrences(day);
INSERT INTO occurrences (incident_id, day, count)
  SELECT id, substr(last_seen, 1, 10), occurrences FROM incidents;
CREATE TABLE verifications (
  id          INTEGER PRIMARY KEY,
  incident_id INTEGER NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  cause       TEXT NOT NULL,
  verifier    TEXT NOT NULL,
  verdict     TEXT NOT NULL CHECK (verdict IN ('confirmed', 'refuted', 'inconclusive', 'skipped')),
  reason      TEXT NOT NULL,
  facts       TEXT NOT NULL,
  host        TEXT NOT NULL,
  time        TEXT NOT NULL,
  ms          INTEGER NOT NULL,
  UNIQUE (incident_id, cause, verifier, host)
);
CREATE VIRTUAL TABLE evidence_fts USING fts5(excerpt, content='evidence', content_rowid='id');
CREATE TRIGGER evidence_fts_insert AFTER INSERT ON evidence BEGIN
  INSERT INTO evidence_fts (rowid, excerpt) VALUES (new.id, new.excerpt);
END;
CREATE TRIGGER evidence_fts_delete AFTER DELETE ON evidence BEGIN
  INSERT INTO evidence_fts (evidence_fts, rowid, excerpt) VALUES ('delete', old.id, old.excerpt);
END;
CREATE TRIGGER evidence_fts_update AFTER UPDATE OF excerpt ON evidence BEGIN
  INSERT INTO evidence_fts (evidence_fts, rowid, excerpt) VALUES ('delete', old.id, old.excerpt);
  INSERT INTO evidence_fts (rowid, excerpt) VALUES (new.id, new.excerpt);
END;
INSERT INTO evidence_fts (evidence_fts) VALUES ('rebuild');
)sql";

// Version 3: verdicts `not_reproduced` and `not_applicable` (DESIGN.md section 5). SQLite cannot
// change a CHECK constraint in place, so the verifications table is rebuilt with the wider one
// and its rows copied over; nothing references it, so dropping the old one cascades nowhere.
constexpr const char* kToVersion3 = R"sql(
CREATE TABLE verifications_v3 (
  id          INTEGER PRIMARY KEY,
  incident_id INTEGER NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  cause       TEXT NOT NULL,
  verifier    TEXT NOT NULL,
  verdict     TEXT NOT NULL CHECK (verdict IN ('confirmed', 'refuted', 'inconclusive', 'skipped',
                                               'not_reproduced', 'not_applicable')),
  reason      TEXT NOT NULL,
  facts       TEXT NOT NULL,
  host        TEXT NOT NULL,
  time        TEXT NOT NULL,
  ms          INTEGER NOT NULL,
  UNIQUE (incident_id, cause, verifier, host)
);
INSERT INTO verifications_v3 (id, incident_id, cause, verifier, verdict, reason, facts, host, time, ms)
  SELECT id, incident_id, cause, verifier, verdict, reason, facts, host, time, ms FROM verifications;
DROP TABLE verifications;
ALTER TABLE verifications_v3 RENAME TO verifications;
)sql";

// Version 4: source checkpoints keyed by the file's identity (dev, inode) rather than its path,
// with a fingerprint of its first bytes (docs/schema.md). Old rows keep their inode with dev 0
// and no fingerprint: the daemon matches those by inode alone, as before.
constexpr const char* kToVersion4 = R"sql(
CREATE TABLE source_checkpoints_v4 (
  dev        INTEGER NOT NULL,
  inode      INTEGER NOT NULL,
  path       TEXT NOT NULL,
  offset     INTEGER NOT NULL,
  head_len   INTEGER NOT NULL DEFAULT 0,
  head_hash  INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (dev, inode)
);
INSERT OR REPLACE INTO source_checkpoints_v4 (dev, inode, path, offset, updated_at)
  SELECT 0, inode, path, offset, updated_at FROM source_checkpoints ORDER BY updated_at;
DROP TABLE source_checkpoints;
ALTER TABLE source_checkpoints_v4 RENAME TO source_checkpoints;
)sql";

// Version 5: the Kubernetes pod an incident's log came from (its namespace, pod and container,
// as the log's path names them; empty for any other log).
constexpr const char* kToVersion5 = R"sql(
ALTER TABLE incidents ADD COLUMN pod_namespace TEXT NOT NULL DEFAULT '';
ALTER TABLE incidents ADD COLUMN pod TEXT NOT NULL DEFAULT '';
ALTER TABLE incidents ADD COLUMN container TEXT NOT NULL DEFAULT '';
)sql";

// Version 6: occurrences known by their content (docs/schema.md, "Occurrence identity"), so
// that reading again what is stored never counts again. An incident stored before has only its
// latest occurrence to go by; it gets the key of the rule version 5 applied (the same source,
// lines and log start time), which Record checks as well.
constexpr const char* kToVersion6 = R"sql(
CREATE TABLE occurrence_keys (
  incident_id INTEGER NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  key         TEXT NOT NULL,
  PRIMARY KEY (incident_id, key)
) WITHOUT ROWID;
INSERT INTO occurrence_keys (incident_id, key)
  SELECT id, 'v5|' || source || '|' || first_line || '|' || last_line || '|' || started
  FROM incidents WHERE started IS NOT NULL;
)sql";

// Version 7: the hosts an incident occurred on, with their counts, and its activity (every
// resolve with its note, every reopening), which a later resolve no longer overwrites. A file
// of version 6 knew only the latest host: every occurrence it counted goes to that host; its
// last resolve (or note) becomes the first entry of the activity.
constexpr const char* kToVersion7 = R"sql(
CREATE TABLE incident_hosts (
  incident_id INTEGER NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  host        TEXT NOT NULL,
  occurrences INTEGER NOT NULL,
  first_seen  TEXT NOT NULL,
  last_seen   TEXT NOT NULL,
  PRIMARY KEY (incident_id, host)
) WITHOUT ROWID;
INSERT INTO incident_hosts (incident_id, host, occurrences, first_seen, last_seen)
  SELECT id, host, occurrences, first_seen, last_seen FROM incidents;
CREATE TABLE activity (
  id          INTEGER PRIMARY KEY,
  incident_id INTEGER NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  time        TEXT NOT NULL,
  action      TEXT NOT NULL CHECK (action IN ('resolved', 'reopened')),
  note        TEXT NOT NULL
);
CREATE INDEX activity_by_incident ON activity(incident_id, id);
INSERT INTO activity (incident_id, time, action, note)
  SELECT id, coalesce(resolved_at, last_seen), 'resolved', note FROM incidents
  WHERE resolved_at IS NOT NULL OR note <> '';
)sql";

// Version 8: the daemon's name for the file a checkpoint's bytes came from, which an
// occurrence's key holds (docs/schema.md, "Occurrence identity"). Older rows have none (0): the
// daemon gives the file one when it reads it next.
constexpr const char* kToVersion8 = R"sql(
ALTER TABLE source_checkpoints ADD COLUMN file_id INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 9: the known bugs each cause fits (docs/known-bugs.md), the first one's id and status
// apart for the history's filter, and the versions the incident's log showed. Older rows fit
// none and showed none.
constexpr const char* kToVersion9 = R"sql(
ALTER TABLE hypotheses ADD COLUMN known_bugs TEXT NOT NULL DEFAULT '[]';
ALTER TABLE hypotheses ADD COLUMN known_bug TEXT NOT NULL DEFAULT '';
ALTER TABLE hypotheses ADD COLUMN known_bug_status TEXT NOT NULL DEFAULT '';
ALTER TABLE incidents ADD COLUMN versions TEXT NOT NULL DEFAULT '[]';
CREATE INDEX hypotheses_by_known_bug ON hypotheses(known_bug) WHERE known_bug <> '';
)sql";

// Version 10: a job's processes (core::Incident::actors, the first failing one first) and its
// timeline, a process an object (core::Incident::ranks), of the latest occurrence, as JSON
// arrays. Older rows named none.
constexpr const char* kToVersion10 = R"sql(
ALTER TABLE incidents ADD COLUMN actors TEXT NOT NULL DEFAULT '[]';
ALTER TABLE incidents ADD COLUMN ranks TEXT NOT NULL DEFAULT '[]';
)sql";

// Version 11: the job an incident is a failure of (core::Incident::job), and for each job the
// incident its failure is filed under, which the parts of it that arrive later or from another
// host join (docs/schema.md, "Jobs"). Its row is locked while a part is filed; incident_id is
// NULL only inside the transaction that files the job's first part. Older rows name no job.
constexpr const char* kToVersion11 = R"sql(
ALTER TABLE incidents ADD COLUMN job TEXT NOT NULL DEFAULT '';
CREATE TABLE job_incidents (
  job         TEXT NOT NULL PRIMARY KEY,
  incident_id BIGINT REFERENCES incidents(id) ON DELETE SET NULL
);
)sql";

constexpr const char* kSteps[] = {kToVersion1, kToVersion2, kToVersion3, kToVersion4,
                                  kToVersion5, kToVersion6, kToVersion7, kToVersion8,
                                  kToVersion9, kToVersion10, kToVersion11};
static_assert(sizeof(kSteps) / sizeof(kSteps[0]) == kSchemaVersion);

// PostgreSQL: the schema as this triage writes it, created whole on an empty database at
// kPostgresBaseline (the SQLite schema's version when PostgreSQL came: the same tables and
// columns, in PostgreSQL's types). A later change is a step for each back end.
constexpr int kPostgresBaseline = 7;
constexpr const char* kPostgresToVersion7 = R"sql(
CREATE TABLE incidents (
  id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  fingerprint   TEXT NOT NULL UNIQUE,
  service       TEXT NOT NULL,
  host          TEXT NOT NULL,
  source        TEXT NOT NULL,
  first_line    BIGINT NOT NULL,
  last_line     BIGINT NOT NULL,
  started       TEXT,
  ended         TEXT,
  top_cause     TEXT NOT NULL,
  title         TEXT NOT NULL,
  first_seen    TEXT NOT NULL,
  last_seen     TEXT NOT NULL,
  occurrences   BIGINT NOT NULL DEFAULT 1,
  status        TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'reopened')),
  note          TEXT NOT NULL DEFAULT '',
  resolved_at   TEXT,
  pod_namespace TEXT NOT NULL DEFAULT '',
  pod           TEXT NOT NULL DEFAULT '',
  container     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX incidents_by_last_seen ON incidents(last_seen);
CREATE INDEX incidents_by_service ON incidents(service, last_seen);
CREATE TABLE hypotheses (
  id               BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  incident_id      BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  cause            TEXT NOT NULL,
  rank             BIGINT,
  score            DOUBLE PRECISION NOT NULL,
  band             TEXT NOT NULL,
  title            TEXT NOT NULL,
  remedy           TEXT NOT NULL,
  captures         TEXT NOT NULL,
  fingerprint_keys TEXT NOT NULL,
  independent      BIGINT NOT NULL,
  explained_by     BIGINT REFERENCES hypotheses(id) ON DELETE CASCADE,
  verify           TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX hypotheses_by_incident ON hypotheses(incident_id);
CREATE INDEX hypotheses_by_cause ON hypotheses(cause, incident_id);
CREATE INDEX hypotheses_by_parent ON hypotheses(explained_by);
CREATE TABLE evidence (
  id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  occurrence  TEXT NOT NULL CHECK (occurrence IN ('first', 'latest')),
  cause       TEXT NOT NULL,
  symptom     TEXT,
  seq         BIGINT NOT NULL,
  source      TEXT NOT NULL,
  line        BIGINT NOT NULL,
  excerpt     TEXT NOT NULL
);
CREATE INDEX evidence_by_incident ON evidence(incident_id, occurrence);
CREATE TABLE occurrences (
  incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  day         TEXT NOT NULL,
  count       BIGINT NOT NULL,
  PRIMARY KEY (incident_id, day)
);
CREATE INDEX occurrences_by_day ON occurrences(day);
CREATE TABLE verifications (
  id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  cause       TEXT NOT NULL,
  verifier    TEXT NOT NULL,
  verdict     TEXT NOT NULL CHECK (verdict IN ('confirmed', 'refuted', 'inconclusive', 'skipped',
                                               'not_reproduced', 'not_applicable')),
  reason      TEXT NOT NULL,
  facts       TEXT NOT NULL,
  host        TEXT NOT NULL,
  time        TEXT NOT NULL,
  ms          BIGINT NOT NULL,
  UNIQUE (incident_id, cause, verifier, host)
);
CREATE TABLE source_checkpoints (
  host       TEXT NOT NULL,
  dev        BIGINT NOT NULL,
  inode      BIGINT NOT NULL,
  path       TEXT NOT NULL,
  "offset"   BIGINT NOT NULL,
  head_len   BIGINT NOT NULL DEFAULT 0,
  head_hash  BIGINT NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (host, dev, inode)
);
CREATE TABLE heartbeat (
  host       TEXT PRIMARY KEY,
  pid        BIGINT NOT NULL,
  started_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  counters   TEXT NOT NULL,
  last_error TEXT NOT NULL
);
CREATE TABLE occurrence_keys (
  incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  key         TEXT NOT NULL,
  PRIMARY KEY (incident_id, key)
);
CREATE TABLE incident_hosts (
  incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  host        TEXT NOT NULL,
  occurrences BIGINT NOT NULL,
  first_seen  TEXT NOT NULL,
  last_seen   TEXT NOT NULL,
  PRIMARY KEY (incident_id, host)
);
CREATE TABLE activity (
  id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  time        TEXT NOT NULL,
  action      TEXT NOT NULL CHECK (action IN ('resolved', 'reopened')),
  note        TEXT NOT NULL
);
CREATE INDEX activity_by_incident ON activity(incident_id, id);
)sql";

// Version 8, as SQLite's.
constexpr const char* kPostgresToVersion8 = R"sql(
ALTER TABLE source_checkpoints ADD COLUMN file_id BIGINT NOT NULL DEFAULT 0;
)sql";

// PostgreSQL's steps: kPostgresSteps[i] takes version kPostgresBaseline + i - 1 (the baseline's
// step: an empty database) to kPostgresBaseline + i.
// Version 9, as SQLite's.
constexpr const char* kPostgresToVersion9 = kToVersion9;

// Version 10, as SQLite's.
constexpr const char* kPostgresToVersion10 = kToVersion10;

// Version 11, as SQLite's.
constexpr const char* kPostgresToVersion11 = kToVersion11;

constexpr const char* kPostgresSteps[] = {kPostgresToVersion7, kPostgresToVersion8,
                                          kPostgresToVersion9, kPostgresToVersion10,
                                          kPostgresToVersion11};
static_assert(kPostgresBaseline - 1 + sizeof(kPostgresSteps) / sizeof(kPostgresSteps[0]) ==
              kSchemaVersion);

// The one lock migrations take on PostgreSQL (writers take another, sql.h): two processes that
// open a new database at once create the schema once.
constexpr const char* kPostgresMigrationLock = "SELECT pg_advisory_xact_lock(7526769026352742)";

Status MigratePostgres(Db& db) {
  auto txn = Transaction::Begin(db, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status().Annotate("migrating the schema");
  Status s = db.Exec(kPostgresMigrationLock, "migrating the schema");
  if (!s.ok()) return s;
  auto has_table = [&](const char* name) -> Result<bool> {
    auto st = db.Prepare(
        "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = "
        "current_schema() AND tablename = ?1");
    if (!st.ok()) return st.status();
    StmtUse use(**st);
    use->Bind(1, name);
    auto row = use->Step();
    if (!row.ok()) return row.status();
    return *row && use->Int(0) > 0;
  };
  auto versioned = has_table("triage_schema");
  if (!versioned.ok()) return versioned.status();
  int64_t version = 0;
  if (*versioned) {
    auto v = db.QueryInt("SELECT coalesce(max(version), 0) FROM triage_schema");
    if (!v.ok()) return v.status();
    version = *v;
  } else {
    auto foreign = has_table("incidents");
    if (!foreign.ok()) return foreign.status();
    if (*foreign) {
      return Status::Corrupt(
          "not a triage database (it has an incidents table but no triage "
          "schema version)");
    }
  }
  if (version == kSchemaVersion) return (*txn)->Commit();
  if (version > kSchemaVersion) {
    return Status::Corrupt("schema version " + std::to_string(version) +
                           " is newer than this triage (" + std::to_string(kSchemaVersion) +
                           "); upgrade triage");
  }
  if (version == 0) {
    s = db.Exec("CREATE TABLE triage_schema (version BIGINT NOT NULL)", "migrating the schema");
    if (!s.ok()) return s;
    s = db.Exec("INSERT INTO triage_schema (version) VALUES (0)", "migrating the schema");
    if (!s.ok()) return s;
    version = kPostgresBaseline - 1;
  }
  const int64_t steps = int64_t(sizeof(kPostgresSteps) / sizeof(kPostgresSteps[0]));
  for (int64_t v = version; v < kSchemaVersion; ++v) {
    const int64_t step = v - (kPostgresBaseline - 1);
    if (step < 0 || step >= steps) {
      return Status::Corrupt("schema version " + std::to_string(v) +
                             " has no PostgreSQL migration");
    }
    s = db.Exec(kPostgresSteps[step], "migrating the schema to version " + std::to_string(v + 1));
    if (!s.ok()) return s;
  }
  auto st = db.Prepare("UPDATE triage_schema SET version = ?1");
  if (!st.ok()) return st.status();
  StmtUse use(**st);
  use->Bind(1, int64_t(kSchemaVersion));
  s = use->Run();
  if (!s.ok()) return s;
  return (*txn)->Commit();
}

}  // namespace

Result<int64_t> StoredSchemaVersion(Db& db) {
  if (db.dialect() == Dialect::kPostgres) {
    return db.QueryInt("SELECT coalesce(max(version), 0) FROM triage_schema");
  }
  return db.QueryInt("PRAGMA user_version");
}

Status Migrate(Db& db) {
  if (db.dialect() == Dialect::kPostgres) return MigratePostgres(db);
  auto version = db.QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.status();
  if (*version == kSchemaVersion) return Status::Ok();
  if (*version > kSchemaVersion) {
    return Status::Corrupt("schema version " + std::to_string(*version) +
                           " is newer than this triage (" + std::to_string(kSchemaVersion) +
                           "); upgrade triage");
  }
  auto txn = Transaction::Begin(db, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status().Annotate("migrating the schema");
  // Another process may have migrated while this one waited for the lock.
  version = db.QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.status();
  if (*version == kSchemaVersion) return (*txn)->Commit();
  if (*version == 0) {
    auto tables = db.QueryInt("SELECT count(*) FROM sqlite_schema");
    if (!tables.ok()) return tables.status();
    if (*tables != 0) {
      return Status::Corrupt("not a triage database (it has tables but no triage schema version)");
    }
  }
  for (int64_t v = *version; v < kSchemaVersion; ++v) {
    Status s = db.Exec(kSteps[v], "migrating the schema to version " + std::to_string(v + 1));
    if (!s.ok()) return s;
  }
  // PRAGMA takes no parameters; the value is a compile-time constant, not input.
  Status s = db.Exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str(),
                     "migrating the schema");
  if (!s.ok()) return s;
  return (*txn)->Commit();
}

}  // namespace triage::store::detail

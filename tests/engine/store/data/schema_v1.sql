-- triage store, schema version 1, exactly as that version created it (kept frozen for the
-- migration test; the code's copy is the step 0 -> 1 in engine/store/src/schema.cpp).
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
);
PRAGMA user_version = 1;

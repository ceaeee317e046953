-- triage store, the step from schema version 1 to 2, exactly as that version ran it (kept
-- frozen for the migration test; the code's copy is the step 1 -> 2 in engine/store/src/schema.cpp).
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
PRAGMA user_version = 2;

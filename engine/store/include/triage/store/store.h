// The incident store: one database that the daemon and `triage analyze` write and that people
// query while they run. SQLite, one file per host, is the default; a PostgreSQL database
// (`postgresql://...`) is shared by the daemons of many hosts (docs/schema.md is the contract
// for both).
//
// What it does
//   - Record() files incidents by fingerprint: the same root causes with the same defining
//     captures on the same service are one incident whose occurrence count and last-seen time
//     grow; a resolved incident that recurs reopens. Evidence kept per incident is bounded: the
//     first occurrence's and the latest occurrence's only, so a crash loop cannot fill the disk.
//   - Every write is one transaction (a batch of incidents and the source checkpoints that
//     produced them commit together or not at all). Readers never block the writer (WAL).
//   - Queries: History, GetIncident (the complete incident, same shape as `analyze`'s), Search
//     (full text over evidence; any user text is accepted and taken literally), Stats, Resolve,
//     Export (JSON lines), verifications, source checkpoints, the daemon's heartbeat.
//
// Ownership and threads
//   A Store owns one connection (SQLite or PostgreSQL). It is movable, not copyable, and not
//   thread-safe: use one Store per thread (several Stores, in one process or many, may share a
//   file).
//
// Errors
//   Every call returns a Status or a Result: Busy when another process held the database longer
//   than the busy timeout, Io for the file system ("disk full", "file too large", permissions),
//   Corrupt when the file is not a triage database or is damaged, NotFound for an unknown
//   incident id, InvalidInput for an argument that cannot be stored. Nothing is printed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triage/core/incident.h"
#include "triage/status.h"

namespace triage::store {

// The schema version this build writes (PRAGMA user_version). Older files are migrated on open.
inline constexpr int kSchemaVersion = 11;

// Where a tailed source had been read up to (for the daemon's resume after restart). A
// checkpoint is keyed by the file's identity (dev, inode), not its path: a file keeps it through
// renames. `head_len`/`head_hash` fingerprint the file's first bytes when it was written, which
// tell a copy of it (another inode, the same first bytes) and a new file given a reused inode.
// `file_id` is the daemon's name for the content it read (core::Incident::file_id): kept through
// renames and restarts, taken over by a copytruncate copy, new for a new or truncated file.
struct SourceCheckpoint {
  std::string path;  // its path when written (for people; not a key)
  uint64_t inode = 0;
  uint64_t offset = 0;
  std::string updated_at;  // set by the store when written (UTC, ISO 8601)
  uint64_t dev = 0;
  uint64_t head_len = 0;   // how many first bytes head_hash covers (0: none)
  uint64_t head_hash = 0;  // FNV-1a 64 of those bytes
  uint64_t file_id = 0;    // 0: none given (a checkpoint written before schema 8)
  bool forget = false;     // written by Record/PutCheckpoints: delete the row instead
};

// The daemon's liveness record: one per database.
struct Heartbeat {
  int64_t pid = 0;
  std::string started_at;  // ISO 8601 UTC
  std::string updated_at;  // set by the store when written
  std::map<std::string, int64_t> counters;  // "lines", "events", "incidents", ...
  std::string last_error;                   // empty when none
};

// One row of `triage history`.
struct IncidentSummary {
  int64_t id = 0;
  std::string fingerprint;
  std::string service;
  std::string host;
  std::string top_cause;  // the rank-1 root cause of the latest occurrence
  std::string title;      // its title
  int64_t occurrences = 0;
  std::string first_seen;  // ISO 8601: the log's own time when it had one, else time of reading
  std::string last_seen;
  std::string status;  // "open", "resolved", "reopened"
  std::string note;    // the latest note given to `resolve`, empty when none
  int64_t hosts = 0;   // distinct hosts it occurred on
};

// One host an incident occurred on.
struct HostOccurrences {
  std::string host;
  int64_t occurrences = 0;
  std::string first_seen;
  std::string last_seen;
};

// One entry of an incident's activity: resolved (with its note, maybe empty) or reopened.
struct Activity {
  std::string time;    // UTC, when it was written
  std::string action;  // "resolved", "reopened"
  std::string note;
};

// An incident as stored: the analyze-shaped incident plus its history.
struct StoredIncident {
  IncidentSummary summary;
  // Complete: every root cause with its evidence (the first occurrence's, then the latest
  // occurrence's), symptoms and verifications. `incident.id` is set.
  core::Incident incident;
  std::vector<HostOccurrences> hosts;  // most occurrences first
  std::vector<Activity> activity;      // oldest first
};

struct HistoryFilter {
  std::optional<std::string> since;    // ISO 8601; incidents last seen at or after it
  std::optional<std::string> until;    // ISO 8601; incidents first seen at or before it
  std::optional<std::string> service;  // exact service name
  std::optional<std::string> cause;    // a root cause id, or a prefix of ids ("cuda" -> cuda.*)
  std::optional<std::string> status;   // "open", "resolved" or "reopened"
  // Incidents a root cause of which fits a known bug: "any", "fixed" (seen on a release at or
  // past the bug's fix: a regression or another cause), or one bug's id ("vllm#8735").
  std::optional<std::string> known_bug;
  int64_t limit = 50;                  // <= 0: no limit
};

// One evidence line matching a search, newest first.
struct SearchHit {
  int64_t incident_id = 0;
  std::string service;
  std::string cause;  // the root cause the line is evidence for
  std::string status;
  std::string last_seen;
  std::string source;
  uint64_t line = 0;
  std::string excerpt;
};

struct StatsRow {
  std::string key;          // a cause id, a service name or a day (YYYY-MM-DD)
  int64_t incidents = 0;    // distinct incidents
  int64_t occurrences = 0;  // their occurrences
};

struct Stats {
  int64_t incidents = 0;
  int64_t occurrences = 0;
  int64_t open = 0;  // open or reopened
  int64_t hosts = 0;                 // distinct hosts incidents occurred on
  std::vector<StatsRow> by_cause;    // root causes (an incident counts under each of its causes)
  std::vector<StatsRow> by_service;
  std::vector<StatsRow> by_day;      // the day an occurrence was seen
  std::vector<StatsRow> by_host;     // the hosts (an incident counts under each of its hosts)
  // The known bugs root causes fit (key: "vllm#8735"), and apart those seen on a release at or
  // past their fix.
  std::vector<StatsRow> by_known_bug;
  std::vector<StatsRow> known_bug_after_fix;
};

// One incident's occurrences on one day (the store counts occurrences per day, not finer).
struct DayCount {
  int64_t incident_id = 0;
  std::string day;  // YYYY-MM-DD
  int64_t count = 0;
};

struct StoreOptions {
  // How long a call waits for a lock held by another connection before it answers Busy. Long
  // enough for a writer on a loaded host (two cores shared with a build: five seconds were seen
  // to run out while another analyze held the lock).
  int busy_timeout_ms = 30000;
  // Create the file (and its parent folders, user-only) when it does not exist.
  bool create = true;
  // Only read through this connection (history, show, search, stats, export, status): the
  // file is opened read-only, so a file without write permission or on a read-only mount can be
  // read. Where even the locking files cannot be made (a read-only mount), it is opened
  // immutable: what a writer still holds in its -wal file is then not seen. A file missing is
  // still created when `create` is set (an empty store reads as empty); a file of an older
  // schema is refused (migrating it needs a write). Writing through such a Store fails.
  bool read_only = false;
  // A cap on the database file's size (0: none). A write that would pass it fails with
  // Io "disk full" and is rolled back, like a full disk.
  int64_t max_size_bytes = 0;
  // A PostgreSQL store: how long a call waits for the server's answer before it gives the
  // connection up and answers Unavailable (0: the statement timeout, 60 s, and 5 s more). A
  // server that accepts and never answers, or one that is stopped, holds a call no longer.
  int answer_timeout_ms = 0;
};

// What one Record() did, for the caller's counters.
struct RecordOutcome {
  int64_t new_incidents = 0;
  int64_t recurrences = 0;  // incidents that matched a stored fingerprint
  int64_t reopened = 0;     // of those, ones that were resolved
  int64_t evidence_rows = 0;
  int64_t joined = 0;  // incidents of a job joined into the job's stored incident
  // Per incident of the batch, in order: how it was filed. kReadAgain: the same occurrence
  // again; kJoined: another process's (or host's) part of a job's failure already stored, joined
  // into its incident (core::JoinJobIncident).
  enum class Filed { kNew, kRecurrence, kReadAgain, kJoined };
  std::vector<Filed> filed;
};

class Store {
 public:
  // Opens (creating when allowed) the database at `path`: parent folders 0700, file 0600, WAL,
  // busy timeout, foreign keys; migrates an older schema to kSchemaVersion. A file written by a
  // newer triage is refused (Corrupt, "schema version N is newer than this triage").
  // `path` may instead be a PostgreSQL URL ("postgresql://..." or "postgres://...", libpq's
  // URI form): libpq.so.5 is loaded then (Unavailable, naming the package libpq5, when it is
  // absent; Unavailable too when the server cannot be reached), the schema created or migrated
  // in one transaction. path() is then the URL without its password.
  static Result<Store> Open(const std::string& path, const StoreOptions& options = {});

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  const std::string& path() const;
  // A PostgreSQL store opens a new connection to its server (after Unavailable: a restart of
  // the server, a connection given up) and uses it from now on; the old one is closed. Ok and
  // nothing done for a file. On failure (Unavailable while the server is still unreachable)
  // the Store keeps its old connection, whose calls go on failing.
  Status Reconnect();

  // Files `incidents` in one transaction, with `checkpoints` (when given) written in the same
  // transaction. Sets each incident's `id` (and its `fingerprint` when it was empty). An
  // incident without root causes is InvalidInput and nothing is written. On error nothing of the
  // batch is kept and the ids are left unset. `incidents` may be empty: then only the
  // checkpoints are written (a source read up to a point without a failure in it).
  Result<RecordOutcome> Record(std::vector<core::Incident>& incidents,
                               const std::vector<SourceCheckpoint>* checkpoints = nullptr);

  // Newest first (by last seen).
  Result<std::vector<IncidentSummary>> History(const HistoryFilter& filter);
  // The whole incident, read in one snapshot. NotFound for an unknown id.
  Result<StoredIncident> GetIncident(int64_t id);
  // Full-text search over evidence. `text` is taken literally: each word is quoted, so FTS5
  // operators, quotes and brackets are searched for, not obeyed; all words must occur.
  Result<std::vector<SearchHit>> Search(std::string_view text, int64_t limit = 50);
  Result<Stats> GetStats();
  // Marks an incident resolved; it reopens when it recurs. The note (may be empty) is added to
  // its activity; an empty note leaves the incident's latest note as it was.
  Status Resolve(int64_t id, const std::string& note);
  // Streams incidents last seen at or after `since` (all when empty), oldest first, one JSON
  // object per call of `line` (StoredIncidentJson). Stops at the first non-ok Status `line`
  // returns and returns it. Read in one snapshot.
  Status Export(const std::optional<std::string>& since,
                const std::function<Status(std::string_view line)>& line);
  // The same, only incidents first seen at or before `until` (when given) too.
  Status Export(const std::optional<std::string>& since, const std::optional<std::string>& until,
                const std::function<Status(std::string_view line)>& line);
  // `export --after-cursor`: the incidents stored after the one whose id is `after_id` (0: from
  // the first), in the order they were stored (by id), the time bounds as above. Each line's
  // "cursor" is where a next call continues from.
  Status ExportAfter(int64_t after_id, const std::optional<std::string>& since,
                     const std::optional<std::string>& until,
                     const std::function<Status(std::string_view line)>& line);

  // Every incident's occurrences per day, the days at or after `since_day` ("YYYY-MM-DD"; all
  // when empty), by day then incident: counts over time (`triage serve`).
  Result<std::vector<DayCount>> OccurrencesByDay(const std::string& since_day);

  // Adds verdicts for `cause` (a root cause id) of incident `id`. The latest verdict per
  // (cause, verifier, host) is kept. NotFound when the incident or cause is unknown.
  Status AddVerifications(int64_t id, const std::string& cause,
                          const std::vector<core::Verification>& verifications);

  // The most recent checkpoint written under `path` (its path when written), if any.
  Result<std::optional<SourceCheckpoint>> GetCheckpoint(const std::string& path);
  Result<std::vector<SourceCheckpoint>> ListCheckpoints();
  Status PutCheckpoints(const std::vector<SourceCheckpoint>& checkpoints);

  Status PutHeartbeat(const Heartbeat& heartbeat);
  Result<std::optional<Heartbeat>> GetHeartbeat();

  // PRAGMA integrity_check: ok, or Corrupt with what SQLite found.
  Status CheckIntegrity();
  // The file's schema version (PRAGMA user_version).
  Result<int> SchemaVersion();

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A stored incident as one JSON object: the object of `analyze --json` (core::WriteIncidentJson)
// followed by "fingerprint", "occurrences", "first_seen", "last_seen", "status", "note", "hosts"
// (how many), "per_host" ([{host, occurrences, first_seen, last_seen}]) and "activity"
// ([{time, action, note}]).
std::string StoredIncidentJson(const StoredIncident& stored);

// A point in time as --since and --until take it, in the forms of systemd.time(7): "2d", "12h",
// "30m", "45s", "1w" before `now` (UTC, seconds since the epoch), also written "-2h" or
// "2h ago"; "now", "today", "yesterday", "tomorrow" (midnight, UTC); or an ISO 8601 date or
// time ("2026-11-02", "2026-11-02T09:00:00", a space for the T, seconds optional, a zone
// applied: "2026-12-01T19:23:24+05:00"). The result is the normalized "YYYY-MM-DDTHH:MM:SS"
// (UTC) that stored times are compared with. Anything else is InvalidInput.
Result<std::string> ParseSince(std::string_view text, int64_t now);

// `time` normalized to "YYYY-MM-DDTHH:MM:SS" in UTC when it starts with an ISO 8601 date and
// time (a zone that follows it applied, a fraction dropped; without a zone it is taken as UTC),
// else nullopt.
std::optional<std::string> NormalizeTime(std::string_view time);

// True when `target` (a --db value) names a PostgreSQL server ("postgresql://", "postgres://")
// rather than a file.
bool IsServerUrl(const std::string& target);

// Current UTC time as "YYYY-MM-DDTHH:MM:SS".
std::string NowUtc();

}  // namespace triage::store

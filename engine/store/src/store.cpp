#include "triage/store/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <tuple>

#include "triage/core/host.h"
#include "postgres.h"
#include "schema.h"
#include "sqlite.h"
#include "store_impl.h"
#include "triage/json.h"

namespace triage::store {

using detail::Db;
using detail::Dialect;
using detail::Stmt;
using detail::StmtUse;
using detail::Transaction;

namespace {

// Bounds on what one occurrence may add, so that no log, however crafted, makes the database
// grow faster than a small multiple of what it stores (docs/schema.md, "Bounds"). Text cut is
// marked with "…"; lines and causes left out are said in a line of their own.
constexpr size_t kMaxNameBytes = 256;             // service, host, cause ids, capture keys, pod
constexpr size_t kMaxPathBytes = 4096;            // source paths
constexpr size_t kMaxTitleBytes = 512;            // titles
constexpr size_t kMaxRemedyBytes = 4096;          // remedies
constexpr size_t kMaxCaptureBytes = 512;          // one capture's value, one verify argument
constexpr size_t kMaxCaptures = 32;               // captures (and verify arguments) per cause
constexpr size_t kMaxFingerprintBytes = 512;      // longer ones keep a hash of the whole
constexpr size_t kMaxTimeBytes = 64;              // started, ended as the log wrote them
constexpr size_t kMaxCauses = 16;                 // root causes per incident
constexpr size_t kMaxSymptoms = 16;               // symptoms per root cause
constexpr size_t kMaxActors = 1024;               // a job's processes (actors, ranks)
constexpr size_t kMaxEvidencePerCause = 200;      // lines per cause or symptom
constexpr size_t kMaxExcerptBytes = 4096;         // one evidence line
constexpr size_t kMaxWordBytes = 256;             // one word (a run without spaces) of a line
constexpr size_t kMaxEvidenceBytes = 256 * 1024;  // all evidence lines of one occurrence
constexpr size_t kMaxReasonBytes = 1024;          // a verification's reason
constexpr size_t kMaxFactsBytes = 16 * 1024;      // a verification's facts (JSON)
constexpr size_t kMaxNoteBytes = 4096;            // a resolve note
constexpr size_t kMaxVerifications = 32;          // verdicts per cause and occurrence

#define TRIAGE_TRY(expr)                   \
  do {                                     \
    Status triage_s_ = (expr);             \
    if (!triage_s_.ok()) return triage_s_; \
  } while (0)

// Prepares (or fetches from the cache) and binds nothing yet.
#define TRIAGE_PREPARE(var, db, sql)          \
  auto var##_r = (db).Prepare(sql);           \
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

// FNV-1a 64 over a sequence of parts, each followed by its length (so that ("ab", "c") and
// ("a", "bc") differ).
class Fnv64 {
 public:
  Fnv64& Add(std::string_view part) {
    for (unsigned char c : part) Mix(c);
    const uint64_t n = part.size();
    for (int i = 0; i < 8; ++i) Mix(static_cast<unsigned char>(n >> (8 * i)));
    return *this;
  }
  Fnv64& Add(uint64_t v) { return Add(std::to_string(v)); }
  std::string Hex() const {
    static const char kDigits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 0; i < 16; ++i) out[15 - i] = kDigits[(h_ >> (4 * i)) & 0xF];
    return out;
  }

 private:
  void Mix(unsigned char c) {
    h_ ^= c;
    h_ *= 0x100000001b3ULL;
  }
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

// `s` in at most `max` bytes: when longer, cut and ended with "…" (3 bytes, counted).
std::string Truncated(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max >= 3 ? max - 3 : 0;
  // Back up to a UTF-8 boundary so the excerpt stays valid text.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "…";
}

// `line` with every word (run of non-space bytes) longer than kMaxWordBytes cut, marked: a
// line of one endless word says what it is in a few hundred bytes, and the full-text index
// (which keeps every word whole) stays small.
std::string CutLongWords(const std::string& line) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    size_t end = i;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end - i > kMaxWordBytes) {
      out += Truncated(line.substr(i, end - i), kMaxWordBytes);
    } else {
      out.append(line, i, end - i);
    }
    while (end < line.size() && (line[end] == ' ' || line[end] == '\t')) out += line[end++];
    i = end;
  }
  return out;
}

void Cut(std::string& s, size_t max) {
  if (s.size() > max) s = Truncated(s, max);
}

void Cut(std::optional<std::string>& s, size_t max) {
  if (s) Cut(*s, max);
}

// `fp` when short enough; else its start, "…" and a hash of the whole, so that two long
// fingerprints stay two incidents.
std::string BoundedFingerprint(const std::string& fp) {
  if (fp.size() <= kMaxFingerprintBytes) return fp;
  return Truncated(fp, kMaxFingerprintBytes - 24) + "#" + Fnv64().Add(fp).Hex();
}

void BoundMap(std::map<std::string, std::string>& m) {
  std::map<std::string, std::string> out;
  for (auto& [k, v] : m) {
    if (out.size() == kMaxCaptures) break;
    std::string key = k, value = v;
    Cut(key, kMaxNameBytes);
    Cut(value, kMaxCaptureBytes);
    out.emplace(std::move(key), std::move(value));
  }
  m = std::move(out);
}

// Keeps at most kMaxEvidencePerCause lines, each cut to kMaxExcerptBytes, within what is left
// of the occurrence's `budget`; when lines are left out, the last kept says how many.
void BoundEvidence(std::vector<core::Evidence>& evidence, size_t& budget) {
  const size_t total = evidence.size();
  size_t kept = 0;
  for (; kept < total && kept < kMaxEvidencePerCause; ++kept) {
    auto& e = evidence[kept];
    Cut(e.source, kMaxPathBytes);
    Cut(e.text, kMaxExcerptBytes);
    e.text = CutLongWords(e.text);
    const size_t cost = e.text.size() + e.source.size();
    if (cost > budget) break;
    budget -= cost;
  }
  if (kept == total) return;
  const core::Evidence first_left = evidence[kept];
  evidence.resize(kept);
  evidence.push_back({first_left.source, first_left.line,
                      "… " + std::to_string(total - kept) + " more lines not stored"});
}

// The incident as the store keeps it: every text and list within the bounds above.
core::Incident Bounded(const core::Incident& in) {
  core::Incident inc = in;
  Cut(inc.service, kMaxNameBytes);
  Cut(inc.host, kMaxNameBytes);
  Cut(inc.source, kMaxPathBytes);
  Cut(inc.started, kMaxTimeBytes);
  Cut(inc.ended, kMaxTimeBytes);
  Cut(inc.pod.pod_namespace, kMaxNameBytes);
  Cut(inc.pod.pod, kMaxNameBytes);
  Cut(inc.pod.container, kMaxNameBytes);
  if (inc.actors.size() > kMaxActors) inc.actors.resize(kMaxActors);
  for (auto& a : inc.actors) Cut(a, kMaxNameBytes);
  if (inc.ranks.size() > kMaxActors) inc.ranks.resize(kMaxActors);
  Cut(inc.job, kMaxPathBytes);
  for (auto& r : inc.ranks) {
    Cut(r.actor, kMaxNameBytes);
    Cut(r.state, kMaxNameBytes);
    Cut(r.first_failure, kMaxTimeBytes);
    Cut(r.cause, kMaxNameBytes);
    Cut(r.detail, kMaxTitleBytes);
  }
  if (inc.causes.size() > kMaxCauses) inc.causes.resize(kMaxCauses);
  size_t budget = kMaxEvidenceBytes;
  for (auto& c : inc.causes) {
    Cut(c.cause, kMaxNameBytes);
    Cut(c.band, kMaxNameBytes);
    Cut(c.title, kMaxTitleBytes);
    Cut(c.remedy, kMaxRemedyBytes);
    BoundMap(c.captures);
    if (c.fingerprint_keys.size() > kMaxCaptures) c.fingerprint_keys.resize(kMaxCaptures);
    for (auto& k : c.fingerprint_keys) Cut(k, kMaxNameBytes);
    if (c.verify.size() > kMaxCaptures) c.verify.resize(kMaxCaptures);
    for (auto& r : c.verify) {
      Cut(r.verifier, kMaxNameBytes);
      BoundMap(r.args);
    }
    if (c.verifications.size() > kMaxVerifications) c.verifications.resize(kMaxVerifications);
    BoundEvidence(c.evidence, budget);
    if (c.symptoms.size() > kMaxSymptoms) c.symptoms.resize(kMaxSymptoms);
    for (auto& sy : c.symptoms) {
      Cut(sy.cause, kMaxNameBytes);
      Cut(sy.title, kMaxTitleBytes);
      BoundEvidence(sy.evidence, budget);
    }
  }
  return inc;
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

std::string KnownBugsJson(const std::vector<core::KnownBugMatch>& bugs) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& b : bugs) {
    w.BeginObject().Key("id").String(b.id).Key("status").String(b.status);
    w.Key("affected").String(b.affected);
    w.Key("package").String(b.package).Key("version").String(b.version);
    w.Key("version_from").String(b.version_from).Key("fixed_in").String(b.fixed_in);
    w.Key("fixed_commit").String(b.fixed_commit).Key("issue").String(b.issue);
    w.Key("pr").String(b.pr).Key("summary").String(b.summary);
    w.Key("workaround").String(b.workaround).EndObject();
  }
  w.EndArray();
  return w.Take();
}

std::string VersionsJson(const std::vector<core::PackageVersion>& versions) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& v : versions) {
    w.BeginObject().Key("package").String(v.package).Key("version").String(v.version);
    w.Key("from").String(v.from).Key("source").String(v.source);
    w.Key("line").String(std::to_string(v.line)).EndObject();
  }
  w.EndArray();
  return w.Take();
}

std::string ActorsJson(const std::vector<std::string>& actors) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& a : actors) w.String(a);
  w.EndArray();
  return w.Take();
}

// A job's timeline (core::Incident::ranks); an unknown time or offset is left out.
std::string RanksJson(const std::vector<core::RankState>& ranks) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& r : ranks) {
    w.BeginObject().Key("actor").String(r.actor).Key("state").String(r.state);
    if (r.first_failure) w.Key("first_failure").String(*r.first_failure);
    if (r.offset_seconds) w.Key("offset_seconds").Double(*r.offset_seconds);
    w.Key("cause").String(r.cause).Key("detail").String(r.detail);
    if (!r.host.empty()) w.Key("host").String(r.host);
    w.EndObject();
  }
  w.EndArray();
  return w.Take();
}

// The statement of `db`'s dialect, where the two differ.
const char* ForDialect(const Db& db, const char* sqlite, const char* postgres) {
  return db.dialect() == Dialect::kPostgres ? postgres : sqlite;
}

// This machine's name (core/host.h: NODE_NAME in a pod, not the pod's name): PostgreSQL is
// shared by many hosts, so each keeps its own checkpoints and heartbeat there, and a rollout
// that renames the pod finds the node's checkpoints again.
std::string ThisHost() { return core::ThisHost(); }

// The keys and values of a JSON object of strings (or numbers, read as text).
constexpr const char* kSqliteObjectRows = "SELECT key, value FROM json_each(?1)";
constexpr const char* kPostgresObjectRows = "SELECT key, value FROM json_each_text(?1::json)";

Result<std::map<std::string, std::string>> ParseStringMap(Db& db, const std::string& json) {
  TRIAGE_PREPARE(st, db, ForDialect(db, kSqliteObjectRows, kPostgresObjectRows));
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
  TRIAGE_PREPARE(st, db,
                 ForDialect(db, "SELECT value FROM json_each(?1)",
                            "SELECT value FROM json_array_elements_text(?1::json)"));
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

// The objects of a JSON array of objects of strings, each as a map.
Result<std::vector<std::map<std::string, std::string>>> ParseObjectList(Db& db,
                                                                        const std::string& json) {
  std::vector<std::string> objects;
  {
    TRIAGE_PREPARE(st, db,
                   ForDialect(db, "SELECT json(value) FROM json_each(?1)",
                              "SELECT value::text FROM json_array_elements(?1::json)"));
    st->Bind(1, json);
    for (;;) {
      auto row = st->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      objects.push_back(st->Text(0));
    }
  }
  std::vector<std::map<std::string, std::string>> out;
  for (const auto& o : objects) {
    auto m = ParseStringMap(db, o);
    if (!m.ok()) return m.status();
    out.push_back(std::move(*m));
  }
  return out;
}

Result<std::vector<core::KnownBugMatch>> ParseKnownBugs(Db& db, const std::string& json) {
  auto objects = ParseObjectList(db, json);
  if (!objects.ok()) return objects.status();
  std::vector<core::KnownBugMatch> out;
  for (auto& o : *objects)
    out.push_back({o["id"], o["package"], o["version"], o["version_from"], o["status"],
                   o["affected"], o["fixed_in"], o["fixed_commit"], o["issue"], o["pr"], o["summary"],
                   o["workaround"]});
  return out;
}

Result<std::vector<core::PackageVersion>> ParseVersions(Db& db, const std::string& json) {
  auto objects = ParseObjectList(db, json);
  if (!objects.ok()) return objects.status();
  std::vector<core::PackageVersion> out;
  for (auto& o : *objects)
    out.push_back({o["package"], o["version"], o["from"], o["source"],
                   uint64_t(std::strtoull(o["line"].c_str(), nullptr, 10))});
  return out;
}

Result<std::vector<core::RankState>> ParseRanks(Db& db, const std::string& json) {
  auto objects = ParseObjectList(db, json);
  if (!objects.ok()) return objects.status();
  std::vector<core::RankState> out;
  for (auto& o : *objects) {
    core::RankState r;
    r.actor = o["actor"];
    r.state = o["state"];
    if (auto t = o.find("first_failure"); t != o.end()) r.first_failure = t->second;
    if (auto t = o.find("offset_seconds"); t != o.end())
      r.offset_seconds = std::strtod(t->second.c_str(), nullptr);
    r.cause = o["cause"];
    r.detail = o["detail"];
    if (auto h = o.find("host"); h != o.end()) r.host = h->second;
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<core::VerifyRequest>> ParseVerify(Db& db, const std::string& json) {
  std::vector<std::pair<std::string, std::string>> raw;
  {
    TRIAGE_PREPARE(st, db,
                   ForDialect(db,
                              "SELECT json_extract(value, '$.verifier'), "
                              "json(json_extract(value, '$.args')) FROM json_each(?1)",
                              "SELECT value->>'verifier', (value->'args')::text "
                              "FROM json_array_elements(?1::json)"));
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
  // Facts are JSON: cut, they would no longer parse, so too many are replaced by a note.
  const std::string facts =
      v.facts_json.empty() ? std::string("{}")
      : v.facts_json.size() > kMaxFactsBytes
          ? std::string("{\"truncated\":\"the facts were too long to store\"}")
          : v.facts_json;
  st->Bind(1, incident_id).Bind(2, Truncated(cause, kMaxNameBytes));
  st->Bind(3, Truncated(v.verifier, kMaxNameBytes)).Bind(4, core::VerdictName(v.verdict));
  st->Bind(5, Truncated(v.reason, kMaxReasonBytes)).Bind(6, facts);
  st->Bind(7, Truncated(v.host, kMaxNameBytes)).Bind(8, now).Bind(9, v.ms);
  return st->Run();
}

Status InsertEvidence(Db& db, int64_t incident_id, const char* occurrence, const std::string& cause,
                      const std::string* symptom, const std::vector<core::Evidence>& evidence,
                      RecordOutcome& outcome) {
  TRIAGE_PREPARE(st, db,
                 "INSERT INTO evidence (incident_id, occurrence, cause, symptom, seq, source, "
                 "line, excerpt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  for (size_t i = 0; i < evidence.size(); ++i) {
    const auto& e = evidence[i];
    st->Bind(1, incident_id).Bind(2, occurrence).Bind(3, cause);
    if (symptom)
      st->Bind(4, *symptom);
    else
      st->BindNull(4);
    st->Bind(5, int64_t(i)).Bind(6, e.source).Bind(7, int64_t(e.line));
    st->Bind(8, e.text);
    TRIAGE_TRY(st->Run());
    st->Reset();
    ++outcome.evidence_rows;
  }
  return Status::Ok();
}

Status InsertCauses(Db& db, int64_t incident_id, const core::Incident& inc, const char* occurrence,
                    RecordOutcome& outcome) {
  TRIAGE_PREPARE(st, db,
                 "INSERT INTO hypotheses (incident_id, cause, rank, score, band, title, remedy, "
                 "captures, fingerprint_keys, independent, explained_by, verify, known_bugs, "
                 "known_bug, known_bug_status) VALUES "
                 "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) RETURNING id");
  for (const auto& c : inc.causes) {
    st->Bind(1, incident_id).Bind(2, c.cause).Bind(3, int64_t(c.rank)).Bind(4, c.score);
    st->Bind(5, c.band).Bind(6, c.title).Bind(7, c.remedy).Bind(8, CapturesJson(c.captures));
    st->Bind(9, KeysJson(c.fingerprint_keys)).Bind(10, int64_t(c.independent ? 1 : 0));
    st->BindNull(11).Bind(12, VerifyJson(c.verify)).Bind(13, KnownBugsJson(c.known_bugs));
    st->Bind(14, c.known_bugs.empty() ? std::string() : c.known_bugs.front().id);
    st->Bind(15, c.known_bugs.empty() ? std::string() : c.known_bugs.front().status);
    auto inserted = st->Step();
    if (!inserted.ok()) return inserted.status();
    const int64_t parent = st->Int(0);
    TRIAGE_TRY(st->Run());
    st->Reset();
    for (const auto& s : c.symptoms) {
      st->Bind(1, incident_id).Bind(2, s.cause).BindNull(3).Bind(4, 0.0).Bind(5, "");
      st->Bind(6, s.title).Bind(7, "").Bind(8, "{}").Bind(9, "[]").Bind(10, int64_t(0));
      st->Bind(11, parent).Bind(12, "[]").Bind(13, "[]").Bind(14, "").Bind(15, "");
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

// What tells an occurrence from another of the same incident (docs/schema.md, "Occurrence
// identity"): where it is (its host; the file the daemon read it from, else its source path;
// its line range there), when the log says it was (its own start and end times, when it has
// them) and what it says (the text of its evidence lines). Read again (a second run over the
// same file, the rest of an interrupted run, stdin piped again, the daemon's file under a
// rotated name or in its copytruncate copy), an occurrence has the same key; the same failure
// written again, further down the same log or in a new file at the same path, has another.
std::string OccurrenceKey(const core::Incident& inc) {
  Fnv64 h;
  h.Add(inc.host);
  // The daemon's name for the file, not its path: a rename or a copy keeps it, a file deleted
  // and written again at the same path does not.
  if (inc.file_id != 0) {
    h.Add(inc.file_id);
  } else {
    h.Add(inc.source);
  }
  h.Add(inc.first_line).Add(inc.last_line);
  h.Add(inc.started ? "t" + *inc.started : "-").Add(inc.ended ? "t" + *inc.ended : "-");
  // Sorted, so the order the ranker put the causes in (verdicts may change it) does not matter.
  std::set<std::pair<uint64_t, std::string>> lines;
  auto add = [&](const std::vector<core::Evidence>& evidence) {
    for (const auto& e : evidence) lines.emplace(e.line, e.text);
  };
  for (const auto& c : inc.causes) {
    add(c.evidence);
    for (const auto& sy : c.symptoms) add(sy.evidence);
  }
  for (const auto& [line, text] : lines) h.Add(line).Add(text);
  return (inc.file_id != 0 ? "k2|" : "k1|") + h.Hex();
}

// The key version 5's rule gave an occurrence (kept for incidents stored before version 6).
std::optional<std::string> LegacyOccurrenceKey(const core::Incident& inc) {
  if (!inc.started) return std::nullopt;
  return "v5|" + inc.source + "|" + std::to_string(inc.first_line) + "|" +
         std::to_string(inc.last_line) + "|" + *inc.started;
}

Result<bool> OccurrenceKnown(Db& db, int64_t id, const std::string& key) {
  TRIAGE_PREPARE(st, db, "SELECT 1 FROM occurrence_keys WHERE incident_id = ?1 AND key = ?2");
  st->Bind(1, id).Bind(2, key);
  return st->Step();
}

Status AddOccurrenceKey(Db& db, int64_t id, const std::string& key) {
  TRIAGE_PREPARE(st, db,
                 "INSERT INTO occurrence_keys (incident_id, key) VALUES (?1, ?2) "
                 "ON CONFLICT DO NOTHING");
  st->Bind(1, id).Bind(2, key);
  return st->Run();
}

// What the store already holds of an incident: its row, whether it was resolved, and whether
// this very occurrence is among those filed (reading again anything stored changes no count
// and no status).
struct FiledIncident {
  std::optional<int64_t> id;
  bool was_resolved = false;
  bool same_occurrence = false;
};

Result<FiledIncident> FindStored(Db& db, const std::string& fp, const std::string& key,
                                 const core::Incident& whole) {
  FiledIncident out;
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT id, CASE WHEN status = 'resolved' THEN 1 ELSE 0 END "
                   "FROM incidents WHERE fingerprint = ?1");
    st->Bind(1, fp);
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (*row) {
      out.id = st->Int(0);
      out.was_resolved = st->Int(1) != 0;
    }
  }
  // Every stored occurrence of the incident is compared, not only the latest.
  if (!out.id) return out;
  auto known = OccurrenceKnown(db, *out.id, key);
  if (!known.ok()) return known.status();
  out.same_occurrence = *known;
  if (!out.same_occurrence) {
    if (auto legacy = LegacyOccurrenceKey(whole)) {
      known = OccurrenceKnown(db, *out.id, *legacy);
      if (!known.ok()) return known.status();
      out.same_occurrence = *known;
    }
  }
  return out;
}

// The incident row's columns ?2 to ?15 (service to title, the time it was seen, the versions,
// the job's processes and its name), as the
// insert of a new incident and the update of a recurrence both write them.
void BindIncidentRow(Stmt& st, const core::Incident& inc, const std::string& seen) {
  const core::Cause& top = inc.causes.front();
  st.Bind(2, inc.service).Bind(3, inc.host).Bind(4, inc.source);
  st.Bind(5, int64_t(inc.first_line)).Bind(6, int64_t(inc.last_line));
  st.Bind(7, inc.started).Bind(8, inc.ended).Bind(9, top.cause).Bind(10, top.title);
  st.Bind(11, seen).Bind(12, VersionsJson(inc.versions));
  st.Bind(13, ActorsJson(inc.actors)).Bind(14, RanksJson(inc.ranks)).Bind(15, inc.job);
}

// A recurrence: the incident's row takes the latest occurrence; the hypotheses follow it, the
// first occurrence's evidence stays, the previous latest's goes.
Status UpdateRecurrence(Db& db, int64_t id, const core::Incident& inc, const std::string& seen) {
  TRIAGE_PREPARE(st, db,
                 "UPDATE incidents SET service = ?2, host = ?3, source = ?4, first_line = ?5, "
                 "last_line = ?6, started = ?7, ended = ?8, top_cause = ?9, title = ?10, "
                 "first_seen = CASE WHEN ?11 < first_seen THEN ?11 ELSE first_seen END, "
                 "last_seen = CASE WHEN ?11 > last_seen THEN ?11 ELSE last_seen END, "
                 "occurrences = occurrences + 1, versions = ?12, actors = ?13, ranks = ?14, "
                 "job = ?15, status = CASE status WHEN 'resolved' THEN 'reopened' ELSE status END "
                 "WHERE id = ?1");
  st->Bind(1, id);
  BindIncidentRow(*st, inc, seen);
  TRIAGE_TRY(st->Run());
  TRIAGE_PREPARE(del_h, db, "DELETE FROM hypotheses WHERE incident_id = ?1");
  del_h->Bind(1, id);
  TRIAGE_TRY(del_h->Run());
  TRIAGE_PREPARE(del_e, db,
                 "DELETE FROM evidence WHERE incident_id = ?1 AND occurrence = 'latest'");
  del_e->Bind(1, id);
  TRIAGE_TRY(del_e->Run());
  return Status::Ok();
}

// One more occurrence of incident `id` on `host`, seen at `seen`.
Status CountHost(Db& db, int64_t id, const std::string& host, const std::string& seen) {
  TRIAGE_PREPARE(hosts, db,
                 "INSERT INTO incident_hosts (incident_id, host, occurrences, first_seen, "
                 "last_seen) VALUES (?1, ?2, 1, ?3, ?3) ON CONFLICT (incident_id, host) DO "
                 "UPDATE SET occurrences = incident_hosts.occurrences + 1, "
                 "first_seen = CASE WHEN ?3 < incident_hosts.first_seen THEN ?3 "
                 "ELSE incident_hosts.first_seen END, "
                 "last_seen = CASE WHEN ?3 > incident_hosts.last_seen THEN ?3 "
                 "ELSE incident_hosts.last_seen END");
  hosts->Bind(1, id).Bind(2, host).Bind(3, seen);
  return hosts->Run();
}

// A new occurrence of incident `id`: its key, its host, a reopening, its pod, its causes and the
// day it counts for.
Status AddOccurrence(Db& db, int64_t id, const core::Incident& inc, const std::string& key,
                     const std::string& seen, const std::string& now, bool reopened,
                     const char* occurrence, RecordOutcome& outcome) {
  TRIAGE_TRY(AddOccurrenceKey(db, id, key));
  TRIAGE_TRY(CountHost(db, id, inc.host, seen));
  if (reopened) {
    TRIAGE_PREPARE(act, db,
                   "INSERT INTO activity (incident_id, time, action, note) "
                   "VALUES (?1, ?2, 'reopened', '')");
    act->Bind(1, id).Bind(2, now);
    TRIAGE_TRY(act->Run());
  }
  if (!inc.pod.empty()) {
    // The pod of the latest occurrence (a recurrence may come from another pod of the same
    // workload).
    TRIAGE_PREPARE(st, db,
                   "UPDATE incidents SET pod_namespace = ?2, pod = ?3, container = ?4 "
                   "WHERE id = ?1");
    st->Bind(1, id).Bind(2, inc.pod.pod_namespace).Bind(3, inc.pod.pod);
    st->Bind(4, inc.pod.container);
    TRIAGE_TRY(st->Run());
  }
  TRIAGE_TRY(InsertCauses(db, id, inc, occurrence, outcome));
  TRIAGE_PREPARE(st, db,
                 "INSERT INTO occurrences (incident_id, day, count) VALUES (?1, ?2, 1) "
                 "ON CONFLICT (incident_id, day) DO UPDATE SET count = occurrences.count + 1");
  st->Bind(1, id).Bind(2, seen.substr(0, 10));
  TRIAGE_TRY(st->Run());
  return Status::Ok();
}

// Files one incident by its fingerprint inside the caller's write transaction: a new incident,
// a recurrence of one stored, or an occurrence read again; returns its id.
Result<int64_t> RecordByFingerprint(Db& db, const core::Incident& whole, const std::string& now,
                                    RecordOutcome& outcome) {
  const std::string fp =
      BoundedFingerprint(whole.fingerprint.empty() ? core::Fingerprint(whole) : whole.fingerprint);
  const std::string key = OccurrenceKey(whole);
  const core::Incident inc = Bounded(whole);
  std::string seen = now;
  if (inc.started) {
    if (auto t = NormalizeTime(*inc.started)) seen = *t;
  } else if (inc.ended) {
    if (auto t = NormalizeTime(*inc.ended)) seen = *t;
  }

  auto stored = FindStored(db, fp, key, whole);
  if (!stored.ok()) return stored.status();
  const std::optional<int64_t> existing = stored->id;
  const bool was_resolved = stored->was_resolved, same_occurrence = stored->same_occurrence;

  int64_t id = 0;
  const char* occurrence = "first";
  if (!existing) {
    TRIAGE_PREPARE(st, db,
                   "INSERT INTO incidents (fingerprint, service, host, source, first_line, "
                   "last_line, started, ended, top_cause, title, first_seen, last_seen, "
                   "occurrences, status, versions, actors, ranks, job) VALUES (?1, ?2, ?3, ?4, ?5, "
                   "?6, ?7, ?8, ?9, ?10, ?11, ?11, 1, 'open', ?12, ?13, ?14, ?15) RETURNING id");
    st->Bind(1, fp);
    BindIncidentRow(*st, inc, seen);
    auto inserted = st->Step();
    if (!inserted.ok()) return inserted.status();
    id = st->Int(0);
    TRIAGE_TRY(st->Run());
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
    TRIAGE_TRY(UpdateRecurrence(db, id, inc, seen));
  }

  if (!same_occurrence)
    TRIAGE_TRY(
        AddOccurrence(db, id, inc, key, seen, now, existing && was_resolved, occurrence, outcome));
  for (const auto& c : inc.causes) {
    for (const auto& v : c.verifications) TRIAGE_TRY(UpsertVerification(db, id, c.cause, v, now));
  }
  return id;
}

// The incident stored for job `job` (core::Incident::job), if any; the job's row is locked for
// the rest of the transaction, so that the daemons of two hosts filing the same job's failure at
// once file it as one incident: the second waits for the first to commit, then joins its
// incident (docs/schema.md, "Jobs"). SQLite's write transactions are one at a time already.
Result<std::optional<int64_t>> LockJob(Db& db, const std::string& job) {
  TRIAGE_PREPARE(ins, db,
                 "INSERT INTO job_incidents (job, incident_id) VALUES (?1, NULL) "
                 "ON CONFLICT (job) DO NOTHING");
  ins->Bind(1, job);
  TRIAGE_TRY(ins->Run());
  TRIAGE_PREPARE(st, db,
                 ForDialect(db, "SELECT incident_id FROM job_incidents WHERE job = ?1",
                            "SELECT incident_id FROM job_incidents WHERE job = ?1 FOR UPDATE"));
  st->Bind(1, job);
  auto row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row || st->IsNull(0)) return std::optional<int64_t>();
  return std::optional<int64_t>(st->Int(0));
}

// `part` joined into the job's incident `id` (core::JoinJobIncident): the incident's row, its
// hypotheses and evidence written again from the joined incident, its hosts and occurrence keys
// added to; its count of occurrences and its fingerprint stay.
Status JoinStored(Db& db, int64_t id, core::Incident joined, const core::Incident& part,
                  const std::string& key, const std::string& seen, RecordOutcome& outcome) {
  core::JoinJobIncident(joined, Bounded(part));
  joined = Bounded(joined);
  TRIAGE_PREPARE(st, db,
                 "UPDATE incidents SET service = ?2, host = ?3, source = ?4, first_line = ?5, "
                 "last_line = ?6, started = ?7, ended = ?8, top_cause = ?9, title = ?10, "
                 "first_seen = CASE WHEN ?11 < first_seen THEN ?11 ELSE first_seen END, "
                 "last_seen = CASE WHEN ?11 > last_seen THEN ?11 ELSE last_seen END, "
                 "versions = ?12, actors = ?13, ranks = ?14, job = ?15 WHERE id = ?1");
  st->Bind(1, id);
  BindIncidentRow(*st, joined, seen);
  TRIAGE_TRY(st->Run());
  for (const char* sql : {"DELETE FROM hypotheses WHERE incident_id = ?1",
                          "DELETE FROM evidence WHERE incident_id = ?1"}) {
    TRIAGE_PREPARE(del, db, sql);
    del->Bind(1, id);
    TRIAGE_TRY(del->Run());
  }
  TRIAGE_TRY(InsertCauses(db, id, joined, "first", outcome));
  TRIAGE_TRY(AddOccurrenceKey(db, id, key));
  return CountHost(db, id, part.host, seen);
}

// Files one incident inside the caller's write transaction; returns its id. An incident of a
// job (core::Incident::job) whose failure the store already holds, within
// core::kJobReachSeconds, joins that job's incident; any other is filed by its fingerprint.
Result<int64_t> RecordOne(Db& db, const core::Incident& whole, const std::string& now,
                          RecordOutcome& outcome) {
  if (whole.job.empty() || whole.causes.empty()) return RecordByFingerprint(db, whole, now, outcome);
  std::string job = whole.job;
  Cut(job, kMaxPathBytes);
  auto locked = LockJob(db, job);
  if (!locked.ok()) return locked.status();
  if (*locked) {
    const int64_t id = **locked;
    const std::string key = OccurrenceKey(whole);
    auto known = OccurrenceKnown(db, id, key);
    if (!known.ok()) return known.status();
    if (*known) {
      outcome.filed.push_back(RecordOutcome::Filed::kReadAgain);
      return id;
    }
    auto stored = detail::ReadIncident(db, id);
    if (!stored.ok()) return stored.status();
    if (core::SameJobFailure(stored->incident, whole)) {
      std::string seen = now;
      if (auto t = whole.started ? NormalizeTime(*whole.started) : std::nullopt) seen = *t;
      TRIAGE_TRY(JoinStored(db, id, std::move(stored->incident), whole, key, seen, outcome));
      ++outcome.joined;
      outcome.filed.push_back(RecordOutcome::Filed::kJoined);
      return id;
    }
  }
  auto id = RecordByFingerprint(db, whole, now, outcome);
  if (!id.ok()) return id.status();
  TRIAGE_PREPARE(st, db, "UPDATE job_incidents SET incident_id = ?2 WHERE job = ?1");
  st->Bind(1, job).Bind(2, *id);
  TRIAGE_TRY(st->Run());
  return id;
}

Status PutCheckpointRows(Db& db, const std::vector<SourceCheckpoint>& checkpoints,
                         const std::string& now) {
  // On PostgreSQL each host has its own (?8 / ?3: this host; SQLite ignores the extra value).
  TRIAGE_PREPARE(st, db,
                 ForDialect(db,
                            "INSERT INTO source_checkpoints (dev, inode, path, \"offset\", "
                            "head_len, head_hash, updated_at, file_id) VALUES (?1, ?2, ?3, ?4, "
                            "?5, ?6, ?7, ?9) ON CONFLICT (dev, inode) DO UPDATE SET path = "
                            "excluded.path, \"offset\" = excluded.\"offset\", head_len = "
                            "excluded.head_len, head_hash = excluded.head_hash, updated_at = "
                            "excluded.updated_at, file_id = excluded.file_id",
                            "INSERT INTO source_checkpoints (host, dev, inode, path, \"offset\", "
                            "head_len, head_hash, updated_at, file_id) VALUES (?8, ?1, ?2, ?3, "
                            "?4, ?5, ?6, ?7, ?9) ON CONFLICT (host, dev, inode) DO UPDATE SET "
                            "path = excluded.path, \"offset\" = excluded.\"offset\", head_len = "
                            "excluded.head_len, head_hash = excluded.head_hash, updated_at = "
                            "excluded.updated_at, file_id = excluded.file_id"));
  TRIAGE_PREPARE(del, db,
                 ForDialect(db, "DELETE FROM source_checkpoints WHERE dev = ?1 AND inode = ?2",
                            "DELETE FROM source_checkpoints WHERE dev = ?1 AND inode = ?2 AND "
                            "host = ?3"));
  for (const auto& c : checkpoints) {
    if (c.forget) {
      del->Bind(1, int64_t(c.dev)).Bind(2, int64_t(c.inode)).Bind(3, ThisHost());
      TRIAGE_TRY(del->Run());
      del->Reset();
      continue;
    }
    st->Bind(1, int64_t(c.dev)).Bind(2, int64_t(c.inode)).Bind(3, c.path);
    st->Bind(4, int64_t(c.offset)).Bind(5, int64_t(c.head_len)).Bind(6, int64_t(c.head_hash));
    st->Bind(7, now).Bind(8, ThisHost()).Bind(9, int64_t(c.file_id));
    TRIAGE_TRY(st->Run());
    st->Reset();
  }
  return Status::Ok();
}

// Steps `st` through its rows, calling `row` for each; the first error ends it.
template <typename RowFn>
Status EachRow(Stmt& st, RowFn&& row) {
  for (;;) {
    auto r = st.Step();
    if (!r.ok()) return r.status();
    if (!*r) return Status::Ok();
    row(st);
  }
}

IncidentSummary SummaryFromRow(Stmt& st) {
  // Columns: id, fingerprint, service, host, top_cause, title, occurrences, first_seen,
  // last_seen, status, note, hosts.
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
  s.hosts = st.Int(11);
  return s;
}

constexpr const char* kSummaryColumns =
    "id, fingerprint, service, host, top_cause, title, occurrences, first_seen, last_seen, "
    "status, note, (SELECT count(*) FROM incident_hosts h WHERE h.incident_id = incidents.id)";

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

// The incident's own row (its summary, where and when) and its pod.
Status ReadIncidentRow(Db& db, int64_t id, StoredIncident& out) {
  core::Incident& inc = out.incident;
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
  inc.source = st->Text(12);
  inc.first_line = uint64_t(st->Int(13));
  inc.last_line = uint64_t(st->Int(14));
  inc.started = st->OptText(15);
  inc.ended = st->OptText(16);
  TRIAGE_PREPARE(pod, db,
                 "SELECT pod_namespace, pod, container, versions, actors, ranks, job FROM "
                 "incidents WHERE id = ?1");
  pod->Bind(1, id);
  auto pod_row = pod->Step();
  if (!pod_row.ok()) return pod_row.status();
  if (!*pod_row) return Status::Ok();
  inc.pod = {pod->Text(0), pod->Text(1), pod->Text(2)};
  const std::string versions_json = pod->Text(3), actors_json = pod->Text(4),
                    ranks_json = pod->Text(5);
  inc.job = pod->Text(6);
  pod->Reset();
  auto versions = ParseVersions(db, versions_json);
  if (!versions.ok()) return versions.status();
  inc.versions = std::move(*versions);
  auto actors = ParseStringList(db, actors_json);
  if (!actors.ok()) return actors.status();
  inc.actors = std::move(*actors);
  auto ranks = ParseRanks(db, ranks_json);
  if (!ranks.ok()) return ranks.status();
  inc.ranks = std::move(*ranks);
  return Status::Ok();
}

// The hosts it was seen on and what was done with it.
Status ReadHostsAndActivity(Db& db, int64_t id, StoredIncident& out) {
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT host, occurrences, first_seen, last_seen FROM incident_hosts "
                   "WHERE incident_id = ?1 ORDER BY occurrences DESC, host");
    st->Bind(1, id);
    TRIAGE_TRY(EachRow(*st, [&](Stmt& r) {
      out.hosts.push_back({r.Text(0), r.Int(1), r.Text(2), r.Text(3)});
    }));
  }
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT time, action, note FROM activity WHERE incident_id = ?1 ORDER BY id");
    st->Bind(1, id);
    TRIAGE_TRY(EachRow(*st, [&](Stmt& r) {
      out.activity.push_back({r.Text(0), r.Text(1), r.Text(2)});
    }));
  }
  return Status::Ok();
}

// Its root causes with their symptoms (roots sort first), captures, keys and checks.
Status ReadCauses(Db& db, int64_t id, core::Incident& inc) {
  struct Row {
    int64_t hid;
    core::Cause cause;
    std::optional<int64_t> parent;
    std::string captures, keys, verify, known_bugs;
  };
  std::vector<Row> rows;
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT id, cause, rank, score, band, title, remedy, captures, "
                   "fingerprint_keys, independent, explained_by, verify, known_bugs FROM hypotheses "
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
      r.known_bugs = st->Text(12);
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
    auto known_bugs = ParseKnownBugs(db, r.known_bugs);
    if (!known_bugs.ok()) return known_bugs.status();
    r.cause.known_bugs = std::move(*known_bugs);
    root_index[r.hid] = inc.causes.size();
    inc.causes.push_back(std::move(r.cause));
  }
  return Status::Ok();
}

core::Cause* FindCause(core::Incident& inc, const std::string& name) {
  for (auto& c : inc.causes)
    if (c.cause == name) return &c;
  return nullptr;
}

// The evidence lines of each cause and symptom: the first occurrence's, then the latest's, each
// line once.
Status ReadEvidence(Db& db, int64_t id, core::Incident& inc) {
  // 'first' sorts before 'latest'.
  TRIAGE_PREPARE(st, db,
                 "SELECT cause, symptom, source, line, excerpt FROM evidence "
                 "WHERE incident_id = ?1 ORDER BY occurrence, seq, id");
  st->Bind(1, id);
  std::set<std::tuple<const void*, std::string, uint64_t, std::string>> seen;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    core::Cause* c = FindCause(inc, st->Text(0));
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

  return Status::Ok();
}

Status ReadVerifications(Db& db, int64_t id, core::Incident& inc) {
  TRIAGE_PREPARE(st, db,
                 "SELECT cause, verifier, verdict, reason, facts, host, ms FROM verifications "
                 "WHERE incident_id = ?1 ORDER BY id");
  st->Bind(1, id);
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    core::Cause* c = FindCause(inc, st->Text(0));
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

  return Status::Ok();
}

Result<StoredIncident> ReadIncident(Db& db, int64_t id) {
  StoredIncident out;
  TRIAGE_TRY(ReadIncidentRow(db, id, out));
  TRIAGE_TRY(ReadHostsAndActivity(db, id, out));
  TRIAGE_TRY(ReadCauses(db, id, out.incident));
  TRIAGE_TRY(ReadEvidence(db, id, out.incident));
  TRIAGE_TRY(ReadVerifications(db, id, out.incident));
  return out;
}

}  // namespace detail

bool IsServerUrl(const std::string& target) { return detail::IsPostgresUrl(target); }

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

const std::string& Store::path() const { return impl_->path; }

Status Store::Reconnect() {
  if (impl_->server.empty()) return Status::Ok();
  auto db = detail::OpenPostgres(impl_->server, impl_->options.busy_timeout_ms,
                                 impl_->options.answer_timeout_ms);
  if (!db.ok()) return db.status().Annotate(impl_->path);
  if (Status m = detail::Migrate(**db); !m.ok()) return m.Annotate(impl_->path);
  impl_->db = std::move(db).value();
  return Status::Ok();
}

// "file:" URI of `path` (RFC 3986 percent-encoding of what a URI path may not hold) with
// immutable=1, for a database on a read-only mount.
std::string ImmutableUri(const std::string& path) {
  std::string uri = "file:";
  static const char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~", c)) {
      uri += char(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 0xF];
    }
  }
  return uri + "?immutable=1";
}

// Why a database that was to be written opened read-only.
Status ReadOnlyStatus(const std::string& path) {
  std::string dir = path;
  auto slash = dir.find_last_of('/');
  dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : dir.substr(0, slash));
  struct statvfs vfs {};
  if (statvfs(dir.c_str(), &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) {
    return Status::Io(path + ": the database is read-only: " + std::strerror(EROFS));
  }
  return Status::Io(path + ": the database is read-only: no permission to write it (" +
                    std::strerror(EACCES) + ")");
}

// Opens an existing file for reading only (StoreOptions::read_only).
Result<std::unique_ptr<detail::SqliteDb>> OpenReadOnly(const std::string& path) {
  auto db = detail::SqliteDb::Open(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
  if (db.ok()) {
    // A WAL file is read through its -shm index, which a read-only connection may still have to
    // create; where it cannot (a read-only mount, a folder of another user), it fails here.
    auto version = (*db)->QueryInt("PRAGMA user_version");
    if (version.ok()) return db;
    // Only a file that cannot be opened for reading its index (Io) is retried immutable; a lock
    // held by a writer (Busy) must not be: the immutable reader would not see the writer's pages.
    if (version.status().kind() != Status::Kind::kIo) return version.status();
  }
  return detail::SqliteDb::Open(ImmutableUri(path),
                                SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI);
}

Result<Store> Store::Open(const std::string& path, const StoreOptions& options) {
  if (path.empty()) return Status::InvalidInput("database path is empty");
  if (detail::IsPostgresUrl(path)) {
    // The server keeps the data and its roles say who may write: the file options (create,
    // read_only, max_size_bytes) do not apply.
    const std::string shown = detail::RedactUrl(path);
    auto db = detail::OpenPostgres(path, options.busy_timeout_ms, options.answer_timeout_ms);
    if (!db.ok()) return db.status().Annotate(shown);
    Status m = detail::Migrate(**db);
    if (!m.ok()) return m.Annotate(shown);
    return Store(std::make_unique<Impl>(Impl{shown, options, std::move(*db), path}));
  }
  if (path == ":memory:" || path.rfind("file:", 0) == 0) {
    // Neither can be shared between the processes that write and read incidents.
    return Status::InvalidInput(path + ": give the database as a file path");
  }
  const bool exists = ::access(path.c_str(), F_OK) == 0;
  if (!exists && !options.create) return Status::NotFound(path + ": no such database");
  if (exists && options.read_only) {
    auto db = OpenReadOnly(path);
    if (!db.ok()) return db.status().Annotate(path);
    sqlite3_busy_timeout((*db)->get(), options.busy_timeout_ms);
    auto impl = std::make_unique<Impl>(Impl{path, options, std::move(*db), {}});
    auto version = impl->db->QueryInt("PRAGMA user_version");
    if (!version.ok()) return version.status().Annotate(path);
    if (*version != kSchemaVersion) {
      return Status::Corrupt(path + ": schema version " + std::to_string(*version) +
                             (*version > kSchemaVersion
                                  ? " is newer than this triage; upgrade triage"
                                  : " is older than this triage; a command that writes (analyze "
                                    "--db, resolve) migrates it"));
    }
    return Store(std::move(impl));
  }
  if (!exists) {
    TRIAGE_TRY(MakeParents(path));
    TRIAGE_TRY(CreateFile(path));
  }
  auto db = detail::SqliteDb::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
  if (!db.ok()) return db.status();
  // SQLite falls back to reading a file it may not write; a store that is to be written says
  // why it cannot be, rather than failing later on a lock file it cannot create.
  if (sqlite3_db_readonly((*db)->get(), "main") == 1) return ReadOnlyStatus(path);
  sqlite3_busy_timeout((*db)->get(), options.busy_timeout_ms);
  auto impl = std::make_unique<Impl>(Impl{path, options, std::move(*db), {}});
  Db& d = *impl->db;
  const std::string what = path;
  TRIAGE_TRY(d.Exec("PRAGMA foreign_keys = ON", what));
  // Reading the schema first tells a foreign file ("file is not a database") apart early.
  auto version = d.QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.status().Annotate(what);
  {
    auto st = d.Prepare("PRAGMA journal_mode = WAL");
    if (!st.ok()) return st.status().Annotate(what);
    StmtUse use(**st);
    // Switching a new file to WAL takes its exclusive lock, and SQLite answers SQLITE_BUSY at
    // once, without its busy handler, while another process opening the same new file holds a
    // shared one (two writers of a fleet starting together): the switch is tried again, within
    // the busy timeout.
    auto row = use->Step();
    for (int waited_ms = 0; !row.ok() && row.status().kind() == Status::Kind::kBusy &&
                            waited_ms < options.busy_timeout_ms;
         waited_ms += 10) {
      ::usleep(10 * 1000);
      row = use->Step();
    }
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
    const int64_t pages =
        std::max<int64_t>(1, options.max_size_bytes / std::max<int64_t>(*page, 512));
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
  Db& db = *impl_->db;
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
    if (incidents[i].fingerprint.empty())
      incidents[i].fingerprint = core::Fingerprint(incidents[i]);
  }
  return outcome;
}

Result<std::vector<IncidentSummary>> Store::History(const HistoryFilter& filter) {
  // Built from constant fragments; every value is bound.
  std::string sql = std::string("SELECT ") + kSummaryColumns + " FROM incidents WHERE 1 = 1";
  if (filter.since) sql += " AND last_seen >= ?1";
  if (filter.until) sql += " AND first_seen <= ?5";
  if (filter.service) sql += " AND service = ?2";
  if (filter.status) sql += " AND status = ?6";
  // "any": a root cause fits a known bug; "fixed": one seen on a release at or past its fix;
  // else that bug's id.
  if (filter.known_bug) {
    sql += " AND EXISTS (SELECT 1 FROM hypotheses h WHERE h.incident_id = incidents.id AND "
           "h.explained_by IS NULL AND h.known_bug <> '' AND (?7 = 'any' OR "
           "(?7 = 'fixed' AND h.known_bug_status = 'fixed') OR h.known_bug = ?7))";
  }
  if (filter.cause) {
    sql +=
        " AND EXISTS (SELECT 1 FROM hypotheses h WHERE h.incident_id = incidents.id AND "
        "h.explained_by IS NULL AND (h.cause = ?3 OR substr(h.cause, 1, length(?3) + 1) = "
        "?3 || '.'))";
  }
  sql += " ORDER BY last_seen DESC, id DESC";
  if (filter.limit > 0) sql += " LIMIT ?4";
  Db& db = *impl_->db;
  TRIAGE_PREPARE(st, db, sql);
  std::optional<std::string> since;
  if (filter.since) {
    since = NormalizeTime(*filter.since);
    if (!since) since = filter.since;
    st->Bind(1, *since);
  }
  if (filter.service) st->Bind(2, *filter.service);
  if (filter.status) st->Bind(6, *filter.status);
  if (filter.cause) st->Bind(3, *filter.cause);
  if (filter.known_bug) st->Bind(7, *filter.known_bug);
  if (filter.limit > 0) st->Bind(4, filter.limit);
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
  auto txn = Transaction::Begin(*impl_->db, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();
  auto r = detail::ReadIncident(*impl_->db, id);
  if (!r.ok()) return r.status();
  TRIAGE_TRY((*txn)->Commit());
  return r;
}

// PostgreSQL has no FTS5: each word of the user's text must occur in the line, compared
// without case as a plain substring (strpos, so no character of it is a pattern). At most this
// many words are taken.
constexpr size_t kMaxSearchWords = 16;

Result<std::vector<SearchHit>> Store::Search(std::string_view text, int64_t limit) {
  const std::string query = FtsQuery(text);
  std::vector<SearchHit> out;
  if (query.empty()) return out;
  Db& db = *impl_->db;
  std::vector<std::string> words;
  std::string sql =
      "SELECT e.incident_id, i.service, e.cause, i.status, i.last_seen, e.source, e.line, "
      "e.excerpt FROM ";
  if (db.dialect() == Dialect::kPostgres) {
    std::string word;
    for (char c : text) {
      if (std::isspace(static_cast<unsigned char>(c))) {
        if (!word.empty() && words.size() < kMaxSearchWords) words.push_back(word);
        word.clear();
      } else {
        word += c;
      }
    }
    if (!word.empty() && words.size() < kMaxSearchWords) words.push_back(word);
    // Built from constant fragments; every word is bound.
    sql += "evidence e JOIN incidents i ON i.id = e.incident_id WHERE 1 = 1";
    for (size_t k = 0; k < words.size(); ++k) {
      sql += " AND strpos(lower(e.excerpt), lower(?" + std::to_string(k + 3) + ")) > 0";
    }
    sql += " ORDER BY e.id DESC";
  } else {
    sql +=
        "evidence_fts f JOIN evidence e ON e.id = f.rowid JOIN incidents i ON "
        "i.id = e.incident_id WHERE evidence_fts MATCH ?1 ORDER BY f.rowid DESC";
  }
  if (limit > 0) sql += " LIMIT ?2";
  TRIAGE_PREPARE(st, db, sql);
  if (db.dialect() == Dialect::kPostgres) {
    for (size_t k = 0; k < words.size(); ++k) st->Bind(int(k + 3), words[k]);
  } else {
    st->Bind(1, query);
  }
  if (limit > 0) st->Bind(2, limit);
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
  Db& db = *impl_->db;
  auto txn = Transaction::Begin(db, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();
  Stats s;
  {
    TRIAGE_PREPARE(st, db,
                   "SELECT count(*), coalesce(sum(occurrences), 0), "
                   "coalesce(sum(CASE WHEN status <> 'resolved' THEN 1 ELSE 0 END), 0) "
                   "FROM incidents");
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (*row) {
      s.incidents = st->Int(0);
      s.occurrences = st->Int(1);
      s.open = st->Int(2);
    }
  }
  auto by_cause = StatsRows(
      db, ForDialect(db,
                     "SELECT cause, count(*), sum(occurrences) FROM (SELECT DISTINCT h.cause, "
                     "i.id, i.occurrences FROM hypotheses h NOT INDEXED JOIN incidents i ON "
                     "i.id = h.incident_id WHERE h.explained_by IS NULL) GROUP BY cause "
                     "ORDER BY 2 DESC, 3 DESC, 1",
                     "SELECT cause, count(*), sum(occurrences) FROM (SELECT DISTINCT h.cause, "
                     "i.id, i.occurrences FROM hypotheses h JOIN incidents i ON "
                     "i.id = h.incident_id WHERE h.explained_by IS NULL) AS roots GROUP BY cause "
                     "ORDER BY 2 DESC, 3 DESC, 1"));
  if (!by_cause.ok()) return by_cause.status();
  s.by_cause = std::move(*by_cause);
  auto by_service = StatsRows(db, ForDialect(db,
                                             "SELECT service, count(*), sum(occurrences) FROM "
                                             "incidents NOT INDEXED GROUP BY service "
                                             "ORDER BY 2 DESC, 3 DESC, 1",
                                             "SELECT service, count(*), sum(occurrences) FROM "
                                             "incidents GROUP BY service "
                                             "ORDER BY 2 DESC, 3 DESC, 1"));
  if (!by_service.ok()) return by_service.status();
  s.by_service = std::move(*by_service);
  auto by_day = StatsRows(db,
                          "SELECT day, count(*), sum(count) FROM occurrences GROUP BY day "
                          "ORDER BY day DESC");
  if (!by_day.ok()) return by_day.status();
  s.by_day = std::move(*by_day);
  auto by_host = StatsRows(db,
                           "SELECT host, count(*), sum(occurrences) FROM incident_hosts "
                           "GROUP BY host ORDER BY 2 DESC, 3 DESC, 1");
  if (!by_host.ok()) return by_host.status();
  s.by_host = std::move(*by_host);
  s.hosts = int64_t(s.by_host.size());
  for (const bool after_fix : {false, true}) {
    auto rows = StatsRows(db, after_fix ? "SELECT h.known_bug, count(*), sum(i.occurrences) FROM "
                                          "hypotheses h JOIN incidents i ON i.id = h.incident_id "
                                          "WHERE h.known_bug <> '' AND h.explained_by IS NULL AND "
                                          "h.known_bug_status = 'fixed' GROUP BY h.known_bug "
                                          "ORDER BY 2 DESC, 3 DESC, 1"
                                        : "SELECT h.known_bug, count(*), sum(i.occurrences) FROM "
                                          "hypotheses h JOIN incidents i ON i.id = h.incident_id "
                                          "WHERE h.known_bug <> '' AND h.explained_by IS NULL "
                                          "GROUP BY h.known_bug ORDER BY 2 DESC, 3 DESC, 1");
    if (!rows.ok()) return rows.status();
    (after_fix ? s.known_bug_after_fix : s.by_known_bug) = std::move(*rows);
  }
  TRIAGE_TRY((*txn)->Commit());
  return s;
}

Status Store::Resolve(int64_t id, const std::string& note) {
  Db& db = *impl_->db;
  auto txn = Transaction::Begin(db, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status().Annotate("resolve");
  const std::string now = NowUtc();
  const std::string text = Truncated(note, kMaxNoteBytes);
  {
    // An empty note keeps the latest one; every note stays in the activity.
    TRIAGE_PREPARE(st, db,
                   "UPDATE incidents SET status = 'resolved', resolved_at = ?2, "
                   "note = CASE WHEN ?3 = '' THEN note ELSE ?3 END WHERE id = ?1 RETURNING id");
    st->Bind(1, id).Bind(2, now).Bind(3, text);
    auto row = st->Step();
    if (!row.ok()) return row.status().Annotate("resolve");
    if (!*row) return Status::NotFound("incident " + std::to_string(id) + ": no such incident");
    TRIAGE_TRY(st->Run().Annotate("resolve"));
  }
  TRIAGE_PREPARE(act, db,
                 "INSERT INTO activity (incident_id, time, action, note) "
                 "VALUES (?1, ?2, 'resolved', ?3)");
  act->Bind(1, id).Bind(2, now).Bind(3, text);
  TRIAGE_TRY(act->Run().Annotate("resolve"));
  return (*txn)->Commit().Annotate("resolve");
}

Status Store::AddVerifications(int64_t id, const std::string& cause,
                               const std::vector<core::Verification>& verifications) {
  Db& db = *impl_->db;
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
  Db& db = *impl_->db;
  TRIAGE_PREPARE(st, db,
                 ForDialect(db,
                            "SELECT path, inode, \"offset\", updated_at, dev, head_len, "
                            "head_hash, file_id FROM source_checkpoints WHERE path = ?1 "
                            "ORDER BY updated_at DESC LIMIT 1",
                            "SELECT path, inode, \"offset\", updated_at, dev, head_len, "
                            "head_hash, file_id FROM source_checkpoints WHERE path = ?1 AND "
                            "host = ?2 ORDER BY updated_at DESC LIMIT 1"));
  st->Bind(1, path).Bind(2, ThisHost());
  auto row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<SourceCheckpoint>();
  return std::optional<SourceCheckpoint>(SourceCheckpoint{
      st->Text(0), uint64_t(st->Int(1)), uint64_t(st->Int(2)), st->Text(3), uint64_t(st->Int(4)),
      uint64_t(st->Int(5)), uint64_t(st->Int(6)), uint64_t(st->Int(7))});
}

Result<std::vector<SourceCheckpoint>> Store::ListCheckpoints() {
  Db& db = *impl_->db;
  TRIAGE_PREPARE(st, db,
                 ForDialect(db,
                            "SELECT path, inode, \"offset\", updated_at, dev, head_len, "
                            "head_hash, file_id FROM source_checkpoints ORDER BY path",
                            "SELECT path, inode, \"offset\", updated_at, dev, head_len, "
                            "head_hash, file_id FROM source_checkpoints WHERE host = ?1 "
                            "ORDER BY path"));
  st->Bind(1, ThisHost());
  std::vector<SourceCheckpoint> out;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({st->Text(0), uint64_t(st->Int(1)), uint64_t(st->Int(2)), st->Text(3),
                   uint64_t(st->Int(4)), uint64_t(st->Int(5)), uint64_t(st->Int(6)),
                   uint64_t(st->Int(7))});
  }
  return out;
}

Status Store::PutCheckpoints(const std::vector<SourceCheckpoint>& checkpoints) {
  Db& db = *impl_->db;
  auto txn = Transaction::Begin(db, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  TRIAGE_TRY(PutCheckpointRows(db, checkpoints, NowUtc()));
  return (*txn)->Commit();
}

Status Store::PutHeartbeat(const Heartbeat& hb) {
  Db& db = *impl_->db;
  JsonWriter w;
  w.BeginObject();
  for (const auto& [k, v] : hb.counters) w.Key(k).Int(v);
  w.EndObject();
  // One row per database on SQLite, one per host on PostgreSQL (?6: this host).
  TRIAGE_PREPARE(st, db,
                 ForDialect(db,
                            "INSERT INTO heartbeat (id, pid, started_at, updated_at, counters, "
                            "last_error) VALUES (1, ?1, ?2, ?3, ?4, ?5) ON CONFLICT (id) DO "
                            "UPDATE SET pid = excluded.pid, started_at = excluded.started_at, "
                            "updated_at = excluded.updated_at, counters = excluded.counters, "
                            "last_error = excluded.last_error",
                            "INSERT INTO heartbeat (host, pid, started_at, updated_at, counters, "
                            "last_error) VALUES (?6, ?1, ?2, ?3, ?4, ?5) ON CONFLICT (host) DO "
                            "UPDATE SET pid = excluded.pid, started_at = excluded.started_at, "
                            "updated_at = excluded.updated_at, counters = excluded.counters, "
                            "last_error = excluded.last_error"));
  st->Bind(1, hb.pid).Bind(2, hb.started_at).Bind(3, NowUtc()).Bind(4, w.str());
  st->Bind(5, hb.last_error).Bind(6, ThisHost());
  return st->Run().Annotate("heartbeat");
}

Result<std::optional<Heartbeat>> Store::GetHeartbeat() {
  Db& db = *impl_->db;
  Heartbeat hb;
  std::string counters;
  {
    TRIAGE_PREPARE(st, db,
                   ForDialect(db,
                              "SELECT pid, started_at, updated_at, counters, last_error FROM "
                              "heartbeat WHERE id = 1",
                              "SELECT pid, started_at, updated_at, counters, last_error FROM "
                              "heartbeat WHERE host = ?1"));
    st->Bind(1, ThisHost());
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return std::optional<Heartbeat>();
    hb.pid = st->Int(0);
    hb.started_at = st->Text(1);
    hb.updated_at = st->Text(2);
    counters = st->Text(3);
    hb.last_error = st->Text(4);
  }
  TRIAGE_PREPARE(st, db, ForDialect(db, kSqliteObjectRows, kPostgresObjectRows));
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
  Db& db = *impl_->db;
  // PostgreSQL checks its pages itself; a server that answers has its data whole.
  if (db.dialect() == Dialect::kPostgres) return db.Exec("SELECT 1", impl_->path);
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
  auto v = detail::StoredSchemaVersion(*impl_->db);
  if (!v.ok()) return v.status();
  return int(*v);
}

}  // namespace triage::store

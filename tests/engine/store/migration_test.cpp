// A database written by schema version 1 (made here by that version's own statements, kept in
// tests/engine/store/data/) is migrated on open, its incidents intact.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "fixtures.h"
#include "postgres_server.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

using testing::TempDir;

std::string ReadData(const std::string& name) {
  std::ifstream f(std::string(TRIAGE_TEST_DATA) + "/engine/store/data/" + name);
  EXPECT_TRUE(f.good()) << name;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void ExecScript(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

void MakeVersion1(const std::string& path) {
  ExecScript(path, ReadData("schema_v1.sql"));
  ExecScript(path, ReadData("v1_incidents.sql"));
}

TEST(StoreMigration, Version1IsMigratedOnOpenWithItsIncidentsIntact) {
  TempDir dir;
  const std::string path = dir.File("v1.db");
  MakeVersion1(path);

  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto version = store->SchemaVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, kSchemaVersion);
  EXPECT_TRUE(store->CheckIntegrity().ok());

  auto h = store->History({});
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_EQ(h->size(), 2u);
  EXPECT_EQ(h->at(0).id, 2);
  EXPECT_EQ(h->at(1).status, "resolved");
  EXPECT_EQ(h->at(1).occurrences, 3);
  EXPECT_EQ(h->at(1).note, "") << "a column added by version 2 has its default";
  // Version 7: every occurrence counted on the one host version 6 knew, and the resolve in the
  // activity.
  EXPECT_EQ(h->at(1).hosts, 1);

  auto inc = store->GetIncident(1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  ASSERT_EQ(inc->incident.causes.size(), 1u);
  const auto& c = inc->incident.causes[0];
  EXPECT_EQ(c.captures.at("sm"), "120");
  EXPECT_EQ(c.fingerprint_keys, (std::vector<std::string>{"sm", "required"}));
  ASSERT_EQ(c.evidence.size(), 2u);
  EXPECT_EQ(c.evidence[0].line, 22u);
  ASSERT_EQ(c.symptoms.size(), 1u);
  EXPECT_EQ(c.symptoms[0].evidence.size(), 1u);
  EXPECT_TRUE(c.verify.empty());

  // Version 2's additions work on the migrated data: the full-text index covers the old
  // evidence, verifications can be added, and a recurrence counts on from the old count.
  auto hits = store->Search("flash_attn");
  ASSERT_TRUE(hits.ok()) << hits.status().message();
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ(hits->at(0).incident_id, 2);
  EXPECT_TRUE(store
                  ->AddVerifications(2, "python.import_error",
                                     {{"python.module", core::Verdict::kConfirmed,
                                       "not importable", "{}", "ct201", 80}})
                  .ok());
  auto stats = store->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->occurrences, 4);
  ASSERT_FALSE(stats->by_day.empty());

  core::Incident again = inc->incident;
  again.id.reset();
  again.source = "/var/log/sglang-server.log";
  again.started = "2026-11-04T00:00:00";
  std::vector<core::Incident> batch{again};
  auto r = store->Record(batch);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*batch[0].id, 1);
  EXPECT_EQ(r->reopened, 1);

  auto cp = store->GetCheckpoint("/var/log/vllm.log");
  ASSERT_TRUE(cp.ok() && cp->has_value());
  EXPECT_EQ((*cp)->offset, 90210u);
  EXPECT_EQ((*cp)->file_id, 0u) << "version 8: no file named yet";
  auto hb = store->GetHeartbeat();
  ASSERT_TRUE(hb.ok() && hb->has_value());
  EXPECT_EQ((*hb)->counters.at("lines"), 1200);
}

// Version 3 widens the verdicts (not_reproduced, not_applicable): a version-2 file keeps its
// verifications and takes the new verdicts after the rebuild of the table.
TEST(StoreMigration, Version2KeepsItsVerdictsAndTakesTheNewOnes) {
  TempDir dir;
  const std::string path = dir.File("v2.db");
  MakeVersion1(path);
  ExecScript(path, ReadData("schema_v1_to_v2.sql"));
  ExecScript(path,
             "INSERT INTO verifications (incident_id, cause, verifier, verdict, reason, facts, host, "
             "time, ms) VALUES (1, 'cuda.toolkit_too_old_for_arch', 'cuda.toolkits', 'refuted', "
             "'NVRTC 13.0 targets sm_120', '{}', 'vm', '2026-11-30T10:00:00', 40)");

  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto version = store->SchemaVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, kSchemaVersion);
  EXPECT_TRUE(store->CheckIntegrity().ok());
  auto before = store->GetIncident(1);
  ASSERT_TRUE(before.ok()) << before.status().message();
  ASSERT_EQ(before->incident.causes.size(), 1u);
  ASSERT_EQ(before->incident.causes[0].verifications.size(), 1u);
  EXPECT_EQ(before->incident.causes[0].verifications[0].verdict, core::Verdict::kRefuted);
  EXPECT_EQ(before->incident.causes[0].verifications[0].reason, "NVRTC 13.0 targets sm_120");

  // The same check on the same host replaces it; another host's verdict sits beside it.
  ASSERT_TRUE(store
                  ->AddVerifications(1, "cuda.toolkit_too_old_for_arch",
                                     {{"cuda.toolkits", core::Verdict::kNotApplicable,
                                       "the log is from ct200 with SM 12.x GPUs; this host is vm with no GPU",
                                       "{}", "vm", 3},
                                      {"gpu.devices", core::Verdict::kNotReproduced, "gone now", "{}", "ct201", 9}})
                  .ok());
  auto after = store->GetIncident(1);
  ASSERT_TRUE(after.ok()) << after.status().message();
  const auto& vs = after->incident.causes[0].verifications;
  ASSERT_EQ(vs.size(), 2u);
  bool applicable_seen = false, reproduced_seen = false;
  for (const auto& v : vs) {
    applicable_seen |= v.verdict == core::Verdict::kNotApplicable && v.host == "vm";
    reproduced_seen |= v.verdict == core::Verdict::kNotReproduced && v.host == "ct201";
  }
  EXPECT_TRUE(applicable_seen);
  EXPECT_TRUE(reproduced_seen);
}

// A store as a version-7 triage left it, on either back end: a version-8 one without the column
// step 8 adds (which is all it adds), with a checkpoint written as version 7 wrote it.
class StoreMigrationToVersion8 : public testing::BackendTest {
 protected:
  bool sqlite() const { return GetParam() == testing::Backend::kSqlite; }
  // Runs `sql` on the store, outside the store library.
  void Sql(const std::string& sql) {
    if (sqlite()) {
      ExecScript(target(), sql);
    } else {
      ASSERT_EQ(testing::PostgresServer::Shared().Sql(target(), sql), 0) << sql;
    }
  }
  // Takes a new store back to version 10: without the column and the table step 11 adds.
  void MakeVersion10() {
    ASSERT_TRUE(Store::Open(target()).ok());
    Sql(std::string("DROP TABLE job_incidents; ALTER TABLE incidents DROP COLUMN job; ") +
        (sqlite() ? "PRAGMA user_version = 10;" : "UPDATE triage_schema SET version = 10;"));
  }
  // Takes a new store back to version 9: without the columns step 10 adds (which is all it adds).
  void MakeVersion9() {
    MakeVersion10();
    Sql(std::string("ALTER TABLE incidents DROP COLUMN actors; ALTER TABLE incidents DROP COLUMN ranks; ") +
        (sqlite() ? "PRAGMA user_version = 9;" : "UPDATE triage_schema SET version = 9;"));
  }
  // Takes a new store back to version 8: without what steps 9 and 10 add.
  void MakeVersion8() {
    MakeVersion9();
    Sql(std::string("DROP INDEX hypotheses_by_known_bug; ALTER TABLE hypotheses DROP COLUMN known_bugs; "
                    "ALTER TABLE hypotheses DROP COLUMN known_bug; "
                    "ALTER TABLE hypotheses DROP COLUMN known_bug_status; "
                    "ALTER TABLE incidents DROP COLUMN versions; ") +
        (sqlite() ? "PRAGMA user_version = 8;" : "UPDATE triage_schema SET version = 8;"));
  }
  void MakeVersion7() {
    MakeVersion8();
    Sql(std::string("ALTER TABLE source_checkpoints DROP COLUMN file_id; ") +
        (sqlite() ? "PRAGMA user_version = 7;" : "UPDATE triage_schema SET version = 7;"));
    // PostgreSQL's checkpoints are per host: this one's, where the store reads them.
    char host[256] = {};
    ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
    Sql(std::string("INSERT INTO source_checkpoints (") + (sqlite() ? "" : "host, ") +
        "dev, inode, path, \"offset\", head_len, head_hash, updated_at) VALUES (" +
        (sqlite() ? std::string() : "'" + std::string(host) + "', ") +
        "2049, 77, '/var/log/app.log', 4096, 64, 12345, '2026-11-02T09:00:00')");
  }
};

// Version 8 names the file a checkpoint's bytes came from: a version-7 checkpoint is kept as it
// was, with no name (0), which the daemon gives it when it next reads the file; a name written
// now is kept.
TEST_P(StoreMigrationToVersion8, KeepsTheCheckpointsWithoutAFileId) {
  MakeVersion7();
  auto store = Store::Open(target());
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto version = store->SchemaVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, kSchemaVersion);
  auto cps = store->ListCheckpoints();
  ASSERT_TRUE(cps.ok()) << cps.status().message();
  ASSERT_EQ(cps->size(), 1u);
  const SourceCheckpoint& cp = cps->at(0);
  EXPECT_EQ(cp.path, "/var/log/app.log");
  EXPECT_EQ(cp.dev, 2049u);
  EXPECT_EQ(cp.inode, 77u);
  EXPECT_EQ(cp.offset, 4096u);
  EXPECT_EQ(cp.head_len, 64u);
  EXPECT_EQ(cp.head_hash, 12345u);
  EXPECT_EQ(cp.file_id, 0u);
  SourceCheckpoint named = cp;
  named.offset = 8192;
  named.file_id = 99;
  ASSERT_TRUE(store->PutCheckpoints({named}).ok());
  cps = store->ListCheckpoints();
  ASSERT_TRUE(cps.ok());
  ASSERT_EQ(cps->size(), 1u);
  EXPECT_EQ(cps->at(0).offset, 8192u);
  EXPECT_EQ(cps->at(0).file_id, 99u);
}

TRIAGE_ON_EACH_BACKEND(StoreMigrationToVersion8);

// Version 9 keeps the known bugs each cause fits and the versions a log showed: a version-8
// store's incidents keep what they had, with none of either, and a new one keeps both.
TEST_P(StoreMigrationToVersion8, Version9KeepsOldIncidentsAndStoresKnownBugsAndVersions) {
  MakeVersion8();
  {
    // What a version-8 triage recorded: written through SQL, as it would have.
    Sql("INSERT INTO incidents (fingerprint, service, host, source, first_line, last_line, top_cause, "
        "title, first_seen, last_seen) VALUES ('fp-old', 'svc', 'h', 'a.log', 1, 2, 'cuda.oom', 'OOM', "
        "'2026-11-02T09:00:00', '2026-11-02T09:00:00')");
  }
  auto store = Store::Open(target());
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto old = store->GetIncident(1);
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_TRUE(old->incident.versions.empty());
  core::Incident inc = testing::ToolkitTooOld("svc", "120", "a.log", 7, std::nullopt);
  inc.versions.push_back({"vllm", "0.6.1", "log", "a.log", 3});
  core::KnownBugMatch kb;
  kb.id = "vllm#1";
  kb.package = "vllm";
  kb.version = "0.6.1";
  kb.version_from = "log";
  kb.status = "affected";
  kb.affected = "<0.6.2";
  kb.fixed_in = "0.6.2";
  kb.issue = "https://example.org/1";
  inc.causes[0].known_bugs.push_back(kb);
  std::vector<core::Incident> batch{inc};
  ASSERT_TRUE(store->Record(batch).ok());
  auto back = store->GetIncident(*batch[0].id);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->incident.versions.size(), 1u);
  EXPECT_EQ(back->incident.versions[0].version, "0.6.1");
  EXPECT_EQ(back->incident.versions[0].line, 3u);
  ASSERT_EQ(back->incident.causes[0].known_bugs.size(), 1u);
  EXPECT_EQ(back->incident.causes[0].known_bugs[0].id, "vllm#1");
  EXPECT_EQ(back->incident.causes[0].known_bugs[0].affected, "<0.6.2");
  HistoryFilter any;
  any.known_bug = "any";
  auto listed = store->History(any);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->at(0).id, *batch[0].id);
  HistoryFilter fixed;
  fixed.known_bug = "fixed";
  EXPECT_TRUE(store->History(fixed)->empty());
  auto stats = store->GetStats();
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->by_known_bug.size(), 1u);
  EXPECT_EQ(stats->by_known_bug[0].key, "vllm#1");
}

// Version 10 keeps a job's processes and its timeline: a version-9 store's incidents keep what
// they had, with neither, and a new one keeps both, its unknown times unknown.
TEST_P(StoreMigrationToVersion8, Version10KeepsOldIncidentsAndStoresAJobsRanks) {
  MakeVersion9();
  Sql("INSERT INTO incidents (fingerprint, service, host, source, first_line, last_line, top_cause, "
      "title, first_seen, last_seen) VALUES ('fp-old', 'svc', 'h', 'a.log', 1, 2, 'cuda.oom', 'OOM', "
      "'2026-11-02T09:00:00', '2026-11-02T09:00:00')");
  auto store = Store::Open(target());
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto old = store->GetIncident(1);
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_TRUE(old->incident.actors.empty());
  EXPECT_TRUE(old->incident.ranks.empty());
  core::Incident inc = testing::ToolkitTooOld("svc", "120", "a.log", 7, std::nullopt);
  inc.actors = {"rank 1", "rank 0"};
  core::RankState first;
  first.actor = "rank 1";
  first.state = "failed";
  first.cause = "cuda.oom";
  core::RankState second;
  second.actor = "rank 0";
  second.state = "victim";
  second.first_failure = "2026-12-06T11:58:42.849635";
  second.offset_seconds = 0.5;
  second.cause = "nccl.failure";
  second.detail = "waited in ALLREDUCE SeqNum=4";
  inc.ranks = {first, second};
  std::vector<core::Incident> batch{inc};
  ASSERT_TRUE(store->Record(batch).ok());
  auto back = store->GetIncident(*batch[0].id);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->incident.actors, (std::vector<std::string>{"rank 1", "rank 0"}));
  ASSERT_EQ(back->incident.ranks.size(), 2u);
  const auto& r0 = back->incident.ranks[0];
  EXPECT_EQ(r0.actor, "rank 1");
  EXPECT_EQ(r0.state, "failed");
  EXPECT_FALSE(r0.first_failure.has_value());
  EXPECT_FALSE(r0.offset_seconds.has_value());
  EXPECT_EQ(r0.cause, "cuda.oom");
  const auto& r1 = back->incident.ranks[1];
  EXPECT_EQ(r1.state, "victim");
  EXPECT_EQ(r1.first_failure, std::optional<std::string>("2026-12-06T11:58:42.849635"));
  ASSERT_TRUE(r1.offset_seconds.has_value());
  EXPECT_DOUBLE_EQ(*r1.offset_seconds, 0.5);
  EXPECT_EQ(r1.detail, "waited in ALLREDUCE SeqNum=4");
}

TEST(StoreMigration, ANewerSchemaIsRefused) {
  TempDir dir;
  const std::string path = dir.File("future.db");
  ASSERT_TRUE(Store::Open(path).ok());
  ExecScript(path, "PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  auto store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("newer than this triage"), std::string::npos)
      << store.status().message();
}

TEST(StoreMigration, AForeignDatabaseIsNotTakenOver) {
  TempDir dir;
  const std::string path = dir.File("other.db");
  ExecScript(path, "CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine');");
  auto store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().kind(), Status::Kind::kCorrupt);
}

}  // namespace
}  // namespace triage::store

// `triage analyze --db` killed with SIGKILL while it stores a large input, after at least one
// of its commits has landed: the database opens, passes PRAGMA integrity_check, and every
// incident in it is complete.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "fixtures.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

using testing::QueryInt;
using testing::TempDir;

// Incidents committed so far, read as another process would; -1 while the file or its schema
// is not there yet.
int64_t CommittedIncidents(const std::string& path) {
  sqlite3* db = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 1000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM incidents", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

// A service log with `n` distinct failures, ten minutes apart (longer than the quiet gap, so
// each is its own incident): a missing module, a different one each time (the module is the
// cause's defining capture, so each is a new fingerprint).
void WriteCrashLog(const std::string& path, int n) {
  std::ofstream f(path);
  const std::time_t start = 1793610000;  // 2026-11-02T09:00:00Z
  for (int i = 0; i < n; ++i) {
    std::time_t t = start + std::time_t(i) * 600;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    f << when << " INFO starting worker pid=" << 1000 + i << "\n"
      << when << " ERROR worker failed to start\n"
      << "Traceback (most recent call last):\n"
      << "  File \"/opt/app/main.py\", line " << 10 + i % 50 << ", in <module>\n"
      << "    import plugin_" << i << "\n"
      << "ModuleNotFoundError: No module named 'plugin_" << i << "'\n"
      << when << " INFO worker exited with code 1\n";
  }
}

TEST(AnalyzeKill, KilledWhileStoringLeavesEveryCommittedIncidentWhole) {
  TempDir dir;
  const std::string log = dir.File("worker.log");
  const std::string db = dir.File("state/triage.db");
  constexpr int kFailures = 20000;
  WriteCrashLog(log, kFailures);

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(TRIAGE_BINARY, TRIAGE_BINARY, "analyze", "--db", db.c_str(), "--json", log.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for the first commit to land, then kill it while it goes on storing.
  int64_t seen = -1;
  int status = 0;
  bool exited = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    seen = CommittedIncidents(db);
    if (seen > 0) break;
    if (waitpid(child, &status, WNOHANG) == child) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!exited) {
    kill(child, SIGKILL);
    ASSERT_EQ(waitpid(child, &status, 0), child);
  }
  ASSERT_GT(seen, 0) << "analyze committed nothing before it "
                     << (exited ? "exited (status " + std::to_string(status) + ")" : "timed out");
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "it was killed, not finished (status " << status << ")";

  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().message();
  Status integrity = store->CheckIntegrity();
  EXPECT_TRUE(integrity.ok()) << integrity.message();
  const int64_t stored = QueryInt(db, "SELECT count(*) FROM incidents");
  EXPECT_GE(stored, seen) << "what was seen committed is still there";
  EXPECT_LT(stored, kFailures) << "killed in the middle of storing";
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM incidents i WHERE NOT EXISTS (SELECT 1 FROM "
                     "hypotheses h WHERE h.incident_id = i.id AND h.explained_by IS NULL)"),
            0)
      << "no incident without its causes";
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM hypotheses h WHERE h.explained_by IS NULL AND NOT "
                     "EXISTS (SELECT 1 FROM evidence e WHERE e.incident_id = h.incident_id AND "
                     "e.cause = h.cause)"),
            0)
      << "no cause without its evidence";
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM incidents WHERE top_cause <> '' AND occurrences = 1 "
                     "AND status = 'open'"),
            stored);
  // A stored incident reads back whole, and the store goes on working.
  auto h = store->History({});
  ASSERT_TRUE(h.ok() && !h->empty());
  auto one = store->GetIncident(h->front().id);
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_FALSE(one->incident.causes.empty());
  EXPECT_FALSE(one->incident.causes[0].evidence.empty());
  EXPECT_TRUE(store->Resolve(h->front().id, "after the kill").ok());
}

}  // namespace
}  // namespace triage::store

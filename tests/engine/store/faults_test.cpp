// The store under faults: a writer killed mid-batch, a full disk, a database locked by another
// process. Each fault happens in a child process, so the test process survives it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "fixtures.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

using testing::Numbered;
using testing::QueryInt;
using testing::TempDir;

// Every incident has exactly `causes` root causes with `evidence` lines each: none is partial.
void ExpectEveryIncidentComplete(const std::string& path, int causes, int evidence) {
  const std::string bad_causes =
      "SELECT count(*) FROM incidents i WHERE (SELECT count(*) FROM hypotheses h WHERE "
      "h.incident_id = i.id AND h.explained_by IS NULL) <> " + std::to_string(causes);
  EXPECT_EQ(QueryInt(path, bad_causes.c_str()), 0);
  const std::string bad_evidence =
      "SELECT count(*) FROM incidents i WHERE (SELECT count(*) FROM evidence e WHERE "
      "e.incident_id = i.id) <> " + std::to_string(causes * evidence);
  EXPECT_EQ(QueryInt(path, bad_evidence.c_str()), 0);
  EXPECT_EQ(QueryInt(path,
                     "SELECT (SELECT count(*) FROM evidence) - (SELECT count(*) FROM evidence_fts)"),
            0)
      << "the full-text index matches the evidence";
}

// Stores batches of `batch` numbered incidents forever, writing the number of committed
// batches to `fd` after each commit. Never returns.
[[noreturn]] void StoreForever(const std::string& path, int fd, int batch) {
  auto store = Store::Open(path);
  if (!store.ok()) _exit(10);
  for (int64_t b = 0;; ++b) {
    std::vector<core::Incident> incidents;
    for (int i = 0; i < batch; ++i) incidents.push_back(Numbered(b * batch + i, 3, 3));
    if (!store->Record(incidents).ok()) _exit(11);
    int64_t done = b + 1;
    if (write(fd, &done, sizeof done) != sizeof done) _exit(12);
  }
}

TEST(StoreFaults, KilledWriterLeavesEveryCommittedIncidentWhole) {
  TempDir dir;
  const std::string path = dir.File("kill.db");
  ASSERT_TRUE(Store::Open(path).ok());
  constexpr int kBatch = 500;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    StoreForever(path, fds[1], kBatch);
  }
  close(fds[1]);
  int64_t acknowledged = 0;
  // Let a few commits land, then kill it in the middle of the next batch: the child is always
  // inside Record() (building a batch takes far less than storing it).
  while (acknowledged < 3) {
    ASSERT_EQ(read(fds[0], &acknowledged, sizeof acknowledged), ssize_t(sizeof acknowledged));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(7));
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "it died of the kill";
  int64_t last;
  while (read(fds[0], &last, sizeof last) == ssize_t(sizeof last)) acknowledged = last;
  close(fds[0]);

  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  Status integrity = store->CheckIntegrity();
  EXPECT_TRUE(integrity.ok()) << integrity.message();
  const int64_t stored = QueryInt(path, "SELECT count(*) FROM incidents");
  EXPECT_GE(stored, acknowledged * kBatch) << "every acknowledged batch is there";
  EXPECT_LE(stored, (acknowledged + 1) * kBatch);
  EXPECT_EQ(stored % kBatch, 0) << "no batch is there in part";
  ExpectEveryIncidentComplete(path, 3, 3);
  // And the store still takes writes.
  std::vector<core::Incident> more{Numbered(-1)};
  EXPECT_TRUE(store->Record(more).ok());
}

TEST(StoreFaults, FullDiskIsAClearErrorAndTheDatabaseSurvives) {
  TempDir dir;
  const std::string path = dir.File("full.db");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok());
    std::vector<core::Incident> seed;
    for (int i = 0; i < 100; ++i) seed.push_back(Numbered(i, 2, 2));
    ASSERT_TRUE(store->Record(seed).ok());
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    // No file may grow past 2 MiB: the WAL fills up within a few batches.
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {2 << 20, 2 << 20};
    setrlimit(RLIMIT_FSIZE, &lim);
    auto store = Store::Open(path);
    if (!store.ok()) _exit(10);
    for (int b = 1; b < 1000; ++b) {
      std::vector<core::Incident> batch;
      for (int i = 0; i < 200; ++i) batch.push_back(Numbered(b * 1000 + i, 2, 2));
      auto r = store->Record(batch);
      if (!r.ok()) {
        std::string msg = r.status().message();
        if (write(fds[1], msg.data(), msg.size()) < 0) _exit(12);
        _exit(r.status().kind() == Status::Kind::kIo ? 1 : 2);
      }
    }
    _exit(0);
  }
  close(fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) message.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 1) << "an Io error, not success or another kind: " << message;
  EXPECT_NE(message.find("file too large"), std::string::npos) << message;
  EXPECT_EQ(message.find("disk I/O error"), std::string::npos) << "said plainly: " << message;

  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  Status integrity = store->CheckIntegrity();
  EXPECT_TRUE(integrity.ok()) << integrity.message();
  ExpectEveryIncidentComplete(path, 2, 2);
  EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM incidents") % 200, 100);
  std::vector<core::Incident> more{Numbered(-1, 2, 2)};
  EXPECT_TRUE(store->Record(more).ok());
}

TEST(StoreFaults, SizeCapReachedIsDiskFullAndNothingPartialIsKept) {
  // SQLITE_FULL (ENOSPC, or the size cap of StoreOptions) says "disk full", and the batch that
  // hit it is rolled back whole.
  TempDir dir;
  const std::string path = dir.File("capped.db");
  StoreOptions options;
  options.max_size_bytes = 512 << 10;
  auto store = Store::Open(path, options);
  ASSERT_TRUE(store.ok()) << store.status().message();
  Status failed;
  int64_t committed = 0;
  for (int b = 0; b < 1000 && failed.ok(); ++b) {
    std::vector<core::Incident> batch;
    for (int i = 0; i < 50; ++i) batch.push_back(Numbered(b * 50 + i, 2, 2));
    auto r = store->Record(batch);
    if (r.ok()) committed += 50;
    else failed = r.status();
  }
  ASSERT_FALSE(failed.ok()) << "the cap was reached";
  EXPECT_EQ(failed.kind(), Status::Kind::kIo);
  EXPECT_NE(failed.message().find("disk full"), std::string::npos) << failed.message();
  EXPECT_GT(committed, 0);
  EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM incidents"), committed);
  ExpectEveryIncidentComplete(path, 2, 2);
  EXPECT_TRUE(store->CheckIntegrity().ok());
  // Reads still work at the cap.
  auto h = store->History({});
  EXPECT_TRUE(h.ok());
}

TEST(StoreFaults, LockedByAnotherProcessIsBusyAfterTheTimeout) {
  TempDir dir;
  const std::string path = dir.File("locked.db");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok());
    std::vector<core::Incident> seed{Numbered(1)};
    ASSERT_TRUE(store->Record(seed).ok());
  }
  int ready[2], release[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(release), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) _exit(10);
    if (sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) != SQLITE_OK) _exit(11);
    char c = 1;
    if (write(ready[1], &c, 1) != 1) _exit(12);
    if (read(release[0], &c, 1) != 1) _exit(13);
    sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);

  StoreOptions options;
  options.busy_timeout_ms = 300;
  auto store = Store::Open(path, options);
  ASSERT_TRUE(store.ok()) << store.status().message();
  std::vector<core::Incident> batch{Numbered(2)};
  const auto t0 = std::chrono::steady_clock::now();
  auto r = store->Record(batch);
  const auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), Status::Kind::kBusy) << r.status().message();
  EXPECT_NE(r.status().message().find("locked by another process"), std::string::npos);
  EXPECT_GE(waited, std::chrono::milliseconds(250)) << "it waited for the busy timeout";
  EXPECT_FALSE(batch[0].id.has_value());
  // Readers are not blocked by the writer's lock.
  auto h = store->History({});
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->size(), 1u);
  EXPECT_EQ(store->Resolve(h->at(0).id, "").kind(), Status::Kind::kBusy);

  ASSERT_EQ(write(release[1], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto again = store->Record(batch);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(store->CheckIntegrity().ok());
  EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM incidents"), 2);
  for (int fd : {ready[0], ready[1], release[0], release[1]}) close(fd);
}

}  // namespace
}  // namespace triage::store

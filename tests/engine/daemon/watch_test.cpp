// Integration tests of `triage watch`: the real binary, real files in a temporary folder, the
// store read back. The exactly-once tests compare the daemon's stored occurrences per root cause
// with the workload's truth (genlogs.py's sidecar: per root cause, the number of incidents
// written), and with those of `triage analyze` on the same final files (the same pipeline read
// in one go): a byte skipped or read twice by the daemon changes them. A workload split into two
// files is cut between incidents (WorkloadTruth::CutNear).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "daemon_harness.h"
#include "triage/core/analyzer.h"
#include "triage/core/rules.h"
#include "triage/ingest/pipeline.h"
#include "triage/store/store.h"

namespace triage::daemon::testing {
namespace {

// The SIGKILL tests pace a writer against the daemon's lives; a sanitizer build runs the daemon
// several times slower, so both sides are paced slower there to keep the same interleaving.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr unsigned kSlowdown = 6;
#else
constexpr unsigned kSlowdown = 1;
#endif

using namespace std::chrono_literals;

// The fatal line of a kernel OOM kill (rules/host.toml), and a process's last words.
std::string OomKill(int pid) {
  return "Nov  2 09:24:0" + std::to_string(pid % 10) +
         " gpu-node-07 kernel: Out of memory: Killed process " + std::to_string(pid) +
         " (python) total-vm:81234567kB, anon-rss:62345678kB, file-rss:0kB, shmem-rss:0kB, "
         "UID:1000 pgtables:123456kB oom_score_adj:0\n";
}

class WatchTest : public WatchFolderTest {
 protected:
  void SetUp() override {
    WatchFolderTest::SetUp();
    lines_ = ReadLines(DataFile("workload.log.gz"));
    ASSERT_GT(lines_.size(), 1000u) << "missing " << DataFile("workload.log.gz");
    truth_ = ReadTruth(DataFile("workload.truth.jsonl"));
    ASSERT_GT(truth_.groups.size(), 20u);
  }

  // Flags of the exactly-once tests: no timer ends a stream, so the daemon's grouping is that
  // of a single read; `--once` at the end finishes every file.
  std::vector<std::string> ExactArgs() const {
    return {"--db", db_.string(), "--quiet-gap", "3600", "--settle", "3600", "--heartbeat", "0.1",
            "--log-level", "debug", dir_.string()};
  }

  void StopAndFinish(WatchProcess& w) {
    ASSERT_EQ(w.Stop(SIGTERM), 0) << w.Log();
    ASSERT_EQ(RunTriage({"watch", "--once", "--db", db_.string(), "--quiet-gap", "3600",
                         dir_.string()},
                        tmp_.path()),
              0);
  }

  // What `triage analyze` finds in `files` (each read in one go through the same pipeline:
  // EventStream with the rules' prefilter -> Analyzer), filed in a store of its own.
  std::map<std::string, int64_t> Reference(const std::vector<fs::path>& files) {
    auto loaded = core::LoadRules({std::string(TRIAGE_SOURCE_DIR) + "/rules"});
    EXPECT_TRUE(loaded.rules);
    if (!loaded.rules) return {};
    std::vector<core::Incident> incidents;
    for (const auto& f : files) {
      core::AnalyzerOptions ao;
      ao.quiet_gap_seconds = 300;
      core::Analyzer analyzer(loaded.rules, ao);
      auto src = ingest::OpenSource(f.string());
      EXPECT_TRUE(src.ok()) << f;
      if (!src.ok()) continue;
      const std::string name = f.string();
      ingest::IngestOptions io;
      loaded.rules->UsePrefilter(io, analyzer, {});
      Status st = ingest::IngestSource(**src, 0, io, [&](ingest::Event&& ev) {
        analyzer.Add(ev, name);
        for (auto& i : analyzer.TakeClosed()) incidents.push_back(std::move(i));
      });
      EXPECT_TRUE(st.ok()) << st.message();
      for (auto& i : analyzer.Finish()) incidents.push_back(std::move(i));
    }
    fs::path ref = tmp_ / ("ref-" + std::to_string(++refs_) + ".db");
    auto db = store::Store::Open(ref.string());
    EXPECT_TRUE(db.ok()) << db.status().message();
    if (!db.ok()) return {};
    auto rec = db->Record(incidents);
    EXPECT_TRUE(rec.ok()) << rec.status().message();
    return CauseOccurrences(ref);
  }

  // How many daemons have started so far (their "watch.start" lines in the shared log).
  size_t Starts() const {
    std::ifstream in(tmp_ / "watch.log");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string log = ss.str();
    size_t n = 0;
    for (size_t k = log.find("event=watch.start"); k != std::string::npos;
         k = log.find("event=watch.start", k + 1))
      ++n;
    return n;
  }

  // Waits until the running daemon has read `bytes` bytes (its heartbeat counter).
  bool CaughtUp(int64_t bytes, std::chrono::milliseconds timeout = 30s) {
    return WaitUntil([&] { return HeartbeatCounter(db_, "bytes") >= bytes; }, timeout);
  }

  uint64_t CheckpointOf(const fs::path& path) {
    store::StoreOptions o;
    o.create = false;
    auto s = store::Store::Open(db_.string(), o);
    if (!s.ok()) return 0;
    auto cp = s->GetCheckpoint(path.string());
    return cp.ok() && *cp ? (*cp)->offset : 0;
  }

  void ExpectSameCounts(const std::map<std::string, int64_t>& expected) {
    auto got = CauseOccurrences(db_);
    EXPECT_GT(TotalOccurrences(expected), 0) << "the reference found no incident";
    EXPECT_EQ(got, expected) << "daemon:\n" << ToString(got) << "analyze:\n" << ToString(expected);
  }

  // Every truth incident of the workload, written `copies` times, stored exactly once each.
  void ExpectTruthCounts(int64_t copies = 1) {
    auto got = truth_.ByRootCause(CauseOccurrences(db_));
    auto want = truth_.PerCause(copies);
    EXPECT_EQ(got, want) << "daemon:\n" << ToString(got) << "truth:\n" << ToString(want);
  }

  std::vector<std::string> lines_;
  WorkloadTruth truth_;
  int refs_ = 0;
};

TEST_F(WatchTest, AppendsAreReadOnceAsTheyArrive) {
  fs::path log = dir_ / "app.log";
  Append(log, lines_, 0, 10);
  WatchProcess w(tmp_.path(), ExactArgs());
  for (size_t from = 10; from < lines_.size(); from += 300) {
    Append(log, lines_, from, from + 300);
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(log)))) << w.Log();
  StopAndFinish(w);
  ExpectSameCounts(Reference({log}));
  ExpectTruthCounts();
}

TEST_F(WatchTest, TheWholeWorkloadEveryIncidentOnce) {
  // Per root cause, the truth sidecar's incidents against what the daemon stored; the daemon
  // must agree with analyze exactly (above), and this records how both compare with the truth.
  fs::path log = dir_ / "app.log";
  Append(log, lines_, 0, lines_.size());
  ASSERT_EQ(RunTriage({"watch", "--once", "--db", db_.string(), dir_.string()}, tmp_.path()), 0);
  EXPECT_EQ(CauseOccurrences(db_), Reference({log}));
  // The generator's groups are each rank's failure; interleaved groups of one cause are one job.
  EXPECT_LT(TotalOccurrences(truth_.PerCause()), static_cast<int64_t>(truth_.groups.size()));
  ExpectTruthCounts();
}

TEST_F(WatchTest, RotationByRenameFinishesTheOldFileAndFollowsTheNew) {
  fs::path log = dir_ / "app.log";
  fs::path rotated = dir_ / "app.log.1";
  // The old file ends at b, the new one starts there; a, where the rename happens, may fall
  // inside an incident.
  size_t a = lines_.size() * 2 / 5, b = truth_.CutNear(lines_.size() * 3 / 5);
  Append(log, lines_, 0, a);
  WatchProcess w(tmp_.path(), ExactArgs());
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(log)))) << w.Log();
  // The writer still holds the old file open after the rename (as before logrotate's HUP).
  int old_fd = open(log.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(old_fd, 0);
  fs::rename(log, rotated);
  std::string tail_of_old;
  for (size_t i = a; i < b; ++i) tail_of_old += lines_[i];
  ASSERT_EQ(write(old_fd, tail_of_old.data(), tail_of_old.size()),
            static_cast<ssize_t>(tail_of_old.size()));
  close(old_fd);
  Append(log, lines_, b, lines_.size());
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(rotated) + FileSize(log)))) << w.Log();
  StopAndFinish(w);
  ExpectSameCounts(Reference({rotated, log}));
  ExpectTruthCounts();
}

TEST_F(WatchTest, CopytruncateReadsTheCopyOnlyFromWhereTheOriginalStopped) {
  fs::path log = dir_ / "app.log";
  fs::path copy = dir_ / "app.log.1";
  size_t a = truth_.CutNear(lines_.size() / 2);
  Append(log, lines_, 0, a);
  WatchProcess w(tmp_.path(), ExactArgs());
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(log)))) << w.Log();
  fs::copy_file(log, copy);
  ASSERT_EQ(truncate(log.c_str(), 0), 0);
  Append(log, lines_, a, lines_.size());
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(copy) + FileSize(log)))) << w.Log();
  StopAndFinish(w);
  ExpectSameCounts(Reference({copy, log}));
  ExpectTruthCounts();
  EXPECT_NE(w.Log().find("event=file.truncated"), std::string::npos);
}

TEST_F(WatchTest, CopytruncateWhileTheOriginalIsStillBeingRead) {
  fs::path log = dir_ / "app.log";
  fs::path copy = dir_ / "app.log.1";
  size_t a = truth_.CutNear(lines_.size() * 3 / 4);
  Append(log, lines_, 0, 50);
  WatchProcess w(tmp_.path(), ExactArgs());
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(log)))) << w.Log();
  // The rest of the first part, copied and truncated at once: the daemon may not have read it.
  Append(log, lines_, 50, a);
  fs::copy_file(log, copy);
  ASSERT_EQ(truncate(log.c_str(), 0), 0);
  Append(log, lines_, a, lines_.size());
  ASSERT_TRUE(WaitUntil(
      [&] {
        return CheckpointOf(log) == FileSize(log) ||
               HeartbeatCounter(db_, "bytes") >= static_cast<int64_t>(FileSize(copy) + FileSize(log));
      },
      30s))
      << w.Log();
  std::this_thread::sleep_for(300ms);
  StopAndFinish(w);
  ExpectSameCounts(Reference({copy, log}));
  ExpectTruthCounts();
}

TEST_F(WatchTest, CopyThenDeleteIsNotReadTwice) {
  // A rotation done as `cp app.log app.log.1 && rm app.log`: the copy holds bytes read from the
  // original (finished through its descriptor), so nothing of it is read again.
  fs::path log = dir_ / "app.log";
  fs::path copy = dir_ / "app.log.1";
  size_t a = truth_.CutNear(lines_.size() / 2);
  Append(log, lines_, 0, a);
  WatchProcess w(tmp_.path(), ExactArgs());
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(log)))) << w.Log();
  fs::copy_file(log, copy);
  fs::remove(log);
  Append(log, lines_, a, lines_.size());
  ASSERT_TRUE(WaitUntil([&] { return w.Log().find("event=file.copy") != std::string::npos; }, 10s))
      << w.Log();
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(copy) + FileSize(log)))) << w.Log();
  StopAndFinish(w);
  ExpectSameCounts(Reference({copy, log}));
  ExpectTruthCounts();
}

TEST_F(WatchTest, DeleteAndRecreateIsANewFile) {
  fs::path log = dir_ / "app.log";
  size_t a = truth_.CutNear(lines_.size() / 2);
  Append(log, lines_, 0, a);
  WatchProcess w(tmp_.path(), ExactArgs());
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(log)))) << w.Log();
  fs::create_directories(tmp_ / "old");
  fs::path old = tmp_ / "old" / "app.log";  // same name: same service, for the reference
  fs::copy_file(log, old);
  uint64_t first = FileSize(log);
  fs::remove(log);
  Append(log, lines_, a, lines_.size());
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(first + FileSize(log)))) << w.Log();
  StopAndFinish(w);
  ExpectSameCounts(Reference({old, log}));
  ExpectTruthCounts();
  EXPECT_NE(w.Log().find("why=deleted"), std::string::npos) << w.Log();
}

TEST_F(WatchTest, ACompressedRotationIsNotReadAgain) {
  fs::path log = dir_ / "app.log";
  Append(log, lines_, 0, lines_.size());
  std::vector<std::string> args = ExactArgs();
  args.insert(args.begin(), {"--include", "*.log*"});
  WatchProcess w(tmp_.path(), args);
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(log)))) << w.Log();
  // logrotate: rename, then compress (a new file) and delete the uncompressed one. The name is
  // what tells; the bytes here are left plain so that reading them would show in the counts.
  fs::rename(log, dir_ / "app.log.1");
  fs::copy_file(dir_ / "app.log.1", dir_ / "app.log.1.gz");
  fs::remove(dir_ / "app.log.1");
  ASSERT_TRUE(WaitUntil([&] { return w.Log().find("event=file.skip") != std::string::npos; }, 10s))
      << w.Log();
  ASSERT_EQ(w.Stop(SIGTERM), 0);
  ASSERT_EQ(RunTriage({"watch", "--once", "--include", "*.log*", "--db", db_.string(),
                       dir_.string()},
                      tmp_.path()),
            0);
  fs::create_directories(tmp_ / "ref");
  fs::copy_file(dir_ / "app.log.1.gz", tmp_ / "ref" / "app.log");
  ExpectSameCounts(Reference({tmp_ / "ref" / "app.log"}));
  ExpectTruthCounts();
}

TEST_F(WatchTest, AThousandFilesInOneFolder) {
  constexpr int kFiles = 1000;
  // Live settings: incidents must be written while the daemon runs, soon after each failure.
  WatchProcess w(tmp_.path(), {"--db", db_.string(), "--quiet-gap", "3600", "--heartbeat", "0.2",
                               dir_.string()});
  ASSERT_TRUE(WaitUntil([&] { return HeartbeatCounter(db_, "running") == 1; }, 10s)) << w.Log();
  std::vector<fs::path> files;
  for (int i = 0; i < kFiles; ++i) {
    fs::path f = dir_ / ("svc-" + std::to_string(i) + ".log");
    std::ofstream out(f);
    out << "2026-11-02 09:24:01 INFO serving request " << i << "\n"
        << "2026-11-02 09:24:02 INFO batch done\n"
        << OomKill(10000 + i);
    files.push_back(f);
  }
  auto expected = Reference(files);
  ASSERT_EQ(TotalOccurrences(expected), kFiles) << ToString(expected);
  ASSERT_TRUE(WaitUntil([&] { return TotalOccurrences(CauseOccurrences(db_)) >= kFiles; }, 60s))
      << ToString(CauseOccurrences(db_)) << w.Log().substr(0, 4000);
  EXPECT_EQ(HeartbeatCounter(db_, "files") >= 0, true);
  ASSERT_EQ(w.Stop(SIGTERM), 0);
  ExpectSameCounts(expected);
}

TEST_F(WatchTest, RestartMidStreamNeitherSkipsNorRepeats) {
  fs::path log = dir_ / "app.log";
  size_t half = lines_.size() / 2;
  Append(log, lines_, 0, half);
  {
    WatchProcess w(tmp_.path(), ExactArgs());
    ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(log)))) << w.Log();
    ASSERT_EQ(w.Stop(SIGTERM), 0) << w.Log();
  }
  Append(log, lines_, half, lines_.size());
  uint64_t from = CheckpointOf(log);
  WatchProcess w(tmp_.path(), ExactArgs());
  ASSERT_TRUE(CaughtUp(static_cast<int64_t>(FileSize(log) - from))) << w.Log();
  StopAndFinish(w);
  ExpectSameCounts(Reference({log}));
  ExpectTruthCounts();
}

TEST_F(WatchTest, SigkillDuringHeavyAppendsLosesNothingAndCountsNothingTwice) {
  // Two services' logs written at once, chunk by chunk, each getting the whole workload
  // kPasses times over.
  constexpr int kPasses = 2;
  std::vector<fs::path> logs = {dir_ / "a.log", dir_ / "b.log"};
  std::atomic<bool> done{false};
  std::thread writer([&] {
    std::mt19937 rng(7);
    for (int pass = 0; pass < kPasses; ++pass) {
      size_t from[2] = {0, 0};
      while (from[0] < lines_.size() || from[1] < lines_.size()) {
        for (size_t k = 0; k < 2; ++k) {
          if (from[k] >= lines_.size()) continue;
          size_t n = 50 + rng() % 400;
          Append(logs[k], lines_, from[k], from[k] + n);
          from[k] += n;
          std::this_thread::sleep_for(std::chrono::milliseconds((2 + rng() % 6) * kSlowdown));
        }
      }
    }
    done = true;
  });
  std::mt19937 rng(11);
  int kills = 0;
  while (!done) {
    WatchProcess w(tmp_.path(), ExactArgs());
    std::this_thread::sleep_for(std::chrono::milliseconds((150 + rng() % 250) * kSlowdown));
    EXPECT_EQ(w.Stop(SIGKILL), 128 + SIGKILL);
    ++kills;
  }
  writer.join();
  EXPECT_GE(kills, 2);
  {
    WatchProcess w(tmp_.path(), ExactArgs());
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(w.Stop(SIGKILL), 128 + SIGKILL);
  }
  ASSERT_EQ(RunTriage({"watch", "--once", "--db", db_.string(), "--quiet-gap", "3600",
                       dir_.string()},
                      tmp_.path()),
            0);
  ExpectSameCounts(Reference(logs));
  ExpectTruthCounts(2 * kPasses);
}

// Crash-loop blocks: a job's progress lines, its OOM kill, and the supervisor restarting it.
// The restart closes the incident, so the pipeline settles after every block and the
// checkpoint moves through the file while it is written: restarts resume in mid-file.
std::string CrashLoopBlock(int n, std::mt19937& rng) {
  std::string b;
  int lines = 20 + static_cast<int>(rng() % 40);
  for (int i = 0; i < lines; ++i)
    b += "2026-11-02 09:" + std::to_string(10 + n % 50) + ":" + std::to_string(10 + i % 50) +
         " INFO step " + std::to_string(n * 100 + i) + " loss=0." + std::to_string(rng() % 1000) +
         "\n";
  b += "2026-11-02 09:" + std::to_string(10 + n % 50) +
       ":59 Out of memory: Killed process " + std::to_string(1000 + n) +
       " (python) total-vm:81234567kB, anon-rss:62345678kB, file-rss:0kB\n";
  b += "2026-11-02 09:" + std::to_string(10 + n % 50) +
       ":59 Scheduled restart job, restart counter is at " + std::to_string(n + 1) + ".\n";
  return b;
}

TEST_F(WatchTest, SigkillWhileCheckpointsMoveResumesInMidFileExactly) {
  constexpr int kFiles = 3, kBlocksPerFile = 400;
  std::vector<fs::path> logs;
  for (int i = 0; i < kFiles; ++i) logs.push_back(dir_ / ("job-" + std::to_string(i) + ".log"));
  std::atomic<bool> done{false};
  std::thread writer([&] {
    std::mt19937 rng(5);
    for (int n = 0; n < kBlocksPerFile; ++n) {
      for (const auto& log : logs) Append(log, {CrashLoopBlock(n, rng)}, 0, 1);
      std::this_thread::sleep_for(std::chrono::milliseconds((4 + rng() % 6) * kSlowdown));
    }
    done = true;
  });
  std::mt19937 rng(13);
  int kills = 0;
  auto committed = [&] {
    uint64_t sum = 0;
    for (const auto& log : logs) sum += CheckpointOf(log);
    return sum;
  };
  while (!done) {
    const uint64_t before = committed();
    WatchProcess w(tmp_.path(), ExactArgs());
    // The kill comes at a random point after this life's first commit: on a loaded machine the
    // first incidents are stored well after watch.start (rules compiled on first use, the backlog
    // analysed), longer than the kill interval, and a life killed before it commits anything
    // tests no resumption.
    ASSERT_TRUE(WaitUntil([&] { return done || committed() > before; }, 30s)) << w.Log();
    std::this_thread::sleep_for(std::chrono::milliseconds((300 + rng() % 400) * kSlowdown));
    EXPECT_EQ(w.Stop(SIGKILL), 128 + SIGKILL);
    ++kills;
  }
  writer.join();
  {
    auto starts = [&](const std::string& log) {
      size_t n = 0;
      for (size_t k = log.find("event=watch.start"); k != std::string::npos;
           k = log.find("event=watch.start", k + 1))
        ++n;
      return n;
    };
    size_t before = 0;
    {
      std::ifstream in(tmp_ / "watch.log");
      std::stringstream ss;
      ss << in.rdbuf();
      before = starts(ss.str());
    }
    WatchProcess w(tmp_.path(), ExactArgs());
    ASSERT_TRUE(WaitUntil([&] { return starts(w.Log()) > before; }, 10s));
    int64_t total = 0;
    for (const auto& log : logs) total += static_cast<int64_t>(FileSize(log));
    // Every block's incident closes by itself: no `--once` needed to see them all.
    ASSERT_TRUE(WaitUntil(
        [&] { return TotalOccurrences(CauseOccurrences(db_)) >= kFiles * kBlocksPerFile; }, 30s))
        << ToString(CauseOccurrences(db_));
    std::string log = w.Log();
    EXPECT_EQ(w.Stop(SIGTERM), 0);
    // Some restart resumed a file from a checkpoint inside it (not from its start).
    bool resumed_mid_file = false;
    for (size_t k = log.find("event=file.open"); k != std::string::npos;
         k = log.find("event=file.open", k + 1)) {
      auto o = log.find("offset=", k);
      if (o != std::string::npos && log.compare(o, 9, "offset=0 ") != 0) resumed_mid_file = true;
    }
    EXPECT_GE(kills, 2);
    std::string opens;
    for (size_t k = log.find("event=watch.start"); k != std::string::npos;
         k = log.find("event=watch.start", k + 1))
      opens += log.substr(log.rfind('\n', k) + 1, log.find('\n', k) - log.rfind('\n', k)) ;
    for (size_t k = log.find("event=file.open"); k != std::string::npos;
         k = log.find("event=file.open", k + 1))
      opens += log.substr(k, log.find('\n', k) - k + 1);
    EXPECT_TRUE(resumed_mid_file) << opens;
  }
  auto got = CauseOccurrences(db_);
  EXPECT_EQ(got["host.oom_killed"], kFiles * kBlocksPerFile) << ToString(got);
  ExpectSameCounts(Reference(logs));
}

TEST_F(WatchTest, CopytruncateWhileTheDaemonIsDown) {
  // Crash-loop blocks, so that the checkpoint stands at the end of what was read.
  fs::path log = dir_ / "job.log";
  fs::path copy = dir_ / "job.log.1";
  std::mt19937 rng(3);
  int n = 0;
  auto blocks = [&](int count) {
    std::string b;
    for (int i = 0; i < count; ++i) b += CrashLoopBlock(n++, rng);
    return std::vector<std::string>{b};
  };
  Append(log, blocks(100), 0, 1);
  {
    WatchProcess w(tmp_.path(), ExactArgs());
    ASSERT_TRUE(WaitUntil([&] { return CheckpointOf(log) == FileSize(log); }, 20s)) << w.Log();
    ASSERT_EQ(w.Stop(SIGTERM), 0);
  }
  std::this_thread::sleep_for(1100ms);  // the copy is younger than the checkpoint (1 s clock)
  Append(log, blocks(20), 0, 1);         // written while the daemon was down, before the copy
  fs::copy_file(log, copy);
  ASSERT_EQ(truncate(log.c_str(), 0), 0);
  Append(log, blocks(50), 0, 1);
  size_t before = Starts();
  WatchProcess w(tmp_.path(), ExactArgs());
  ASSERT_TRUE(WaitUntil([&] { return Starts() > before; }, 10s)) << w.Log();
  StopAndFinish(w);
  EXPECT_EQ(CauseOccurrences(db_)["host.oom_killed"], 170) << ToString(CauseOccurrences(db_));
  EXPECT_NE(w.Log().find("event=file.copy"), std::string::npos) << w.Log();
}

TEST_F(WatchTest, AFatalLineIsStoredWithoutWaitingForTheQuietGap) {
  fs::path log = dir_ / "trainer.log";
  Append(log, {"2026-11-02 09:24:00 INFO step 100\n"}, 0, 1);
  WatchProcess w(tmp_.path(), {"--db", db_.string(), "--quiet-gap", "3600", dir_.string()});
  ASSERT_TRUE(WaitUntil([&] { return HeartbeatCounter(db_, "running") == 1; }, 10s)) << w.Log();
  auto start = std::chrono::steady_clock::now();
  Append(log, {OomKill(4242)}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return TotalOccurrences(CauseOccurrences(db_)) == 1; }, 5s))
      << w.Log();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start);
  EXPECT_LT(ms.count(), 2000);
  EXPECT_EQ(CauseOccurrences(db_).count("host.oom_killed"), 1u) << ToString(CauseOccurrences(db_));
  ASSERT_EQ(w.Stop(SIGINT), 0);
}

TEST_F(WatchTest, SighupWithABrokenRuleFileKeepsTheOldRules) {
  fs::path user_rules = tmp_ / "rules";
  fs::create_directories(user_rules);
  WatchProcess w(tmp_.path(), {"--db", db_.string(), "--rules", user_rules.string(),
                               "--quiet-gap", "3600", dir_.string()});
  ASSERT_TRUE(WaitUntil([&] { return HeartbeatCounter(db_, "running") == 1; }, 10s)) << w.Log();
  {
    std::ofstream bad(user_rules / "broken.toml");
    bad << "[[signature]]\nid = \"user.broken\"\npattern = '''(unclosed'''\n";
  }
  w.Signal(SIGHUP);
  ASSERT_TRUE(WaitUntil([&] { return w.Log().find("event=reload") != std::string::npos; }, 10s))
      << w.Log();
  EXPECT_NE(w.Log().find("level=error event=reload"), std::string::npos) << w.Log();
  ASSERT_TRUE(w.Running());
  Append(dir_ / "svc.log", {OomKill(777)}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return TotalOccurrences(CauseOccurrences(db_)) == 1; }, 10s))
      << w.Log();
  ASSERT_EQ(w.Stop(SIGTERM), 0);
}

TEST_F(WatchTest, StatusReadsTheHeartbeat) {
  std::string out;
  EXPECT_EQ(RunTriage({"status", "--db", db_.string()}, tmp_.path(), &out), 2)
      << "no database yet: " << out;
  Append(dir_ / "x.log", lines_, 0, 100);
  WatchProcess w(tmp_.path(), {"--db", db_.string(), "--heartbeat", "0.1", dir_.string()});
  ASSERT_TRUE(WaitUntil([&] { return HeartbeatCounter(db_, "bytes") > 0; }, 10s)) << w.Log();
  EXPECT_EQ(RunTriage({"status", "--db", db_.string()}, tmp_.path(), &out), 0);
  EXPECT_NE(out.find("running"), std::string::npos) << out;
  EXPECT_NE(out.find("files:      1"), std::string::npos) << out;
  ASSERT_EQ(w.Stop(SIGTERM), 0);
  EXPECT_EQ(RunTriage({"status", "--db", db_.string(), "--json"}, tmp_.path(), &out), 1);
  EXPECT_NE(out.find("\"state\":\"stopped\""), std::string::npos) << out;
}

TEST_F(WatchTest, OnceTwiceAddsNothingTheSecondTime) {
  Append(dir_ / "app.log", lines_, 0, lines_.size());
  ASSERT_EQ(RunTriage({"watch", "--once", "--db", db_.string(), dir_.string()}, tmp_.path()), 0);
  auto first = CauseOccurrences(db_);
  ASSERT_GT(TotalOccurrences(first), 0);
  ASSERT_EQ(RunTriage({"watch", "--once", "--db", db_.string(), dir_.string()}, tmp_.path()), 0);
  EXPECT_EQ(CauseOccurrences(db_), first);
}

TEST_F(WatchTest, RecursiveFindsFilesInSubfoldersCreatedLater) {
  WatchProcess w(tmp_.path(), {"--db", db_.string(), "--recursive", "--quiet-gap", "3600",
                               dir_.string()});
  ASSERT_TRUE(WaitUntil([&] { return HeartbeatCounter(db_, "running") == 1; }, 10s)) << w.Log();
  fs::create_directories(dir_ / "node1");
  std::this_thread::sleep_for(100ms);  // the new folder's watch
  Append(dir_ / "node1" / "svc.log", {OomKill(99)}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return TotalOccurrences(CauseOccurrences(db_)) == 1; }, 10s))
      << w.Log();
  ASSERT_EQ(w.Stop(SIGTERM), 0);
}

TEST_F(WatchTest, VerifyAddsVerdictsInTheBackground) {
  WatchProcess w(tmp_.path(), {"--db", db_.string(), "--verify", "--quiet-gap", "3600",
                               dir_.string()});
  ASSERT_TRUE(WaitUntil([&] { return HeartbeatCounter(db_, "running") == 1; }, 10s)) << w.Log();
  Append(dir_ / "svc.log", {OomKill(4321)}, 0, 1);
  // The incident is written first (ingestion does not wait for the checks)...
  ASSERT_TRUE(WaitUntil([&] { return TotalOccurrences(CauseOccurrences(db_)) == 1; }, 10s))
      << w.Log();
  // ...and its verdicts follow from the background thread.
  auto verdicts = [&] {
    store::StoreOptions o;
    o.create = false;
    auto s = store::Store::Open(db_.string(), o);
    if (!s.ok()) return size_t{0};
    auto h = s->History({});
    if (!h.ok() || h->empty()) return size_t{0};
    auto inc = s->GetIncident(h->front().id);
    if (!inc.ok()) return size_t{0};
    size_t n = 0;
    for (const auto& c : inc->incident.causes) n += c.verifications.size();
    return n;
  };
  ASSERT_TRUE(WaitUntil([&] { return verdicts() > 0; }, 30s)) << w.Log();
  // The worker logs after it has written the verdicts.
  EXPECT_TRUE(WaitUntil([&] { return w.Log().find("event=verify.done") != std::string::npos; },
                        5s))
      << w.Log();
  ASSERT_EQ(w.Stop(SIGTERM), 0);
}

TEST_F(WatchTest, UsageErrors) {
  EXPECT_EQ(RunTriage({"watch", "--db", db_.string()}, tmp_.path()), 2);  // no folder
  EXPECT_EQ(RunTriage({"watch", "--quiet-gap", "soon", dir_.string()}, tmp_.path()), 2);
  // A missing FILE in a folder that exists is followed by name (tail -F); one whose folder is
  // missing too is neither a folder nor a file.
  EXPECT_EQ(RunTriage({"watch", "--db", db_.string(), (tmp_ / "missing" / "app.log").string()},
                      tmp_.path()),
            2);
}

}  // namespace
}  // namespace triage::daemon::testing

// `triage watch` and one job's failure (DESIGN.md section 5b): the workers of a tensor-parallel
// service crashing together are stored as one occurrence, not one per worker.
#include <signal.h>

#include <gtest/gtest.h>

#include "daemon_harness.h"

namespace triage::daemon::testing {
namespace {

using namespace std::chrono_literals;

// SGLang's scheduler of tensor-parallel rank `tp` of eight printing the CUDA error that killed
// them all.
std::string WorkerCrash(int tp) {
  const std::string p = "[2026-11-02 09:14:03 TP" + std::to_string(tp) + "] ";
  return p + "Scheduler hit an exception: Traceback (most recent call last):\n" + p +
         "  File \"/sgl/managers/scheduler.py\", line 1890, in run_scheduler_process\n" + p +
         "    scheduler.event_loop_overlap()\n" + p +
         "RuntimeError: CUDA error: an illegal memory access was encountered\n";
}

TEST(DaemonJobs, ATensorParallelEightCrashIsStoredAsOneOccurrence) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const fs::path dir = tmp / "logs", db = tmp / "watch.db";
  fs::create_directories(dir);
  fs::create_directories(tmp / "config");
  WatchProcess w(tmp.path(), {"--db", db.string(), "--quiet-gap", "3600", "--heartbeat", "0.1",
                              dir.string()});
  ASSERT_TRUE(WaitUntil([&] { return HeartbeatCounter(db, "running") == 1; }, 10s)) << w.Log();
  const fs::path log = dir / "sglang.log";
  Append(log, {"[2026-11-02 09:14:00 TP0] Load weight end.\n"}, 0, 1);
  // Each worker writes its own lines, a little after the one before.
  for (int tp = 0; tp < 8; ++tp) {
    Append(log, {WorkerCrash(tp)}, 0, 1);
    std::this_thread::sleep_for(30ms);
  }
  ASSERT_TRUE(WaitUntil([&] { return TotalOccurrences(CauseOccurrences(db)) >= 1; }, 10s))
      << w.Log();
  std::this_thread::sleep_for(1500ms);  // nothing more comes
  EXPECT_EQ(TotalOccurrences(CauseOccurrences(db)), 1) << ToString(CauseOccurrences(db));
  EXPECT_EQ(CauseOccurrences(db).count("cuda.illegal_memory_access"), 1u)
      << ToString(CauseOccurrences(db));
  EXPECT_EQ(w.Stop(SIGTERM), 0);
  EXPECT_EQ(TotalOccurrences(CauseOccurrences(db)), 1) << ToString(CauseOccurrences(db));
}

// The files of one job in a watched folder (torchrun's --log-dir layout, recorded on a GPU host:
// rank 1 ran out of memory, rank 0's all-reduce lost its peer) read in one pass: one incident of
// the job, rank 1's cause, rank 0's NCCL error folded under it, the job's processes stored.
TEST(DaemonJobs, TheRankFilesOfOneJobAreStoredAsOneIncident) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const fs::path dir = tmp / "logs", db = tmp / "watch.db";
  fs::create_directories(tmp / "config");
  fs::copy(fs::path(TRIAGE_SOURCE_DIR) / "tests/data/jobs/job_oom/logs", dir,
           fs::copy_options::recursive);
  ASSERT_EQ(RunTriage({"watch", "--once", "--recursive", "--db", db.string(), dir.string()},
                      tmp.path()),
            0);
  const auto causes = CauseOccurrences(db);
  EXPECT_EQ(TotalOccurrences(causes), 1) << ToString(causes);
  EXPECT_EQ(causes.count("cuda.oom"), 1u) << ToString(causes);
  std::string out;
  ASSERT_EQ(RunTriage({"show", "1", "--db", db.string()}, tmp.path(), &out), 0);
  EXPECT_NE(out.find("rank 1 failed first; also rank 0"), std::string::npos) << out;
  EXPECT_NE(out.find("timeline:"), std::string::npos) << out;
}

// The run folder of a recorded job (tests/data/jobs/ID/logs/<run id>_<random>), and one rank's
// folder of it copied to `to`/`run`/attempt_0/`rank`, as torchrun writes it.
fs::path RecordedRun(const std::string& id) {
  for (const auto& e : fs::directory_iterator(fs::path(TRIAGE_SOURCE_DIR) / "tests/data/jobs" / id / "logs"))
    if (e.is_directory()) return e.path();
  return {};
}
void CopyRank(const fs::path& run, int rank, const fs::path& to, const std::string& as_run) {
  const fs::path dest = to / as_run / "attempt_0" / std::to_string(rank);
  fs::create_directories(dest.parent_path());
  fs::copy(run / "attempt_0" / std::to_string(rank), dest, fs::copy_options::recursive);
}

// The incident stored as `id` in the store `db` (a file or a server's URL).
std::optional<store::StoredIncident> Stored(const std::string& db, int64_t id) {
  store::StoreOptions o;
  o.create = false;
  auto s = store::Store::Open(db, o);
  if (!s.ok()) return std::nullopt;
  auto got = s->GetIncident(id);
  if (!got.ok()) return std::nullopt;
  return std::move(*got);
}

// A rank's files arriving seconds after its peer's, as on a real job (the recorded job_oom:
// rank 1 ran out of memory, rank 0's all-reduce lost its peer): rank 1's incident is stored by
// one batch; rank 0's, closed by a later one, joins it instead of making a second incident, and
// the stored incident's ranks, actors and first actor then name both, rank 1 first.
TEST(DaemonJobs, ARankFailingInALaterBatchJoinsTheJobsStoredIncident) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const fs::path dir = tmp / "logs", db = tmp / "watch.db";
  fs::create_directories(dir);
  fs::create_directories(tmp / "config");
  WatchProcess w(tmp.path(), {"--db", db.string(), "--quiet-gap", "1", "--heartbeat", "0.1",
                              "--recursive", dir.string()});
  ASSERT_TRUE(WaitUntil([&] { return HeartbeatCounter(db, "running") == 1; }, 10s)) << w.Log();
  const fs::path run = RecordedRun("job_oom");
  ASSERT_FALSE(run.empty());
  CopyRank(run, 1, dir, "job42_k3j9xq2a");
  ASSERT_TRUE(WaitUntil([&] { return TotalOccurrences(CauseOccurrences(db)) >= 1; }, 15s)) << w.Log();
  auto first = Stored(db.string(), 1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->incident.job, "torchrun job42 attempt_0");
  std::this_thread::sleep_for(2s);
  CopyRank(run, 0, dir, "job42_k3j9xq2a");
  ASSERT_TRUE(WaitUntil([&] {
    auto inc = Stored(db.string(), 1);
    return inc && inc->incident.ranks.size() >= 2;
  }, 15s)) << w.Log();
  std::this_thread::sleep_for(1500ms);  // nothing more comes
  EXPECT_EQ(w.Stop(SIGTERM), 0);
  const auto causes = CauseOccurrences(db);
  EXPECT_EQ(TotalOccurrences(causes), 1) << ToString(causes);
  EXPECT_EQ(causes.count("cuda.oom"), 1u) << ToString(causes);
  auto inc = Stored(db.string(), 1);
  ASSERT_TRUE(inc);
  EXPECT_EQ(inc->incident.actors, (std::vector<std::string>{"rank 1", "rank 0"}));
  ASSERT_EQ(inc->incident.ranks.size(), 2u);
  EXPECT_EQ(inc->incident.ranks[0].actor, "rank 1");
  EXPECT_EQ(inc->incident.ranks[0].state, "failed");
  EXPECT_EQ(inc->incident.ranks[1].actor, "rank 0");
  EXPECT_EQ(inc->incident.ranks[1].state, "victim");
  ASSERT_FALSE(inc->incident.causes.empty());
  bool nccl_symptom = false;
  for (const auto& s : inc->incident.causes[0].symptoms) nccl_symptom |= s.cause.rfind("nccl.failure", 0) == 0;
  EXPECT_TRUE(nccl_symptom);
}

}  // namespace
}  // namespace triage::daemon::testing

// `triage watch` with its default timers: how soon a crash is stored (a traceback as well as a
// fatal line), what is not a crash (a caught exception the service survives), SIGTERM, and
// the guards around the database (one daemon per database; a database deleted under it).
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "daemon_harness.h"

namespace triage::daemon::testing {
namespace {

using namespace std::chrono_literals;

// A PyTorch CUDA OOM as a training script prints it: the traceback is printed by the script's
// handler (its outermost frame is not `<module>`), so only the file going quiet, with no line
// showing the process at work, makes it a failure.
std::string CudaOomTraceback() {
  return "2026-11-02 09:24:00 INFO step 100 loss=0.42\n"
         "2026-11-02 09:24:01 ERROR step failed\n"
         "Traceback (most recent call last):\n"
         "  File \"/app/trainer.py\", line 211, in run_step\n"
         "    loss = self.model(batch)\n"
         "  File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line 1553, in "
         "_call_impl\n"
         "    return forward_call(*args, **kwargs)\n"
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
         "total capacity of 79.15 GiB of which 1.02 GiB is free.\n";
}

// A request handler's traceback, logged by a server that goes on serving.
std::string HandlerTraceback() {
  return "2026-11-02 09:24:01 ERROR Exception in ASGI application\n"
         "Traceback (most recent call last):\n"
         "  File \"/app/server.py\", line 88, in completions\n"
         "    prompt = body[\"prompt\"]\n"
         "KeyError: 'prompt'\n";
}

class CrashTest : public WatchFolderTest {
 protected:
  std::vector<std::string> Args() const {
    return {"--db", db_.string(), "--quiet-gap", "3600", "--heartbeat", "0.1", dir_.string()};
  }
  bool Running(WatchProcess&) {
    return WaitUntil([&] { return HeartbeatCounter(db_, "running") == 1; }, 10s);
  }
  int64_t Stored() { return TotalOccurrences(CauseOccurrences(db_)); }
};

TEST_F(CrashTest, ATracebackCrashIsStoredWithinTwoSecondsOfTheFileGoingQuiet) {
  WatchProcess w(tmp_.path(), Args());
  ASSERT_TRUE(Running(w)) << w.Log();
  auto start = std::chrono::steady_clock::now();
  Append(dir_ / "trainer.log", {CudaOomTraceback()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Stored() == 1; }, 5s)) << w.Log();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  EXPECT_LT(ms.count(), 2000);
  EXPECT_EQ(CauseOccurrences(db_).count("cuda.oom"), 1u) << ToString(CauseOccurrences(db_));
  EXPECT_EQ(w.Stop(SIGTERM), 0);
}

TEST_F(CrashTest, ACaughtExceptionTheServiceSurvivesIsNotStored) {
  WatchProcess w(tmp_.path(), Args());
  ASSERT_TRUE(Running(w)) << w.Log();
  fs::path log = dir_ / "server.log";
  Append(log, {HandlerTraceback()}, 0, 1);
  std::this_thread::sleep_for(300ms);  // a later write, within the traceback settle time
  Append(log,
         {"INFO:     10.0.0.7:51234 - \"POST /v1/completions HTTP/1.1\" 200 OK\n"
          "INFO:     10.0.0.7:51236 - \"POST /v1/completions HTTP/1.1\" 200 OK\n"},
         0, 1);
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(Stored(), 0) << ToString(CauseOccurrences(db_)) << w.Log();
  EXPECT_EQ(w.Stop(SIGTERM), 0);
  EXPECT_EQ(Stored(), 0) << ToString(CauseOccurrences(db_));
}

TEST_F(CrashTest, ATracebackWrittenOverSeveralWritesIsOneIncident) {
  WatchProcess w(tmp_.path(), Args());
  ASSERT_TRUE(Running(w)) << w.Log();
  fs::path log = dir_ / "trainer.log";
  std::string tb = CudaOomTraceback();
  size_t cut = tb.find("torch.OutOfMemoryError");
  Append(log, {tb.substr(0, cut)}, 0, 1);  // up to the last frame
  std::this_thread::sleep_for(1500ms);      // longer than the traceback settle time
  EXPECT_EQ(Stored(), 0);
  Append(log, {tb.substr(cut)}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Stored() >= 1; }, 5s)) << w.Log();
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(Stored(), 1) << ToString(CauseOccurrences(db_));
  EXPECT_EQ(CauseOccurrences(db_).count("cuda.oom"), 1u) << ToString(CauseOccurrences(db_));
  EXPECT_EQ(w.Stop(SIGTERM), 0);
}

TEST_F(CrashTest, SigtermWritesACompleteTracebackCrashBeforeExiting) {
  // Settle times longer than the test: only the stop can write it.
  std::vector<std::string> args = Args();
  args.insert(args.begin(), {"--settle", "600"});
  WatchProcess w(tmp_.path(), args);
  ASSERT_TRUE(Running(w)) << w.Log();
  fs::path log = dir_ / "trainer.log";
  Append(log, {CudaOomTraceback()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return HeartbeatCounter(db_, "bytes") >= int64_t(FileSize(log)); },
                        10s));
  EXPECT_EQ(Stored(), 0);
  EXPECT_EQ(w.Stop(SIGTERM), 0);
  EXPECT_EQ(Stored(), 1) << ToString(CauseOccurrences(db_));
  // The next life does not write it again.
  WatchProcess again(tmp_.path(), args);
  ASSERT_TRUE(Running(again)) << again.Log();
  EXPECT_EQ(again.Stop(SIGTERM), 0);
  EXPECT_EQ(Stored(), 1) << ToString(CauseOccurrences(db_));
}

TEST_F(CrashTest, AHandlerTracebackThatEndsTheFileIsStoredWithinTwoSeconds) {
  WatchProcess w(tmp_.path(), Args());
  ASSERT_TRUE(Running(w)) << w.Log();
  auto start = std::chrono::steady_clock::now();
  Append(dir_ / "server.log", {HandlerTraceback()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Stored() == 1; }, 5s)) << w.Log();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  EXPECT_LT(ms.count(), 2000);
  EXPECT_EQ(w.Stop(SIGTERM), 0);
}

TEST_F(CrashTest, ASecondWatchOnTheSameDatabaseRefuses) {
  WatchProcess w(tmp_.path(), Args());
  ASSERT_TRUE(Running(w)) << w.Log();
  fs::path other = tmp_ / "other";
  fs::create_directories(other);
  fs::path err = tmp_ / "second.err";
  pid_t pid = Spawn({"watch", "--db", db_.string(), other.string()}, tmp_.path(),
                    tmp_ / "second.out", err);
  int rc = WaitFor(pid, 20s);
  EXPECT_NE(rc, 0);
  EXPECT_NE(rc, -1) << "the second daemon ran";
  std::ifstream in(err);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("already using"), std::string::npos) << ss.str();
  EXPECT_TRUE(w.Running());
  EXPECT_EQ(w.Stop(SIGTERM), 0);
}

TEST_F(CrashTest, ADatabaseDeletedUnderTheDaemonStopsItWithAnError) {
  WatchProcess w(tmp_.path(), Args());
  ASSERT_TRUE(Running(w)) << w.Log();
  fs::remove(db_);
  EXPECT_TRUE(WaitUntil([&] { return !w.Running(); }, 10s)) << w.Log();
  std::string log = w.Log();
  EXPECT_NE(log.find("deleted or replaced"), std::string::npos) << log;
}

}  // namespace
}  // namespace triage::daemon::testing

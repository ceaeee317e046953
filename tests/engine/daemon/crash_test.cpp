// `triage watch` with its default timers: how soon a crash is stored (a traceback, a fatal line,
// and the multi-line reports of native crashes in several languages), what is not a crash (a
// caught exception the service survives), SIGTERM, and the guards around the database (one
// daemon per database; a database deleted under it).
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "../../launcher_crash.h"
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

  // `crash` written to `name` with settle times longer than the test: nothing is stored until
  // SIGTERM, which stores it once, and the next life does not store it again.
  void ExpectOnlyTheStopWritesIt(const std::string& name, const std::string& crash) {
    std::vector<std::string> args = Args();
    args.insert(args.begin(), {"--settle", "600"});
    WatchProcess w(tmp_.path(), args);
    ASSERT_TRUE(Running(w)) << w.Log();
    fs::path log = dir_ / name;
    Append(log, {crash}, 0, 1);
    ASSERT_TRUE(WaitUntil(
        [&] { return HeartbeatCounter(db_, "bytes") >= int64_t(FileSize(log)); }, 10s));
    EXPECT_EQ(Stored(), 0);
    EXPECT_EQ(w.Stop(SIGTERM), 0);
    EXPECT_EQ(Stored(), 1) << ToString(CauseOccurrences(db_));
    WatchProcess again(tmp_.path(), args);
    ASSERT_TRUE(Running(again)) << again.Log();
    EXPECT_EQ(again.Stop(SIGTERM), 0);
    EXPECT_EQ(Stored(), 1) << ToString(CauseOccurrences(db_));
  }
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

// A rank's traceback, then its launcher's summary of the same failure written seconds later:
// one crash, as `analyze` of the whole file says.
TEST_F(CrashTest, ALauncherSummaryWrittenSecondsAfterItsRankFailedJoinsThatCrash) {
  const fs::path whole = tmp_ / "whole.log";
  using triage::testing::LauncherSummary;
  using triage::testing::RankTraceback;
  Append(whole, {RankTraceback() + LauncherSummary()}, 0, 1);
  std::string out;
  ASSERT_EQ(RunTriage({"analyze", "--json", "--no-store", whole.string()}, tmp_.path(), &out), 0);
  ASSERT_NE(out.find("\"cause\":\"cuda.oom"), std::string::npos) << out;

  WatchProcess w(tmp_.path(), Args());
  ASSERT_TRUE(Running(w)) << w.Log();
  fs::path log = dir_ / "train.log";
  Append(log, {RankTraceback()}, 0, 1);
  std::this_thread::sleep_for(2500ms);  // past every settle time: the rank's crash is stored
  Append(log, {LauncherSummary()}, 0, 1);
  std::this_thread::sleep_for(3000ms);
  EXPECT_EQ(Stored(), 1) << ToString(CauseOccurrences(db_));
  EXPECT_EQ(CauseOccurrences(db_).count("cuda.oom"), 1u) << ToString(CauseOccurrences(db_));
  EXPECT_EQ(w.Stop(SIGTERM), 0);
}

TEST_F(CrashTest, SigtermWritesACompleteTracebackCrashBeforeExiting) {
  ExpectOnlyTheStopWritesIt("trainer.log", CudaOomTraceback());
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

// A crash reported over several lines by something other than a Python traceback. Its fatal
// line sits in a multi-line event (the faulthandler dump and the C++ terminate report are blocks
// the assembler holds open for lines that may still belong to them), or is followed by indented
// frames that no open event holds (Go's goroutine dump, glog's and Rust's stacks): either way the
// file goes quiet with no sign that more is coming, and the crash is written within 2 s, as one
// incident ("Crash latency").
struct NativeCrash {
  const char* name;
  std::string text;
  size_t split;  // lines in the first of two writes (its end inside the report)
};

void PrintTo(const NativeCrash& crash, std::ostream* os) { *os << crash.name; }

// CPython's faulthandler after a segfault in an extension, as Python 3.10+ writes it.
std::string FaulthandlerDump() {
  return "2026-11-02 09:24:00 INFO starting worker\n"
         "Fatal Python error: Segmentation fault\n"
         "\n"
         "Current thread 0x00007f3b2c1ff740 (most recent call first):\n"
         "  File \"/app/crash.py\", line 12 in crash\n"
         "  File \"/app/crash.py\", line 20 in <module>\n"
         "\n"
         "Extension modules: numpy.core._multiarray_umath, torch._C (total: 2)\n";
}

std::vector<NativeCrash> NativeCrashes() {
  return {
      {"FaulthandlerDump", FaulthandlerDump(), 5},
      {"FaulthandlerDumpAndTheShellsLine", FaulthandlerDump() + "Segmentation fault (core dumped)\n",
       5},
      {"GoPanic",
       "2026/11/02 09:24:00 serving on :8080\n"
       "panic: runtime error: invalid memory address or nil pointer dereference\n"
       "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x6f3a2b]\n"
       "\n"
       "goroutine 1 [running]:\n"
       "main.(*Server).handle(0x0, {0x7d1c40, 0xc0000a6000})\n"
       "\t/app/server.go:42 +0x2b\n"
       "main.main()\n"
       "\t/app/main.go:17 +0x45\n",
       6},
      {"CxxTerminate",
       "2026-11-02 09:24:00 INFO loading model\n"
       "terminate called after throwing an instance of 'std::runtime_error'\n"
       "  what():  failed to open /models/weights.bin\n"
       "Aborted (core dumped)\n",
       2},
      {"GlibcBacktrace",
       "2026-11-02 09:24:00 INFO step 100\n"
       "*** Process received signal ***\n"
       "Signal: Segmentation fault (11)\n"
       "Signal code: Address not mapped (1)\n"
       "Failing at address: (nil)\n"
       "[ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f3b2c042520]\n"
       "[ 1] /app/libkernels.so(_ZN7kernels6launchEv+0x1c)[0x7f3b2a10b12c]\n"
       "[ 2] /app/server(main+0x45)[0x55d4c3a01245]\n"
       "*** End of error message ***\n",
       6},
      {"GlogCheckFailure",
       "I1201 16:16:57.100000  4242 server.cc:88] serving\n"
       "F1201 16:16:57.123456  4242 cuda_driver.cc:152] Check failed: status == CUDA_SUCCESS "
       "(2 vs. 0)\n"
       "*** Check failure stack trace: ***\n"
       "    @     0x7f3b2c1ff740  google::LogMessage::Fail()\n"
       "    @     0x7f3b2c1ff800  google::LogMessage::SendToLog()\n"
       "    @     0x55d4c3a01245  main\n",
       4},
      {"RustPanic",  // RUST_BACKTRACE=full: no closing note
       "2026-11-02T09:24:00Z INFO server: listening on 0.0.0.0:8000\n"
       "thread 'main' panicked at src/main.rs:12:5:\n"
       "called `Option::unwrap()` on a `None` value\n"
       "stack backtrace:\n"
       "   0:     0x55d4c3a01245 - std::panicking::begin_panic_handler\n"
       "                               at /rustc/07dca489/library/std/src/panicking.rs:645:5\n"
       "   1:     0x55d4c3a01300 - server::main\n"
       "                               at ./src/main.rs:12:5\n",
       5},
  };
}

class NativeCrashTest : public CrashTest, public ::testing::WithParamInterface<NativeCrash> {
 protected:
  // Writes `parts` to one file, `pause` apart; expects one native.crash incident stored within
  // 2 s of the last write, and no other within the settle times after it.
  void ExpectOneIncidentSoon(const std::vector<std::string>& parts,
                             std::chrono::milliseconds pause) {
    WatchProcess w(tmp_.path(), Args());
    ASSERT_TRUE(Running(w)) << w.Log();
    fs::path log = dir_ / "crash.log";
    auto last_write = std::chrono::steady_clock::now();
    for (size_t k = 0; k < parts.size(); ++k) {
      if (k) std::this_thread::sleep_for(pause);
      Append(log, {parts[k]}, 0, 1);
      last_write = std::chrono::steady_clock::now();
    }
    ASSERT_TRUE(WaitUntil([&] { return Stored() >= 1; }, 12s)) << w.Log();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - last_write);
    EXPECT_LT(ms.count(), 2000);
    std::this_thread::sleep_for(1500ms);
    EXPECT_EQ(Stored(), 1) << ToString(CauseOccurrences(db_));
    EXPECT_EQ(CauseOccurrences(db_).count("native.crash"), 1u) << ToString(CauseOccurrences(db_));
    EXPECT_EQ(w.Stop(SIGTERM), 0);
  }
};

TEST_P(NativeCrashTest, IsStoredWithinTwoSecondsOfTheFileGoingQuiet) {
  ExpectOneIncidentSoon({GetParam().text}, 0ms);
}

TEST_P(NativeCrashTest, WrittenInTwoWritesIsOneIncident) {
  const std::string& text = GetParam().text;
  size_t cut = 0;
  for (size_t k = 0; k < GetParam().split; ++k) cut = text.find('\n', cut) + 1;
  ExpectOneIncidentSoon({text.substr(0, cut), text.substr(cut)}, 300ms);
}

INSTANTIATE_TEST_SUITE_P(Formats, NativeCrashTest, ::testing::ValuesIn(NativeCrashes()),
                         [](const ::testing::TestParamInfo<NativeCrash>& info) {
                           return std::string(info.param.name);
                         });

TEST_F(CrashTest, ADumpPausedInsideItsFramesWaitsForTheRestAndIsOneIncident) {
  WatchProcess w(tmp_.path(), Args());
  ASSERT_TRUE(Running(w)) << w.Log();
  fs::path log = dir_ / "worker.log";
  std::string dump = FaulthandlerDump();
  size_t cut = dump.find("  File \"/app/crash.py\", line 20");  // after the first frame
  Append(log, {dump.substr(0, cut)}, 0, 1);
  std::this_thread::sleep_for(1500ms);  // longer than the traceback settle time
  EXPECT_EQ(Stored(), 0);
  Append(log, {dump.substr(cut)}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Stored() >= 1; }, 5s)) << w.Log();
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(Stored(), 1) << ToString(CauseOccurrences(db_));
  EXPECT_EQ(w.Stop(SIGTERM), 0);
}

TEST_F(CrashTest, AnOpenBlockWithoutAFailureWaitsForTheQuietGap) {
  WatchProcess w(tmp_.path(), Args());
  ASSERT_TRUE(Running(w)) << w.Log();
  // A CUDA error and its advice lines: a block, and an error, but no fatal line.
  Append(dir_ / "server.log",
         {"2026-11-02 09:24:00 INFO step 100\n"
          "CUDA error: an illegal memory access was encountered\n"
          "CUDA kernel errors might be asynchronously reported at some other API call, so the "
          "stacktrace below might be incorrect.\n"
          "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"},
         0, 1);
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(Stored(), 0) << ToString(CauseOccurrences(db_)) << w.Log();
  EXPECT_EQ(w.Stop(SIGTERM), 0);
  EXPECT_EQ(Stored(), 0) << ToString(CauseOccurrences(db_));
}

TEST_F(CrashTest, SigtermWritesADumpThatNothingClosedBeforeExiting) {
  ExpectOnlyTheStopWritesIt("worker.log", FaulthandlerDump());
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

// Randomized fault test of `triage watch`: three logs written with distinct crashes (a kernel
// OOM kill, a Python CUDA OOM traceback, a segfault), rotated by every kind (rename with a
// `.1 -> .2` chain, copytruncate, delete and recreate, the oldest rotation compressed with gzip),
// the daemon killed (SIGKILL, SIGTERM) at random points, also while a file rotates under it, and
// left down across rotations. At the end every crash written is stored exactly once, under the
// cause `analyze` gives its lines. TRIAGE_FAULT_TRIALS sets the number of trials (default 50, each short, to keep
// the suite quick on 2 cores; more for a soak). A trial that once failed has its own
// deterministic test below (trial 32: a copytruncate right after a start; 46 and 6: a copy seen
// in one look at the folder with a rename of its original or with a new file under its name;
// 15: a file deleted and written again with the same crash at the same lines; 163: a file
// truncated and written again while the daemon was down; 225: a copy on a reused inode).
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "daemon_harness.h"

namespace triage::daemon::testing {
namespace {

using namespace std::chrono_literals;

// One crash of file `k`, ending with a supervisor's restart line: the restart closes the
// incident in the analyzer, so its grouping does not depend on timing, only on each byte being
// read once.
std::string Crash(int k, int n) {
  std::string t = "2026-11-02 09:" + std::to_string(10 + n % 50) + ":";
  std::string b = t + "00 INFO step " + std::to_string(n) + " loss=0.5\n";
  if (k == 0) {
    b += t + "01 Out of memory: Killed process " + std::to_string(1000 + n) +
         " (python) total-vm:81234567kB, anon-rss:62345678kB, file-rss:0kB\n";
  } else if (k == 1) {
    b += "Traceback (most recent call last):\n"
         "  File \"/app/train.py\", line 88, in <module>\n"
         "    main()\n"
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
         "total capacity of 79.15 GiB of which 1.02 GiB is free. (step " +
         std::to_string(n) + ")\n";
  } else {
    b += "Fatal Python error: Segmentation fault\n";
  }
  b += t + "59 Scheduled restart job, restart counter is at " + std::to_string(n + 1) + ".\n";
  return b;
}

// The watch command line of these tests: nothing closes on a timer (the quiet gap and the settle
// time are an hour), and the daemon looks at its files every 50 ms.
std::vector<std::string> WatchArgs(const fs::path& db, const fs::path& dir, bool debug = false) {
  std::vector<std::string> args = {"--db", db.string(), "--quiet-gap", "3600", "--settle", "3600",
                                   "--heartbeat", "0.05"};
  if (debug) args.insert(args.end(), {"--log-level", "debug"});
  args.push_back(dir.string());
  return args;
}

// The end of a case: once as many occurrences as `want` holds are stored, a crash read twice has
// a while to show, the daemon stops (SIGTERM), and what is stored is `want`, per cause.
void ExpectStoredOnce(WatchProcess& w, const fs::path& db,
                      const std::map<std::string, int64_t>& want) {
  EXPECT_TRUE(WaitUntil(
      [&] { return TotalOccurrences(CauseOccurrences(db)) >= TotalOccurrences(want); }, 20s))
      << w.Log();
  std::this_thread::sleep_for(300ms);  // a crash read twice would show now
  EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
  EXPECT_EQ(CauseOccurrences(db), want) << w.Log();
}

int Trials() {
  const char* e = std::getenv("TRIAGE_FAULT_TRIALS");
  int n = e ? std::atoi(e) : 50;
  return n > 0 ? n : 50;
}

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    fs::create_directories(tmp_ / "config");
  }
  TempDir tmp_;
};

// The cause `triage analyze` gives a file holding crash `k`'s lines: what the daemon must store
// each of that family's crashes under.
std::string AnalyzeTopCause(const fs::path& home, int k) {
  const fs::path file = home / ("family-" + std::to_string(k) + ".log");
  std::ofstream(file) << Crash(k, 0);
  std::string out;
  if (RunTriage({"analyze", "--json", "--no-store", file.string()}, home, &out) != 0) return "";
  const std::string key = "\"cause\":\"";
  const size_t at = out.find(key);
  return at == std::string::npos ? "" : out.substr(at + key.size(), out.find('"', at + key.size()) - at - key.size());
}

// One trial of the randomized test: three families of logs (their live files and rotations),
// what was written to each, and the daemon when it runs.
struct FaultTrial {
  static constexpr int kFamilies = 3;
  FaultTrial(int trial, const fs::path& tmp)
      : rng(1000 + trial),
        home(tmp),
        dir(tmp / ("logs-" + std::to_string(trial))),
        db(tmp / ("t-" + std::to_string(trial) + ".db")),
        args(WatchArgs(db, dir, /*debug=*/true)) {
    fs::create_directories(dir);
  }
  std::mt19937 rng;
  fs::path home, dir, db;
  std::vector<std::string> args;
  const std::string names[kFamilies] = {"oom.log", "trace.log", "segv.log"};
  int written[kFamilies] = {0, 0, 0};
  int next[kFamilies] = {0, 0, 0};
  std::unique_ptr<WatchProcess> w;
  std::string history;
  int kills = 0, terms = 0, rotations = 0, gzips = 0, kills_in_rotation = 0;

  int AllWritten() const { return written[0] + written[1] + written[2]; }
  int64_t Stored() const { return TotalOccurrences(CauseOccurrences(db)); }
  fs::path Rotated(int k, int n) const { return dir / (names[k] + "." + std::to_string(n)); }

  void AppendCrashes(int k) {
    const int n = 1 + static_cast<int>(rng() % 4);
    std::string b;
    for (int i = 0; i < n; ++i) b += Crash(k, next[k]++);
    Append(dir / names[k], {b}, 0, 1);
    written[k] += n;
    history += "append " + names[k] + " x" + std::to_string(n) + "\n";
  }
  // `.1 -> .2 -> ...`, then the live file moved (rename) or copied and truncated (copytruncate).
  void Rotate(int k, bool copy) {
    const fs::path live = dir / names[k];
    if (!fs::exists(live)) return;
    int top = 1;
    while (fs::exists(Rotated(k, top))) ++top;
    for (int i = top; i > 1; --i) fs::rename(Rotated(k, i - 1), Rotated(k, i));
    if (copy) {
      fs::copy_file(live, Rotated(k, 1));
      ASSERT_EQ(truncate(live.c_str(), 0), 0);
    } else {
      fs::rename(live, Rotated(k, 1));
    }
    ++rotations;
    history += (copy ? "copytruncate " : "rename ") + names[k] + "\n";
  }
  // Destroying bytes (a delete, a rotation compressed) waits until everything written was stored:
  // bytes destroyed unread are gone for any reader. Down, the daemon cannot read them; they are
  // destroyed only when all is stored already.
  bool AllStoredBeforeDestroying() {
    if (w) return WaitUntil([&] { return Stored() == AllWritten(); }, 20s);
    return Stored() == AllWritten();
  }
  void DeleteAndRecreate(int k) {
    const fs::path live = dir / names[k];
    if (!fs::exists(live) || !AllStoredBeforeDestroying()) return;
    fs::remove(live);
    Append(live, {Crash(k, next[k]++)}, 0, 1);
    ++written[k];
    ++rotations;
    history += std::string("delete+recreate ") + names[k] + (w ? "" : " (down)") + "\n";
  }
  // The oldest rotation compressed as logrotate's `compress` does (gzip, the file replaced by
  // NAME.gz): never read again.
  void GzipOldest(int k) {
    int top = 0;
    while (fs::exists(Rotated(k, top + 1))) ++top;
    if (top == 0 || !AllStoredBeforeDestroying()) return;
    const std::string path = Rotated(k, top).string();
    const pid_t pid = fork();
    if (pid == 0) {
      execlp("gzip", "gzip", "-f", "-n", path.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    ASSERT_EQ(WaitFor(pid, 20s), 0) << "gzip " << path;
    ++gzips;
    history += "gzip " + Rotated(k, top).filename().string() + (w ? "" : " (down)") + "\n";
  }
  // Starts the daemon, or stops it: SIGTERM, SIGKILL, or SIGKILL while a file rotates under it.
  void Life() {
    if (!w) {
      w = std::make_unique<WatchProcess>(home, args);
      history += "start\n";
      return;
    }
    const int how = static_cast<int>(rng() % 3);
    if (how == 2) {
      const int k = static_cast<int>(rng() % kFamilies);
      Rotate(k, rng() % 2);
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 30));
      ++kills_in_rotation;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 150));
    }
    const bool term = how == 0;
    EXPECT_EQ(w->Stop(term ? SIGTERM : SIGKILL), term ? 0 : 128 + SIGKILL) << w->Log();
    (term ? terms : kills) += 1;
    w.reset();
    history += term ? "sigterm\n" : how == 2 ? "sigkill while rotating\n" : "sigkill\n";
  }
  void Step() {
    const int k = static_cast<int>(rng() % kFamilies);
    const int action = static_cast<int>(rng() % 12);
    if (action < 4) AppendCrashes(k);
    else if (action == 4) Rotate(k, /*copy=*/false);
    else if (action == 5) Rotate(k, /*copy=*/true);
    else if (action == 6) DeleteAndRecreate(k);
    else if (action == 7) GzipOldest(k);
    else Life();
  }
};

// TRIAGE_FAULT_FIRST=N starts at trial N, to replay a reported one (with TRIAGE_FAULT_TRIALS=1).
// Every stored crash is under the cause `analyze` gives its lines.
TEST_F(FaultTest, RandomRotationsAndKillsLoseNothingAndCountNothingTwice) {
  std::string cause[FaultTrial::kFamilies];
  for (int k = 0; k < FaultTrial::kFamilies; ++k) {
    cause[k] = AnalyzeTopCause(tmp_.path(), k);
    ASSERT_FALSE(cause[k].empty()) << "analyze found no cause in crash " << k;
  }
  const int trials = Trials();
  int total_written = 0, kills = 0, terms = 0, rotations = 0, gzips = 0, in_rotation = 0;
  const char* first_env = std::getenv("TRIAGE_FAULT_FIRST");
  const int first = first_env ? std::max(0, std::atoi(first_env)) : 0;
  for (int trial = first; trial < first + trials; ++trial) {
    FaultTrial t(trial, tmp_.path());
    const int steps = 8 + static_cast<int>(t.rng() % 6);
    for (int step = 0; step < steps && !HasFatalFailure(); ++step) t.Step();
    ASSERT_FALSE(HasFatalFailure()) << "trial " << trial << "\n" << t.history;
    if (!t.w) t.w = std::make_unique<WatchProcess>(tmp_.path(), t.args);
    EXPECT_TRUE(WaitUntil([&] { return t.Stored() >= t.AllWritten(); }, 20s))
        << "trial " << trial << "\n" << t.history << ToString(CauseOccurrences(t.db));
    std::this_thread::sleep_for(100ms);  // a duplicate would show now
    EXPECT_EQ(t.w->Stop(SIGTERM), 0);
    std::map<std::string, int64_t> want;
    for (int k = 0; k < FaultTrial::kFamilies; ++k)
      if (t.written[k]) want[cause[k]] += t.written[k];
    const auto got = CauseOccurrences(t.db);
    const std::string log = t.w->Log();
    ASSERT_EQ(got, want) << "trial " << trial << "\n" << t.history << "stored:\n" << ToString(got)
                         << "written:\n" << ToString(want) << "daemon log (tail):\n"
                         << log.substr(log.size() > 30000 ? log.size() - 30000 : 0);
    total_written += t.AllWritten();
    kills += t.kills;
    terms += t.terms;
    rotations += t.rotations;
    gzips += t.gzips;
    in_rotation += t.kills_in_rotation;
  }
  RecordProperty("trials", trials);
  RecordProperty("crashes", total_written);
  RecordProperty("kills", kills);
  RecordProperty("kills_while_rotating", in_rotation);
  RecordProperty("rotations", rotations);
  RecordProperty("gzips", gzips);
  EXPECT_GT(total_written, trials);
  // A replay of one trial may neither kill nor rotate; a whole run does both.
  if (trials >= 10) {
    EXPECT_GT(kills, 0);
    EXPECT_GT(terms, 0);
    EXPECT_GT(in_rotation, 0);
    EXPECT_GT(gzips, 0);
    EXPECT_GT(rotations, trials / 2);
  }
}

// Trial 32's case: a file copytruncated right after a daemon start, before (or while) the
// daemon reads what was written while it was down. The copy holds those bytes: they are read
// from it, from the checkpoint on, once; the truncated file starts again.
TEST_F(FaultTest, CopytruncateRightAfterAStartLosesNothing) {
  for (int round = 0; round < 3; ++round) {
    fs::path dir = tmp_ / ("ct-" + std::to_string(round));
    fs::path db = tmp_ / ("ct-" + std::to_string(round) + ".db");
    fs::create_directories(dir);
    const fs::path live = dir / "oom.log";
    const std::vector<std::string> args = WatchArgs(db, dir);
    int n = 0;
    auto crashes = [&](int count) {
      std::string b;
      for (int i = 0; i < count; ++i) b += Crash(0, n++);
      return std::vector<std::string>{b};
    };
    auto stored = [&] { return TotalOccurrences(CauseOccurrences(db)); };
    Append(live, crashes(3), 0, 1);
    {
      WatchProcess w(tmp_.path(), args);
      ASSERT_TRUE(WaitUntil([&] { return stored() == 3; }, 20s)) << w.Log();
      ASSERT_EQ(w.Stop(SIGTERM), 0) << w.Log();
    }
    Append(live, crashes(2 + round), 0, 1);  // written while the daemon is down
    WatchProcess w(tmp_.path(), args);       // returns once its start-up scan is done
    fs::copy_file(live, dir / "oom.log.1");
    ASSERT_EQ(truncate(live.c_str(), 0), 0);
    Append(live, crashes(1), 0, 1);
    EXPECT_TRUE(WaitUntil([&] { return stored() >= n; }, 20s))
        << "round " << round << "\n" << ToString(CauseOccurrences(db)) << w.Log();
    std::this_thread::sleep_for(100ms);  // a duplicate would show now
    EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
    EXPECT_EQ(CauseOccurrences(db), (std::map<std::string, int64_t>{{"host.oom_killed", n}}))
        << "round " << round << "\n" << w.Log();
  }
}

// The first lines of a crash: a step, then a traceback ending in CUDA's illegal memory access.
constexpr const char* kIllegalAccessTraceback =
    "2026-11-02 09:10:00 INFO step 7 loss=0.5\n"
    "Traceback (most recent call last):\n"
    "  File \"/app/train.py\", line 88, in <module>\n"
    "    main()\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n";

// A crash that straddles a copytruncate: its first lines were in the file before the copy and the
// truncation, the rest is written to the truncated file, as the writer goes on. The stream goes
// on where it was: one incident holding both parts' lines, as `analyze` gives it for the crash's
// lines. The copy's part used to wait in the copy's pipeline and be lost at the stop, leaving the
// new file's part alone (its own illegal memory access).
TEST_F(FaultTest, ACrashThatStraddlesACopytruncateIsOneIncident) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db", live = dir / "train.log";
  fs::create_directories(dir);
  WatchProcess w(tmp_.path(), WatchArgs(db, dir));
  Append(live,
         {std::string(kIllegalAccessTraceback) +
              "CUDA kernel errors might be asynchronously reported at some other API call, so the "
              "stacktrace below might be incorrect.\n"},
         0, 1);
  std::this_thread::sleep_for(1s);  // read by now (the daemon looks every 50 ms)
  fs::copy_file(live, dir / "train.log.1");
  ASSERT_EQ(truncate(live.c_str(), 0), 0);
  Append(live,
         {"terminate called after throwing an instance of 'c10::Error'\n"
          "  what():  CUDA error: an illegal memory access was encountered\n"
          "2026-11-02 09:10:59 Scheduled restart job, restart counter is at 1.\n"},
         0, 1);
  ExpectStoredOnce(w, db, {{"cuda.illegal_memory_access", 1}});
  std::string shown;
  ASSERT_EQ(RunTriage({"show", "1", "--db", db.string(), "--json"}, tmp_.path(), &shown), 0) << shown;
  EXPECT_NE(shown.find("RuntimeError: CUDA error: an illegal memory access"), std::string::npos) << shown;
  EXPECT_NE(shown.find("terminate called after throwing"), std::string::npos) << shown;
}

// The copy of a copytruncate compressed away (logrotate's `compress` without `delaycompress`)
// while the truncated file's pipeline still holds the bytes it took from it: once the copy is
// gone those bytes exist nowhere but in memory, so they are finished and stored then, and a kill
// that follows loses nothing.
TEST_F(FaultTest, ACrashCarriedFromACopyThatIsCompressedAwayIsNotLostToAKill) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db", live = dir / "train.log";
  fs::create_directories(dir);
  const std::vector<std::string> args = WatchArgs(db, dir);
  {
    WatchProcess w(tmp_.path(), args);
    Append(live,
           {kIllegalAccessTraceback},
           0, 1);
    std::this_thread::sleep_for(1s);  // read by now (the daemon looks every 50 ms)
    fs::copy_file(live, dir / "train.log.1");
    ASSERT_EQ(truncate(live.c_str(), 0), 0);
    std::this_thread::sleep_for(500ms);  // the truncation seen, the copy's bytes carried
    fs::remove(dir / "train.log.1");     // compressed away: the copy's name is gone
    std::ofstream(dir / "train.log.1.gz") << "not read";
    EXPECT_TRUE(WaitUntil([&] { return TotalOccurrences(CauseOccurrences(db)) >= 1; }, 20s))
        << w.Log();
    EXPECT_EQ(w.Stop(SIGKILL), 128 + SIGKILL);
  }
  EXPECT_EQ(CauseOccurrences(db), (std::map<std::string, int64_t>{{"cuda.illegal_memory_access", 1}}));
}

// Trial 46's case: a copytruncate, then a rename rotation of the truncated file, both done before
// the daemon looks at the folder again (here while it is stopped): the copy, under a name that
// is not the truncated file's new one, is still known for its copy and read once.
TEST_F(FaultTest, ACopytruncateThenARenameSeenAtOnceReadTheCopyOnce) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db", live = dir / "trace.log";
  fs::create_directories(dir);
  const std::vector<std::string> args = WatchArgs(db, dir);
  auto stored = [&] { return TotalOccurrences(CauseOccurrences(db)); };
  WatchProcess w(tmp_.path(), args);
  Append(live, {Crash(1, 0) + Crash(1, 1)}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return stored() == 2; }, 20s)) << w.Log();
  w.Signal(SIGSTOP);
  fs::copy_file(live, dir / "trace.log.1");
  ASSERT_EQ(truncate(live.c_str(), 0), 0);
  fs::rename(dir / "trace.log.1", dir / "trace.log.2");
  fs::rename(live, dir / "trace.log.1");
  w.Signal(SIGCONT);
  Append(live, {Crash(1, 2)}, 0, 1);
  ExpectStoredOnce(w, db, {{"cuda.oom", 3}});
}

// Trial 46 again, where a look at the folder missed the original under its new name (a listing
// that races a rename may): a copytruncate of a file with bytes not read yet, then the truncated
// file gone from the folder before the daemon saw it shrink. The copy holds those bytes only:
// they are read from it, from where the original was read to, once.
TEST_F(FaultTest, ACopytruncateThenAMoveAwayReadsTheUnreadBytesFromTheCopy) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db", live = dir / "trace.log";
  fs::create_directories(dir);
  fs::create_directories(tmp_ / "elsewhere");
  const std::vector<std::string> args = WatchArgs(db, dir);
  auto stored = [&] { return TotalOccurrences(CauseOccurrences(db)); };
  WatchProcess w(tmp_.path(), args);
  Append(live, {Crash(1, 0)}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return stored() == 1; }, 20s)) << w.Log();
  w.Signal(SIGSTOP);
  Append(live, {Crash(1, 1) + Crash(1, 2)}, 0, 1);  // not read before the rotation
  fs::copy_file(live, dir / "trace.log.1");
  ASSERT_EQ(truncate(live.c_str(), 0), 0);
  fs::rename(live, tmp_ / "elsewhere" / "trace.log");
  w.Signal(SIGCONT);
  ExpectStoredOnce(w, db, {{"cuda.oom", 3}});
}

// Trial 163's case: a copytruncate while the daemon is down, and the truncated file written
// again past the offset it had been read to. Its inode and birth time are those its earlier
// content had, its bytes are new: their crashes are new occurrences, even at the same lines.
TEST_F(FaultTest, AFileTruncatedAndWrittenAgainWhileDownCountsItsNewCrashes) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db", live = dir / "segv.log";
  fs::create_directories(dir);
  const std::vector<std::string> args = WatchArgs(db, dir);
  auto stored = [&] { return TotalOccurrences(CauseOccurrences(db)); };
  Append(live, {Crash(2, 0) + Crash(2, 1)}, 0, 1);
  {
    WatchProcess w(tmp_.path(), args);
    ASSERT_TRUE(WaitUntil([&] { return stored() == 2; }, 20s)) << w.Log();
    EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
  }
  fs::copy_file(live, dir / "segv.log.1");
  ASSERT_EQ(truncate(live.c_str(), 0), 0);
  Append(live, {Crash(2, 2) + Crash(2, 3) + Crash(2, 4)}, 0, 1);
  WatchProcess w(tmp_.path(), args);
  ExpectStoredOnce(w, db, {{"native.crash", 5}});
}

// Trial 225's case: a copy made while the daemon is down lands on an inode whose checkpoint says
// nothing was read from it (a file truncated after it was read; in the trial a deleted one's
// inode, reused, here the same file copied over). The copy is known for its copy by its first
// bytes, and read from where its original was read to: nothing twice.
TEST_F(FaultTest, ACopyOnAnInodeReadToNothingIsStillACopy) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db";
  const fs::path live = dir / "segv.log", old = dir / "segv.log.1";
  fs::create_directories(dir);
  const std::vector<std::string> args = WatchArgs(db, dir, /*debug=*/true);
  auto stored = [&] { return TotalOccurrences(CauseOccurrences(db)); };
  Append(old, {Crash(2, 0)}, 0, 1);
  Append(live, {Crash(2, 1)}, 0, 1);
  {
    WatchProcess w(tmp_.path(), args);
    ASSERT_TRUE(WaitUntil([&] { return stored() == 2; }, 20s)) << w.Log();
    ASSERT_EQ(truncate(old.c_str(), 0), 0);  // its checkpoint: offset 0
    ASSERT_TRUE(WaitUntil([&] { return w.Log().find("event=file.truncated") != std::string::npos; },
                          20s))
        << w.Log();
    std::this_thread::sleep_for(300ms);  // the checkpoint is written
    EXPECT_EQ(w.Stop(SIGKILL), 128 + SIGKILL);
  }
  // copytruncate onto the rotation name that exists: the copy keeps that file's inode.
  fs::copy_file(live, old, fs::copy_options::overwrite_existing);
  ASSERT_EQ(truncate(live.c_str(), 0), 0);
  WatchProcess w(tmp_.path(), args);
  std::this_thread::sleep_for(500ms);  // a crash read twice would show now
  EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
  EXPECT_EQ(CauseOccurrences(db), (std::map<std::string, int64_t>{{"native.crash", 2}})) << w.Log();
}

// Trial 6's case: a copy created empty (its bytes still to come) beside a new file the daemon has
// not read yet, both seen in one look at the folder, then filled, and the original truncated
// and written again: the copy is known for a copy, and the original's first crash is read once.
TEST_F(FaultTest, ACopyCreatedEmptyBeforeItsOriginalWasReadIsACopy) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db", live = dir / "trace.log",
                 copy = dir / "trace.log.1";
  fs::create_directories(dir);
  const std::vector<std::string> args = WatchArgs(db, dir);
  auto stored = [&] { return TotalOccurrences(CauseOccurrences(db)); };
  WatchProcess w(tmp_.path(), args);
  w.Signal(SIGSTOP);
  Append(live, {Crash(1, 0)}, 0, 1);
  Append(copy, {}, 0, 0);
  w.Signal(SIGCONT);
  ASSERT_TRUE(WaitUntil([&] { return stored() == 1; }, 20s)) << w.Log();
  Append(copy, {Crash(1, 0)}, 0, 1);
  ASSERT_EQ(truncate(live.c_str(), 0), 0);
  Append(live, {Crash(1, 1) + Crash(1, 2)}, 0, 1);
  ExpectStoredOnce(w, db, {{"cuda.oom", 3}});
}

// Trial 6 again: a file seen created empty, then written and copied before the daemon read it:
// the copy is compared with what the file holds now, and known for its copy.
TEST_F(FaultTest, ACopyOfAFileSeenEmptyAndNotReadYetIsACopy) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db", live = dir / "trace.log";
  fs::create_directories(dir);
  const std::vector<std::string> args = WatchArgs(db, dir, /*debug=*/true);
  auto stored = [&] { return TotalOccurrences(CauseOccurrences(db)); };
  WatchProcess w(tmp_.path(), args);
  Append(live, {}, 0, 0);
  ASSERT_TRUE(WaitUntil([&] { return w.Log().find("event=file.open") != std::string::npos; }, 20s))
      << w.Log();
  w.Signal(SIGSTOP);
  Append(live, {Crash(1, 0)}, 0, 1);
  fs::copy_file(live, dir / "trace.log.1");
  w.Signal(SIGCONT);
  ASSERT_TRUE(WaitUntil([&] { return stored() >= 1; }, 20s)) << w.Log();
  ASSERT_EQ(truncate(live.c_str(), 0), 0);
  Append(live, {Crash(1, 1) + Crash(1, 2)}, 0, 1);
  ExpectStoredOnce(w, db, {{"cuda.oom", 3}});
}

// Trial 6's other case: a file deleted and written again, then copied under a rotation name,
// both seen in one look at the folder: the copy is compared with the new file under the base
// name, not with the deleted one that name had, and known for its copy.
TEST_F(FaultTest, ACopyOfARecreatedFileSeenWithItIsACopyOfTheNewFile) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db", live = dir / "trace.log";
  fs::create_directories(dir);
  const std::vector<std::string> args = WatchArgs(db, dir);
  auto stored = [&] { return TotalOccurrences(CauseOccurrences(db)); };
  WatchProcess w(tmp_.path(), args);
  Append(live, {Crash(1, 0)}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return stored() == 1; }, 20s)) << w.Log();
  w.Signal(SIGSTOP);
  fs::remove(live);
  Append(live, {Crash(1, 1)}, 0, 1);
  fs::copy_file(live, dir / "trace.log.1");
  w.Signal(SIGCONT);
  ASSERT_TRUE(WaitUntil([&] { return stored() == 2; }, 20s)) << w.Log();
  ASSERT_EQ(truncate(live.c_str(), 0), 0);
  Append(live, {Crash(1, 2)}, 0, 1);
  ExpectStoredOnce(w, db, {{"cuda.oom", 3}});
}

// Trial 15's case: a log deleted and written again with a crash whose failing line has no time,
// at the same lines as the deleted file's crash (here byte for byte the same file): the new
// file's crash is a second occurrence. Each is read once: neither a restart nor a rename of the
// new file counts it again.
TEST_F(FaultTest, ACrashWrittenAgainInARecreatedFileCountsAgain) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db", live = dir / "segv.log";
  fs::create_directories(dir);
  const std::vector<std::string> args = WatchArgs(db, dir, /*debug=*/true);
  auto stored = [&] { return TotalOccurrences(CauseOccurrences(db)); };
  const std::vector<std::string> crash = {Crash(2, 0)};
  Append(live, crash, 0, 1);
  {
    WatchProcess w(tmp_.path(), args);
    ASSERT_TRUE(WaitUntil([&] { return stored() == 1; }, 20s)) << w.Log();
    fs::remove(live);
    Append(live, crash, 0, 1);
    ASSERT_TRUE(WaitUntil([&] { return stored() == 2; }, 20s)) << w.Log();
    // The deleted file finished (its checkpoint forgotten): the restart finds the new file's.
    ASSERT_TRUE(WaitUntil([&] { return w.Log().find("why=gone") != std::string::npos; }, 20s))
        << w.Log();
    EXPECT_EQ(w.Stop(SIGKILL), 128 + SIGKILL);
  }
  WatchProcess w(tmp_.path(), args);
  std::this_thread::sleep_for(300ms);  // a crash read again would show now
  EXPECT_EQ(stored(), 2) << w.Log();
  fs::rename(live, dir / "segv.log.1");
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
  EXPECT_EQ(CauseOccurrences(db), (std::map<std::string, int64_t>{{"native.crash", 2}}))
      << w.Log();
}

// The case: `cp svc.log svc.log.1; truncate -s0 svc.log; cat B >> svc.log` while the
// daemon is down, then start, stop, start. The first start takes the copy for the original's
// content read to its end; the second must know it still, though the original's checkpoint now
// describes B: crash A is stored once.
TEST_F(FaultTest, ACopytruncateWhileDownIsKnownAcrossTwoRestarts) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db", live = dir / "svc.log";
  fs::create_directories(dir);
  const std::vector<std::string> args = WatchArgs(db, dir);
  auto stored = [&] { return TotalOccurrences(CauseOccurrences(db)); };
  Append(live, {Crash(1, 0)}, 0, 1);
  {
    WatchProcess w(tmp_.path(), args);
    ASSERT_TRUE(WaitUntil([&] { return stored() == 1; }, 20s)) << w.Log();
    EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
  }
  fs::copy_file(live, dir / "svc.log.1");
  ASSERT_EQ(truncate(live.c_str(), 0), 0);
  Append(live, {Crash(1, 1)}, 0, 1);
  {
    WatchProcess w(tmp_.path(), args);
    ASSERT_TRUE(WaitUntil([&] { return stored() == 2; }, 20s)) << w.Log();
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
  }
  WatchProcess w(tmp_.path(), args);
  std::this_thread::sleep_for(1s);  // the copy read again from its start would show now
  EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
  EXPECT_EQ(CauseOccurrences(db), (std::map<std::string, int64_t>{{"cuda.oom", 2}})) << w.Log();
}

// Two crashes of one service with the supervisor's restart line between them, as systemd writes
// it between the runs of a unit: two incidents, each stored once, as `analyze` gives them.
TEST_F(FaultTest, ARestartLineSeparatesTwoCrashes) {
  const fs::path dir = tmp_ / "logs", db = tmp_ / "t.db", live = dir / "svc.log";
  fs::create_directories(dir);
  WatchProcess w(tmp_.path(), WatchArgs(db, dir));
  ASSERT_TRUE(w.Running()) << w.Log();
  Append(live, {Crash(2, 0) + Crash(2, 1)}, 0, 1);
  ExpectStoredOnce(w, db, {{"native.crash", 2}});
}

// `--include '*'` over a folder that holds the daemon's own database: its -wal, -shm and lock
// files (which hold the very lines it stores) are never read, so nothing is stored but the crash.
TEST_F(FaultTest, TheDaemonNeverReadsItsOwnFilesInAWatchedFolder) {
  const fs::path dir = tmp_ / "logs", db = dir / "t.db", live = dir / "svc.log";
  fs::create_directories(dir);
  std::vector<std::string> args = WatchArgs(db, dir, /*debug=*/true);
  args.insert(args.begin(), {"--include", "*"});
  WatchProcess w(tmp_.path(), args);
  ASSERT_TRUE(w.Running()) << w.Log();
  Append(live, {Crash(0, 0) + Crash(1, 1)}, 0, 1);
  EXPECT_TRUE(WaitUntil([&] { return TotalOccurrences(CauseOccurrences(db)) >= 2; }, 20s))
      << w.Log();
  std::this_thread::sleep_for(1500ms);  // the WAL read as a log would have shown by now
  EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
  EXPECT_EQ(CauseOccurrences(db),
            (std::map<std::string, int64_t>{{"host.oom_killed", 1}, {"cuda.oom", 1}}))
      << w.Log();
  const std::string log = w.Log();
  EXPECT_NE(log.find("reason=\"the daemon's own file\""), std::string::npos) << log;
  for (const char* own : {"t.db ", "t.db-wal", "t.db-shm", "t.db.watch-lock"})
    EXPECT_EQ(log.find("event=file.open path=" + (dir / own).string()), std::string::npos)
        << "the daemon opened its own " << own << ":\n" << log;
}

}  // namespace
}  // namespace triage::daemon::testing

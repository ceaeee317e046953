// `triage watch` given files and '-' instead of folders.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "daemon_harness.h"

namespace triage::daemon::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kOomKill =
    "Nov  2 09:24:01 gpu-node-07 kernel: Out of memory: Killed process 4242 (python3) "
    "total-vm:81234567kB, anon-rss:62345678kB, file-rss:0kB, shmem-rss:0kB\n";

TEST(WatchInputs, AFileIsFollowedByNameAndItsFolderIsNot) {
  TempDir tmp;
  const fs::path dir = tmp / "logs";
  fs::create_directories(dir);
  const fs::path db = tmp / "t.db";
  std::ofstream(dir / "other.log") << kOomKill;  // in the folder, not given
  // The file need not exist yet.
  WatchProcess w(tmp.path(), {"--db", db.string(), "--heartbeat", "0.1", (dir / "server.out").string()});
  std::ofstream(dir / "server.out") << "INFO serving\n" << kOomKill;
  EXPECT_TRUE(WaitUntil([&] { return CauseOccurrences(db)["host.oom_killed"] == 1; }, 10s)) << w.Log();
  EXPECT_EQ(w.Stop(), 0) << w.Log();
  EXPECT_EQ(CauseOccurrences(db)["host.oom_killed"], 1);
}

TEST(WatchInputs, TheNamedFileIsReadWhateverTheGlobsSay) {
  TempDir tmp;
  const fs::path file = tmp / "crash.dump";  // no default glob selects it
  std::ofstream(file) << kOomKill;
  const fs::path db = tmp / "t.db";
  ASSERT_EQ(RunTriage({"watch", "--once", "--db", db.string(), file.string()}, tmp.path()), 0);
  EXPECT_EQ(CauseOccurrences(db)["host.oom_killed"], 1);
}

TEST(WatchInputs, StdinIsStoredIncidentByIncidentWhileItStaysOpen) {
  TempDir tmp;
  const fs::path db = tmp / "t.db";
  int in[2];
  ASSERT_EQ(pipe(in), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    close(in[0]);
    close(in[1]);
    PrepareChildEnvironment(tmp.path());
    const std::string bin = Binary();
    execl(bin.c_str(), bin.c_str(), "watch", "--db", db.c_str(), "-", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  const std::string text = std::string("INFO serving\n") + kOomKill;
  ASSERT_EQ(write(in[1], text.data(), text.size()), ssize_t(text.size()));
  EXPECT_TRUE(WaitUntil([&] { return CauseOccurrences(db)["host.oom_killed"] == 1; }, 5s));
  close(in[1]);
  EXPECT_EQ(WaitFor(pid, 20s), 0);
}

TEST(WatchInputs, StdinIsWatchedAlone) {
  TempDir tmp;
  EXPECT_EQ(RunTriage({"watch", "--db", (tmp / "t.db").string(), "-", tmp.path().string()}, tmp.path()), 2);
}

}  // namespace
}  // namespace triage::daemon::testing

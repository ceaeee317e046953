// The store shared by a fleet, end to end through the triage binary, against both back ends:
// the same crash on several hosts is one incident with its hosts counted; writers at once lose
// and duplicate nothing; every command works on a PostgreSQL store.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fixtures.h"
#include "postgres_server.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

using testing::Count;

class Fleet : public testing::BackendTest {
 protected:
  // A daemon keeps its lock on a server's store in the state folder: this test's own.
  void SetUp() override {
    setenv("XDG_STATE_HOME", dir_.File("state").c_str(), 1);
    testing::BackendTest::SetUp();
  }
  // A log of one failure the rules key by its symbol: `n` names a distinct incident.
  std::string Log(int n) {
    const std::string path = dir_.File("logs/ext" + std::to_string(n) + ".log");
    std::filesystem::create_directories(dir_.File("logs"));
    std::ofstream(path) << "2026-11-02 09:00:0" << n % 10
                        << ",000 ERROR ImportError: /opt/ext/_C.so: undefined symbol: "
                           "_ZN5torch3jit"
                        << n << "E\n";
    return path;
  }
  testing::ProcessResult Triage(std::vector<std::string> args) {
    args.insert(args.begin(), TRIAGE_BINARY);
    return testing::Run(args);
  }
  // Starts `triage args...` without waiting; its output is dropped.
  pid_t Start(std::vector<std::string> args) {
    args.insert(args.begin(), TRIAGE_BINARY);
    pid_t pid = fork();
    if (pid == 0) {
      const int null_fd = open("/dev/null", O_WRONLY);
      if (null_fd >= 0) dup2(null_fd, 1);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    return pid;
  }
  static int Wait(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::vector<IncidentSummary> History() {
    auto store = Store::Open(target());
    EXPECT_TRUE(store.ok()) << store.status().message();
    if (!store.ok()) return {};
    HistoryFilter all;
    all.limit = 0;
    auto h = store->History(all);
    EXPECT_TRUE(h.ok()) << h.status().message();
    return h.ok() ? *h : std::vector<IncidentSummary>{};
  }
};

TEST_P(Fleet, TheSameCrashFromTwoHostsIsOneIncidentWithOccurrencesTwoAndHostsTwo) {
  const std::string log = Log(1);
  for (const char* host : {"gpu-a", "gpu-b"}) {
    auto r = Triage({"analyze", "--db", target(), "--host", host, log});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(std::string("on ") + host), std::string::npos) << r.out;
  }
  auto h = Triage({"history", "--db", target(), "--json"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_EQ(Count(h.out, "\"id\":"), 1u) << h.out;
  EXPECT_NE(h.out.find("\"occurrences\":2"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("\"hosts\":2"), std::string::npos) << h.out;
  auto show = Triage({"show", "--db", target(), "1"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("on 2 hosts: gpu-a (1) gpu-b (1)"), std::string::npos) << show.out;
  auto show_json = Triage({"show", "--db", target(), "--json", "1"});
  EXPECT_NE(show_json.out.find("\"hosts\":2,\"per_host\":[{\"host\":\"gpu-a\",\"occurrences\":1"),
            std::string::npos)
      << show_json.out;
  auto stats = Triage({"stats", "--db", target(), "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("\"hosts\":2,\"by_host\":[{\"host\":\"gpu-a\",\"incidents\":1,"
                           "\"occurrences\":1}"),
            std::string::npos)
      << stats.out;
}

// Two writers at once over the same twelve crashes, as two hosts: twelve incidents, each seen
// twice on two hosts. Then both again at once, as one host: nothing more (the same occurrences).
TEST_P(Fleet, TwoWritersAtOnceLoseAndDuplicateNothing) {
  std::vector<std::string> logs;
  for (int n = 0; n < 12; ++n) logs.push_back(Log(n));
  auto run_both = [&](const char* host_a, const char* host_b) {
    std::vector<std::string> a{"analyze", "--db", target(), "--host", host_a, "-j", "1"};
    std::vector<std::string> b{"analyze", "--db", target(), "--host", host_b, "-j", "1"};
    a.insert(a.end(), logs.begin(), logs.end());
    b.insert(b.end(), logs.rbegin(), logs.rend());
    const pid_t pa = Start(a), pb = Start(b);
    EXPECT_EQ(Wait(pa), 0);
    EXPECT_EQ(Wait(pb), 0);
  };
  run_both("gpu-a", "gpu-b");
  auto h = History();
  ASSERT_EQ(h.size(), 12u);
  for (const auto& s : h) {
    EXPECT_EQ(s.occurrences, 2) << s.fingerprint;
    EXPECT_EQ(s.hosts, 2) << s.fingerprint;
  }
  run_both("gpu-a", "gpu-a");
  h = History();
  ASSERT_EQ(h.size(), 12u);
  int64_t total = 0;
  for (const auto& s : h) total += s.occurrences;
  EXPECT_EQ(total, 24);
}

// history, show, search, stats, export, resolve (with its notes) and a daemon's catch-up, on
// the back end under test.
TEST_P(Fleet, EveryCommandWorksOnTheStore) {
  const std::string log = Log(3);
  ASSERT_EQ(Triage({"analyze", "--db", target(), log}).exit_code, 0);
  auto r = Triage({"resolve", "--db", target(), "1", "--note", "rebuilt the extension"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Triage({"resolve", "--db", target(), "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto h = Triage({"history", "--db", target(), "--status", "resolved", "--json"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_NE(h.out.find("\"note\":\"rebuilt the extension\""), std::string::npos) << h.out;
  h = Triage({"history", "--db", target(), "--status", "open", "--json"});
  EXPECT_EQ(h.out, "{\"incidents\":[]}\n") << h.out;
  auto show = Triage({"show", "--db", target(), "1"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find(" resolved: rebuilt the extension\n"), std::string::npos) << show.out;
  EXPECT_EQ(Count(show.out, " resolved\n"), 1u) << "the resolve without a note: " << show.out;
  auto search = Triage({"search", "--db", target(), "_ZN5torch3jit3E"});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  EXPECT_NE(search.out.find("undefined symbol"), std::string::npos) << search.out;
  auto none = Triage({"search", "--db", target(), "'; DROP TABLE incidents; --"});
  EXPECT_EQ(none.out.find("undefined symbol"), std::string::npos) << none.out;
  auto stats = Triage({"stats", "--db", target()});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("1 incidents (0 open), 1 occurrences on 1 host"), std::string::npos)
      << stats.out;
  auto exported = Triage({"export", "--db", target()});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(Count(exported.out, "\n"), 1u);
  EXPECT_NE(exported.out.find("\"activity\":[{"), std::string::npos) << exported.out;
  // The daemon catches up with a folder, its checkpoints in the store: a second pass reads
  // nothing again.
  const std::string folder = dir_.File("watched");
  std::filesystem::create_directories(folder);
  std::ofstream(folder + "/train.log") << "INFO starting\nTraceback (most recent call last):\n"
                                          "  File \"/srv/main.py\", line 3, in <module>\n"
                                          "    run()\nRuntimeError: CUDA error: an illegal "
                                          "memory access was encountered\n";
  for (int pass = 0; pass < 2; ++pass) {
    auto w = Triage({"watch", "--once", "--host", "gpu-w", "--db", target(), folder});
    ASSERT_EQ(w.exit_code, 0) << w.err;
  }
  auto after = History();
  ASSERT_EQ(after.size(), 2u);
  for (const auto& s : after) EXPECT_EQ(s.occurrences, 1) << s.fingerprint;
  EXPECT_EQ(after[0].host, "gpu-w") << "the daemon's --host, the newest incident";
}

// The store named by the configuration: [store] url for PostgreSQL, [store] path for a file.
TEST_P(Fleet, TheConfigurationNamesTheStore) {
  const std::string config = dir_.File("config.toml");
  const bool server = GetParam() == testing::Backend::kPostgres;
  std::ofstream(config) << "[store]\n"
                        << (server ? "url" : "path") << " = \"" << target() << "\"\n";
  auto r = Triage({"analyze", "--config", config, Log(5)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto h = Triage({"history", "--config", config, "--json"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_EQ(Count(h.out, "\"id\":"), 1u) << h.out;
  EXPECT_EQ(History().size(), 1u);
}

// Two processes recording the same 40 crashes one transaction each, interleaved, as two hosts
// and then as one: each incident once, seen twice on two hosts; nothing counted twice.
TEST_P(Fleet, TwoProcessesRecordingOneAtATimeLoseAndDuplicateNothing) {
  ASSERT_TRUE(Store::Open(target()).ok());  // the schema made before both start
  auto record_all = [&](const char* host, bool reverse) -> pid_t {
    pid_t pid = fork();
    if (pid != 0) return pid;
    auto store = Store::Open(target());
    if (!store.ok()) _exit(10);
    for (int k = 0; k < 40; ++k) {
      const int n = reverse ? 39 - k : k;
      std::vector<core::Incident> one{testing::Numbered(n)};
      one[0].host = host;
      if (!store->Record(one).ok()) _exit(11);
    }
    _exit(0);
  };
  for (const char* other : {"gpu-b", "gpu-a"}) {
    const pid_t a = record_all("gpu-a", false), b = record_all(other, true);
    EXPECT_EQ(Wait(a), 0);
    EXPECT_EQ(Wait(b), 0);
  }
  auto h = History();
  ASSERT_EQ(h.size(), 40u);
  for (const auto& s : h) {
    EXPECT_EQ(s.occurrences, 2) << s.fingerprint;
    EXPECT_EQ(s.hosts, 2) << s.fingerprint;
  }
}

TRIAGE_ON_EACH_BACKEND(Fleet);

// The binary must start on a host without libpq: it is loaded only when a postgresql:// store
// is opened, never linked.
TEST(FleetBinary, DoesNotNeedLibpqToStart) {
  auto r = testing::Run({"/usr/bin/ldd", TRIAGE_BINARY});
  if (r.exit_code == 127) GTEST_SKIP() << "no ldd";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("libpq"), std::string::npos) << r.out;
}

TEST(FleetBinary, AServerThatIsNotThereIsAClearErrorWithoutThePassword) {
  testing::TempDir dir;
  auto r = testing::Run(
      {TRIAGE_BINARY, "history", "--db", "postgresql://triage:s3cret@/none?host=" + dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot connect"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("s3cret"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace triage::store

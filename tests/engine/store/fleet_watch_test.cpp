// A fleet's daemons at once on one PostgreSQL database: real `triage watch` processes, as two
// hosts, each tailing its own log folder while the same crashes are written into both, and both
// tailing a folder of a third host's lines (a syslog file both read); then stopped with SIGTERM
// and the store read back. Every crash is one incident, seen once per host that logged it;
// nothing is lost, nothing counted twice. And the rule of one `watch` per machine and database:
// a second daemon on the same machine is refused, daemons of two machines never are.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <thread>

#include "../daemon/daemon_harness.h"
#include "postgres_server.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

namespace fs = std::filesystem;
using daemon::testing::Append;
using daemon::testing::Spawn;
using daemon::testing::WaitFor;
using daemon::testing::WaitUntil;
using daemon::testing::WatchProcess;
using namespace std::chrono_literals;

// One crash as a service logs it, in a file of its own: the file's name is the service, so
// crash `n` is one incident (one fingerprint) however many hosts log it; the number is in its
// text as well. Four kinds, by n % 4.
struct Crash {
  std::string file;   // the log's name, the same in every host's folder
  std::string cause;  // the rank-1 root cause it is stored under
  std::string text;
};

std::string Two(int n) { return (n < 10 ? "0" : "") + std::to_string(n); }

Crash NumberedCrash(int n) {
  const std::string k = std::to_string(n), t = "2026-11-02 09:" + Two(n) + ":";
  switch (n % 4) {
    case 0:  // a PyTorch CUDA OOM, its traceback printed by the script's own handler
      return {"trainer-" + Two(n) + ".log", "cuda.oom",
              t + "00 INFO step " + k + "00 loss=0.42\n" +  //
                  t + "01 ERROR step failed\n" +
                  "Traceback (most recent call last):\n"
                  "  File \"/app/trainer.py\", line 211, in run_step\n"
                  "    loss = self.model(batch)\n"
                  "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " +
                  k +
                  ".00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free.\n"};
    case 1:  // the kernel's OOM kill, as dmesg prints it (no host name in the line)
      return {"kern-" + Two(n) + ".log", "host.oom_killed",
              "[ 8" + Two(n) + "1.204331] Out of memory: Killed process 4" + Two(n) + " (worker" +
                  k + ") total-vm:81234567kB, anon-rss:62345678kB, file-rss:0kB, " +
                  "shmem-rss:0kB, UID:1000 pgtables:123456kB oom_score_adj:0\n"};
    case 2:  // a segfault in native code, as absl's signal handler reports it
      return {"server-" + Two(n) + ".log", "native.crash",
              t + "05 INFO serving request " + k + "\n" +  //
                  "*** SIGSEGV received at time=17305380" + Two(n) + " on cpu 3 ***\n" +
                  "PC: @     0x7f3a00" + Two(n) + "beef  (unknown)  ext::launch()\n"};
    default:  // NCCL failing in a collective
      return {"rank-" + Two(n) + ".log", "nccl.failure",
              t + "07 INFO all_reduce bucket " + k + "\n" +  //
                  "Traceback (most recent call last):\n" + "  File \"/app/train.py\", line " + k +
                  "0, in <module>\n" +
                  "    dist.all_reduce(grad)\n"
                  "torch.distributed.DistBackendError: NCCL error in: "
                  "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system "
                  "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20." +
                  k + "\n"};
  }
}

// A crash of the host gpu-c as its syslog gives it (the host named in the line): both daemons
// read the same file, so they see the same occurrence, which counts once.
Crash SyslogCrash(int n) {
  return {"syslog-" + Two(n) + ".log", "host.oom_killed",
          "Nov  2 10:" + Two(n) + ":01 gpu-c kernel: Out of memory: Killed process 5" + Two(n) +
              " (loader" + std::to_string(n) +
              ") total-vm:71234567kB, anon-rss:52345678kB, file-rss:0kB, shmem-rss:0kB, "
              "UID:1000 pgtables:123456kB oom_score_adj:0\n"};
}

constexpr int kCrashes = 24;       // written into both hosts' folders
constexpr int kSyslogCrashes = 6;  // of gpu-c, in the folder both read

class FleetWatch : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::PostgresServer& server = testing::PostgresServer::Shared();
    if (!server.ok()) GTEST_SKIP() << "no PostgreSQL server: " << server.why();
    url_ = server.NewDatabase();
    ASSERT_FALSE(url_.empty()) << "createdb failed";
    ASSERT_FALSE(tmp_.path().empty());
  }

  // A host's home (its state folder, config folder and daemon log) and log folder.
  fs::path Home(const std::string& host) {
    const fs::path home = tmp_ / host;
    fs::create_directories(home / "config");
    fs::create_directories(home / "logs");
    return home;
  }
  // `watch` flags for a daemon writing the test's database as `host`.
  std::vector<std::string> Args(const std::string& host, std::vector<std::string> folders) {
    std::vector<std::string> a{"--db",        url_, "--host",      host,
                               "--quiet-gap", "60", "--heartbeat", "0.2"};
    a.insert(a.end(), folders.begin(), folders.end());
    return a;
  }

  std::vector<IncidentSummary> History() {
    StoreOptions o;
    o.create = false;
    auto store = Store::Open(url_, o);
    if (!store.ok()) return {};
    HistoryFilter all;
    all.limit = 0;
    auto h = store->History(all);
    return h.ok() ? *h : std::vector<IncidentSummary>{};
  }
  static int64_t Occurrences(const std::vector<IncidentSummary>& h) {
    int64_t n = 0;
    for (const auto& s : h) n += s.occurrences;
    return n;
  }
  static std::string Describe(const std::vector<IncidentSummary>& h) {
    std::string out;
    for (const auto& s : h)
      out += "  " + s.service + " " + s.top_cause + " on " + s.host + ": " +
             std::to_string(s.occurrences) + " occurrences, " + std::to_string(s.hosts) +
             " hosts\n";
    return out.empty() ? "  (none)\n" : out;
  }
  // A daemon's log has no error in it.
  static void ExpectNoError(const WatchProcess& w, const std::string& host) {
    const std::string log = w.Log();
    EXPECT_EQ(log.find("level=error"), std::string::npos) << host << ":\n" << log;
  }

  std::string url_;
  daemon::testing::TempDir tmp_;
};

TEST_F(FleetWatch, TwoDaemonsAtOnceAsTwoHostsLoseAndDuplicateNothing) {
  // Two machines: each its own home, so its own state folder (and its own lock). Both run on
  // this one machine, so they share its checkpoint rows (docs/schema.md); their own folders'
  // files are distinct (other inodes), and of the folder both read both write the same offsets.
  const fs::path home_a = Home("gpu-a"), home_b = Home("gpu-b"), shared = tmp_ / "gpu-c-syslog";
  fs::create_directories(shared);
  // Started at once: both create the schema of the empty database (one of them does).
  std::optional<WatchProcess> a, b;
  std::thread start_a([&] {
    a.emplace(home_a, Args("gpu-a", {(home_a / "logs").string(), shared.string()}));
  });
  b.emplace(home_b, Args("gpu-b", {(home_b / "logs").string(), shared.string()}));
  start_a.join();
  ASSERT_TRUE(a->Running()) << a->Log();
  ASSERT_TRUE(b->Running()) << b->Log();

  // The same crashes into both folders, at once and in opposite orders, and gpu-c's syslog
  // lines alongside.
  auto write = [](const fs::path& folder, bool reverse) {
    for (int k = 0; k < kCrashes; ++k) {
      const Crash c = NumberedCrash(reverse ? kCrashes - 1 - k : k);
      Append(folder / c.file, {c.text}, 0, 1);
      std::this_thread::sleep_for(10ms);
    }
  };
  std::thread writer_a(write, home_a / "logs", false), writer_b(write, home_b / "logs", true);
  for (int k = 0; k < kSyslogCrashes; ++k) {
    const Crash c = SyslogCrash(k);
    Append(shared / c.file, {c.text}, 0, 1);
    std::this_thread::sleep_for(35ms);
  }
  writer_a.join();
  writer_b.join();

  const int64_t expected = 2 * kCrashes + kSyslogCrashes;
  EXPECT_TRUE(WaitUntil([&] { return Occurrences(History()) >= expected; }, 30s))
      << Describe(History()) << a->Log() << b->Log();
  EXPECT_EQ(a->Stop(SIGTERM), 0) << a->Log();
  EXPECT_EQ(b->Stop(SIGTERM), 0) << b->Log();
  ExpectNoError(*a, "gpu-a");
  ExpectNoError(*b, "gpu-b");

  // Read back after both stopped (what they wrote on the way out counts too).
  const auto history = History();
  std::map<std::string, const IncidentSummary*> by_service;
  for (const auto& s : history) {
    EXPECT_EQ(by_service.count(s.service), 0u) << "two incidents of " << s.service;
    by_service[s.service] = &s;
  }
  std::map<std::string, int64_t> want_per_cause, got_per_cause;
  for (const auto& s : history) got_per_cause[s.top_cause] += s.occurrences;
  for (int n = 0; n < kCrashes; ++n) {
    const Crash c = NumberedCrash(n);
    const std::string service = c.file.substr(0, c.file.size() - 4);
    want_per_cause[c.cause] += 2;
    auto it = by_service.find(service);
    if (it == by_service.end()) {
      ADD_FAILURE() << service << " was not stored";
      continue;
    }
    EXPECT_EQ(it->second->top_cause, c.cause) << service;
    EXPECT_EQ(it->second->occurrences, 2) << service;
    EXPECT_EQ(it->second->hosts, 2) << service;
  }
  for (int n = 0; n < kSyslogCrashes; ++n) {
    const Crash c = SyslogCrash(n);
    const std::string service = c.file.substr(0, c.file.size() - 4);
    want_per_cause[c.cause] += 1;
    auto it = by_service.find(service);
    if (it == by_service.end()) {
      ADD_FAILURE() << service << " was not stored";
      continue;
    }
    EXPECT_EQ(it->second->host, "gpu-c") << service;
    EXPECT_EQ(it->second->occurrences, 1) << service << ": read by both daemons, counted twice";
    EXPECT_EQ(it->second->hosts, 1) << service;
  }
  EXPECT_EQ(history.size(), static_cast<size_t>(kCrashes + kSyslogCrashes)) << Describe(history);
  EXPECT_EQ(got_per_cause, want_per_cause) << Describe(history);
  EXPECT_EQ(Occurrences(history), expected) << Describe(history);
}

// Where a machine may make a UTS namespace (root), the child runs as the machine `name`.
std::function<void()> AsMachine(const std::string& name, const fs::path& state) {
  return [name, state] {
    if (unshare(CLONE_NEWUTS) != 0 || sethostname(name.data(), name.size()) != 0) _exit(126);
    setenv("XDG_STATE_HOME", state.c_str(), 1);
  };
}
bool CanNameMachines() {
  const pid_t pid = fork();
  if (pid == 0) _exit(unshare(CLONE_NEWUTS) == 0 ? 0 : 1);
  return WaitFor(pid, 10s) == 0;
}

// Two machines whose state folders are one (a home folder on NFS, where flock reaches across
// machines): both daemons run, each writing its own crash.
TEST_F(FleetWatch, DaemonsOfTwoMachinesSharingAStateFolderBothRun) {
  if (!CanNameMachines()) GTEST_SKIP() << "naming two machines needs a UTS namespace (root)";
  const fs::path state = tmp_ / "shared-state";
  const fs::path home_a = Home("gpu-a"), home_b = Home("gpu-b");
  WatchProcess a(home_a, Args("gpu-a", {(home_a / "logs").string()}), AsMachine("gpu-a", state));
  WatchProcess b(home_b, Args("gpu-b", {(home_b / "logs").string()}), AsMachine("gpu-b", state));
  ASSERT_TRUE(a.Running()) << a.Log();
  ASSERT_TRUE(b.Running()) << "the second machine's daemon was refused:\n" << b.Log();
  const Crash c = NumberedCrash(0);
  Append(home_a / "logs" / c.file, {c.text}, 0, 1);
  Append(home_b / "logs" / c.file, {c.text}, 0, 1);
  EXPECT_TRUE(WaitUntil([&] { return Occurrences(History()) >= 2; }, 20s))
      << Describe(History()) << a.Log() << b.Log();
  EXPECT_EQ(a.Stop(SIGTERM), 0) << a.Log();
  EXPECT_EQ(b.Stop(SIGTERM), 0) << b.Log();
  const auto history = History();
  ASSERT_EQ(history.size(), 1u) << Describe(history);
  EXPECT_EQ(history[0].occurrences, 2);
  EXPECT_EQ(history[0].hosts, 2);
}

// Two daemons of one host name would share its checkpoints (docs/schema.md): the second is
// refused, and the first goes on.
TEST_F(FleetWatch, ASecondDaemonOfTheSameHostIsRefused) {
  const fs::path home = Home("gpu-a");
  WatchProcess first(home, Args("gpu-a", {(home / "logs").string()}));
  ASSERT_TRUE(first.Running()) << first.Log();
  const fs::path other = tmp_ / "other";
  fs::create_directories(other);
  std::vector<std::string> args = Args("gpu-a", {other.string()});
  args.insert(args.begin(), "watch");
  const pid_t second = Spawn(args, home, home / "second.out", home / "second.err");
  const int rc = WaitFor(second, 20s);
  EXPECT_NE(rc, 0);
  EXPECT_NE(rc, -1) << "the second daemon ran";
  std::ifstream in(home / "second.err");
  const std::string err(std::istreambuf_iterator<char>(in), {});
  EXPECT_NE(err.find("is already using this database"), std::string::npos) << err;
  EXPECT_TRUE(first.Running()) << first.Log();
  EXPECT_EQ(first.Stop(SIGTERM), 0) << first.Log();
}

// One job on two hosts (the recorded job_oom, its rank 0 on gpu-a and its rank 1 on gpu-b, each
// host's torchrun folder `job42_<random>`): each host's daemon reads its own rank's files, both
// at once, and the store ends with one incident of the job, its ranks from both hosts, rank 1's
// out-of-memory first.
TEST_F(FleetWatch, TwoHostsRanksOfOneJobAreOneIncident) {
  const fs::path home_a = Home("gpu-a"), home_b = Home("gpu-b");
  fs::path run;
  for (const auto& e : fs::directory_iterator(fs::path(TRIAGE_SOURCE_DIR) / "tests/data/jobs/job_oom/logs"))
    if (e.is_directory()) run = e.path();
  ASSERT_FALSE(run.empty());
  auto args = [&](const std::string& host, const fs::path& home) {
    return std::vector<std::string>{"--db", url_, "--host", host, "--quiet-gap", "1", "--heartbeat",
                                    "0.2", "--recursive", (home / "logs").string()};
  };
  WatchProcess a(home_a, args("gpu-a", home_a));
  WatchProcess b(home_b, args("gpu-b", home_b));
  ASSERT_TRUE(a.Running()) << a.Log();
  ASSERT_TRUE(b.Running()) << b.Log();
  std::this_thread::sleep_for(500ms);
  auto copy = [&](int rank, const fs::path& home, const std::string& folder) {
    const fs::path dest = home / "logs" / folder / "attempt_0" / std::to_string(rank);
    fs::create_directories(dest.parent_path());
    fs::copy(run / "attempt_0" / std::to_string(rank), dest, fs::copy_options::recursive);
  };
  std::thread ca([&] { copy(0, home_a, "job42_p0xk2m7a"); });
  copy(1, home_b, "job42_w81qz4cd");
  ca.join();
  auto joined = [&]() -> std::optional<StoredIncident> {
    const auto h = History();
    if (h.size() != 1) return std::nullopt;
    StoreOptions o;
    o.create = false;
    auto store = Store::Open(url_, o);
    if (!store.ok()) return std::nullopt;
    auto got = store->GetIncident(h[0].id);
    if (!got.ok() || got->incident.ranks.size() < 2) return std::nullopt;
    return std::move(*got);
  };
  EXPECT_TRUE(WaitUntil([&] { return joined().has_value(); }, 30s))
      << Describe(History()) << a.Log() << b.Log();
  std::this_thread::sleep_for(1500ms);  // nothing more comes
  EXPECT_EQ(a.Stop(SIGTERM), 0) << a.Log();
  EXPECT_EQ(b.Stop(SIGTERM), 0) << b.Log();
  ExpectNoError(a, "gpu-a");
  ExpectNoError(b, "gpu-b");
  const auto history = History();
  ASSERT_EQ(history.size(), 1u) << Describe(history);
  EXPECT_EQ(history[0].top_cause.rfind("cuda.oom", 0), 0u) << Describe(history);
  EXPECT_EQ(history[0].hosts, 2);
  auto inc = joined();
  ASSERT_TRUE(inc);
  EXPECT_EQ(inc->incident.job, "torchrun job42 attempt_0");
  ASSERT_EQ(inc->incident.ranks.size(), 2u);
  EXPECT_EQ(inc->incident.ranks[0].actor, "rank 1");
  EXPECT_EQ(inc->incident.ranks[0].state, "failed");
  EXPECT_EQ(inc->incident.ranks[0].host, "gpu-b");
  EXPECT_EQ(inc->incident.ranks[1].actor, "rank 0");
  EXPECT_EQ(inc->incident.ranks[1].host, "gpu-a");
  EXPECT_EQ(inc->incident.actors.front(), "rank 1");
}

}  // namespace
}  // namespace triage::store

// The fleet store going away under a running `triage watch`: a real PostgreSQL server of the
// test's own is restarted, stalled (SIGSTOP of the server and its back ends) and replaced by a
// listener that accepts and never answers. Through all of it nothing that closed is lost (it
// waits in memory, or is read again after a restart from checkpoints that did not move), none
// is stored twice, `/healthz` answers 503 with the reason while the store cannot be reached and
// 200 again after, and SIGTERM ends the daemon within its bound whatever the server does.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <map>
#include <optional>

#include "../daemon/loopback.h"
#include "postgres_server.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

namespace fs = std::filesystem;
using daemon::testing::Append;
using daemon::testing::FreePort;
using daemon::testing::HttpGet;
using daemon::testing::WaitUntil;
using daemon::testing::WatchProcess;
using namespace std::chrono_literals;

// How long SIGTERM may take however the server behaves: the unit's TimeoutStopSec (30 s) with
// room to spare (the daemon's own bound is 20 s: an answer waited for 10 s, a connection 10 s).
constexpr auto kStopBound = 25s;

// Crash `n`: the kernel's OOM kill in a file of its own, so one incident (its service is the
// file's name) stored under host.oom_killed.
std::string CrashFile(int n) { return "kern-" + std::to_string(n) + ".log"; }
std::string CrashLine(int n) {
  const std::string k = std::to_string(n);
  return "[ 81" + k + "1.204331] Out of memory: Killed process 40" + k + " (worker" + k +
         ") total-vm:81234567kB, anon-rss:62345678kB, file-rss:0kB, shmem-rss:0kB, UID:1000 "
         "pgtables:123456kB oom_score_adj:0\n";
}

// A Unix socket at `path` that accepts connections into its backlog and never answers them.
class SilentListener {
 public:
  explicit SilentListener(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    unlink(path.c_str());
    ok_ = fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
          chmod(path.c_str(), 0777) == 0 && listen(fd_, 64) == 0;
  }
  ~SilentListener() {
    if (fd_ >= 0) close(fd_);
    unlink(path_.c_str());
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  bool ok() const { return ok_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool ok_ = false;
};

class StoreOutage : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::PostgresServer::Own();
    if (!server_->ok()) GTEST_SKIP() << "no PostgreSQL server: " << server_->why();
    url_ = server_->NewDatabase();
    ASSERT_FALSE(url_.empty()) << "createdb failed";
    ASSERT_FALSE(tmp_.path().empty());
    home_ = tmp_.path();
    fs::create_directories(home_ / "config");
    fs::create_directories(home_ / "logs");
    port_ = FreePort();
    ASSERT_GT(port_, 0);
  }

  void StartDaemon() {
    daemon_.emplace(home_, std::vector<std::string>{
                               "--db", url_, "--host", "gpu-a", "--quiet-gap", "60",
                               "--heartbeat", "0.2", "--metrics",
                               "127.0.0.1:" + std::to_string(port_), (home_ / "logs").string()});
    ASSERT_TRUE(daemon_->Running()) << daemon_->Log();
  }
  // SIGTERM; the exit status, and how long it took.
  std::pair<int, std::chrono::milliseconds> StopDaemon() {
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = daemon_->Stop(SIGTERM, 60s);
    return {rc, std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - t0)};
  }
  void Crash(int n) { Append(home_ / "logs" / CrashFile(n), {CrashLine(n)}, 0, 1); }

  // Occurrences stored per service; empty when the store cannot be read.
  std::map<std::string, int64_t> Stored() {
    StoreOptions o;
    o.create = false;
    o.answer_timeout_ms = 5000;
    auto store = Store::Open(url_, o);
    if (!store.ok()) return {};
    HistoryFilter all;
    all.limit = 0;
    auto h = store->History(all);
    std::map<std::string, int64_t> out;
    if (h.ok())
      for (const auto& s : *h) out[s.service] += s.occurrences;
    return out;
  }
  bool WaitStored(int crashes) {
    return WaitUntil([&] { return Stored().size() >= static_cast<size_t>(crashes); }, 40s);
  }
  // Waits until /healthz answers `status`; the last body.
  bool WaitHealth(int status, std::string* body, std::chrono::seconds within) {
    return WaitUntil(
        [&] {
          const auto a = HttpGet(port_, "/healthz");
          *body = a.body;
          return a.status == status;
        },
        within);
  }

  std::unique_ptr<testing::PostgresServer> server_;
  std::string url_;
  daemon::testing::TempDir tmp_;
  fs::path home_;
  int port_ = -1;
  std::optional<WatchProcess> daemon_;
};

TEST_F(StoreOutage, RestartStallAndSilentListenerLoseNothingAndStopInBoundedTime) {
  std::string body;
  StartDaemon();
  Crash(0);
  ASSERT_TRUE(WaitStored(1)) << daemon_->Log();
  EXPECT_TRUE(WaitHealth(200, &body, 10s)) << body;

  // A restart of the server: /healthz says the store is gone, the crash of the downtime waits
  // in memory and is stored once the daemon has reconnected.
  server_->Stop();
  Crash(1);
  EXPECT_TRUE(WaitHealth(503, &body, 20s)) << body << daemon_->Log();
  EXPECT_NE(body.find("the store cannot be reached"), std::string::npos) << body;
  ASSERT_TRUE(server_->Start()) << server_->why();
  EXPECT_TRUE(WaitStored(2)) << daemon_->Log();
  EXPECT_TRUE(WaitHealth(200, &body, 20s)) << body;

  // The server stalled: a command gets no answer; the daemon gives the connection up, says so,
  // and SIGTERM ends it in bounded time. The crash of the stall is read again at the next start.
  server_->Pause();
  Crash(2);
  EXPECT_TRUE(WaitHealth(503, &body, 30s)) << body << daemon_->Log();
  auto [rc, took] = StopDaemon();
  EXPECT_EQ(rc, 0) << daemon_->Log();
  EXPECT_LT(took, kStopBound) << "SIGTERM took " << took.count() << " ms with the server stalled";
  server_->Resume();
  StartDaemon();
  EXPECT_TRUE(WaitStored(3)) << daemon_->Log();

  // The server replaced by a listener that never answers: connecting to it waits out the
  // connect timeout, again and again; SIGTERM still ends the daemon in bounded time.
  server_->Stop();
  {
    SilentListener silent(server_->SocketPath());
    ASSERT_TRUE(silent.ok()) << server_->SocketPath();
    Crash(3);
    EXPECT_TRUE(WaitHealth(503, &body, 20s)) << body << daemon_->Log();
    // A reconnection is under way (the first comes 1 s after the failure, and waits 10 s).
    std::this_thread::sleep_for(3s);
    std::tie(rc, took) = StopDaemon();
    EXPECT_EQ(rc, 0) << daemon_->Log();
    EXPECT_LT(took, kStopBound) << "SIGTERM took " << took.count()
                                << " ms with a silent listener";
  }
  ASSERT_TRUE(server_->Start()) << server_->why();
  StartDaemon();
  EXPECT_TRUE(WaitStored(4)) << daemon_->Log();
  std::tie(rc, took) = StopDaemon();
  EXPECT_EQ(rc, 0) << daemon_->Log();

  // Every crash once: nothing lost, nothing counted twice.
  std::map<std::string, int64_t> want;
  for (int n = 0; n < 4; ++n) want["kern-" + std::to_string(n)] = 1;
  EXPECT_EQ(Stored(), want);
}

}  // namespace
}  // namespace triage::store

// A real PostgreSQL server for the store's tests: initdb and postgres in a temporary folder,
// a Unix socket only (listen_addresses = ''), run as `nobody` when the tests run as root
// (initdb refuses root). It is started on first use, once per test process, and stopped with the
// process: at exit, or (PR_SET_PDEATHSIG) when the process dies. Each test gets a database of
// its own (NewDatabase). Without the server's programs the tests that need it skip, saying why.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fixtures.h"

namespace triage::store::testing {

class PostgresServer {
 public:
  // The process's server, started on first call; check ok() (else why()).
  static PostgresServer& Shared() {
    static PostgresServer server(/*may_share=*/true);
    return server;
  }
  // A server of the caller's own, never the run's shared one: a test that stops, restarts or
  // stalls its server uses one.
  static std::unique_ptr<PostgresServer> Own() {
    return std::unique_ptr<PostgresServer>(new PostgresServer(/*may_share=*/false));
  }

  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }

  // A new, empty database on the server, as the URL `--db` takes.
  std::string NewDatabase() {
    const std::string name = "t" + std::to_string(getpid()) + "_" + std::to_string(++databases_);
    if (Exec({bin_ + "/createdb", "-h", socket_, "-U", "triage", name}, false) != 0) return "";
    return Url(name);
  }
  std::string Url(const std::string& database) const {
    return "postgresql://triage@/" + database + "?host=" + socket_;
  }
  // Runs `sql` (one or more statements) on the database at `url` with psql, stopping at the
  // first error; psql's exit status (0: all ran).
  int Sql(const std::string& url, const std::string& sql) const {
    return Exec({bin_ + "/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql},
                false);
  }

  // Of a server of one's own (Own()): stops it (fast shutdown: clients are cut, nothing waits),
  // starts it again on the same data and socket, stalls every process of it (SIGSTOP: the
  // server and its connections' back ends) and lets it go on; where its socket is.
  void Stop() {
    if (pid_ <= 0) return;
    Resume();
    kill(pid_, SIGINT);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  bool Start() {
    if (pid_ > 0) return true;
    return StartServer();
  }
  void Pause() { SignalAll(SIGSTOP); }
  void Resume() { SignalAll(SIGCONT); }
  std::string SocketPath() const { return socket_ + "/.s.PGSQL.5432"; }

  ~PostgresServer() {
    Stop();
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

 private:
  explicit PostgresServer(bool may_share) {
    const char* env = std::getenv("TRIAGE_PG_BIN");
    bin_ = env && *env ? env : "/usr/lib/postgresql/15/bin";
    // The server ctest started for the whole run (postgres_fixture.sh), when there is one.
    if (const char* shared = std::getenv("TRIAGE_PG_SOCKET_DIR"); may_share && shared && *shared) {
      const std::string dir = shared;
      if (access((dir + "/.s.PGSQL.5432").c_str(), F_OK) == 0 &&
          access((bin_ + "/createdb").c_str(), X_OK) == 0) {
        socket_ = dir;
        ok_ = true;
        return;
      }
    }
    for (const char* tool : {"initdb", "postgres", "createdb"}) {
      if (access((bin_ + "/" + tool).c_str(), X_OK) != 0) {
        why_ = bin_ + "/" + tool + " is not installed (postgresql-15; scripts/deps.sh)";
        return;
      }
    }
    std::string tmpl = (std::filesystem::temp_directory_path() / "triage-pg-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      why_ = "cannot make a temporary folder";
      return;
    }
    dir_ = tmpl;
    if (geteuid() == 0 && chown(dir_.c_str(), kNobody, kNobody) != 0) {
      why_ = "cannot give " + dir_ + " to nobody";
      return;
    }
    const std::string data = dir_ + "/data";
    if (Exec({bin_ + "/initdb", "-D", data, "-U", "triage", "-A", "trust", "-E", "UTF8",
              "--locale=C", "--no-sync"},
             true) != 0) {
      why_ = "initdb failed (see " + dir_ + "/server.log)";
      return;
    }
    StartServer();
  }

  // Starts postgres on the folder's data and waits until it accepts connections.
  bool StartServer() {
    const std::string data = dir_ + "/data";
    pid_ = Spawn(
        {bin_ + "/postgres", "-D", data, "-k", dir_, "-c", "listen_addresses=", "-c", "fsync=off",
         "-c", "synchronous_commit=off", "-c", "max_connections=60", "-c", "shared_buffers=16MB"},
        true);
    if (pid_ <= 0) {
      why_ = "cannot start postgres";
      return false;
    }
    const std::string socket = dir_ + "/.s.PGSQL.5432";
    for (int i = 0; i < 300; ++i) {
      if (access(socket.c_str(), F_OK) == 0 &&
          Exec({bin_ + "/pg_isready", "-q", "-h", dir_}, false) == 0) {
        socket_ = dir_;
        ok_ = true;
        return true;
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        why_ = "postgres exited at start (see " + dir_ + "/server.log)";
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    why_ = "postgres did not accept connections in 30 s";
    return false;
  }

  static constexpr uid_t kNobody = 65534;

  // The server and its children (each back end is a session leader of its own, so a signal to
  // the server's process group misses them).
  void SignalAll(int sig) const {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream stat(e.path() / "stat");
      std::string line;
      std::getline(stat, line);
      const size_t close = line.rfind(')');
      if (close == std::string::npos) continue;
      char state = 0;
      int ppid = 0;
      if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == pid_)
        kill(static_cast<pid_t>(std::atoi(name.c_str())), sig);
    }
  }

  // Starts `argv`, as nobody when `as_server` and this process is root, its output in
  // server.log; the child dies with this process.
  pid_t Spawn(const std::vector<std::string>& argv, bool as_server) const {
    const std::string log = dir_.empty() ? std::string("/dev/null") : dir_ + "/server.log";
    pid_t pid = fork();
    if (pid != 0) return pid;
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    if (as_server && geteuid() == 0) {
      if (setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(126);
    }
    // After the change of user, which clears it.
    prctl(PR_SET_PDEATHSIG, SIGQUIT);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int Exec(const std::vector<std::string>& argv, bool as_server) const {
    pid_t pid = Spawn(argv, as_server);
    if (pid < 0) return -1;
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string bin_;
  std::string dir_;     // a server of this process's own: its folder (removed with it)
  std::string socket_;  // where the server's socket is (dir_, or the shared server's)
  pid_t pid_ = -1;
  bool ok_ = false;
  std::string why_;
  int databases_ = 0;
};

// The back ends a parameterized store test runs against.
enum class Backend { kSqlite, kPostgres };

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

// A test run against each back end: target() is a fresh SQLite file or a fresh PostgreSQL
// database. Without the PostgreSQL programs the PostgreSQL run skips, saying why.
class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kSqlite) {
      target_ = dir_.File("t.db");
      return;
    }
    PostgresServer& server = PostgresServer::Shared();
    if (!server.ok()) GTEST_SKIP() << "no PostgreSQL server: " << server.why();
    target_ = server.NewDatabase();
    ASSERT_FALSE(target_.empty()) << "createdb failed";
  }
  const std::string& target() const { return target_; }
  TempDir dir_;

 private:
  std::string target_;
};

}  // namespace triage::store::testing

// Runs the TEST_Ps of `suite` (a BackendTest) against SQLite and PostgreSQL.
#define TRIAGE_ON_EACH_BACKEND(suite)                                                       \
  INSTANTIATE_TEST_SUITE_P(Backends, suite,                                                 \
                           ::testing::Values(::triage::store::testing::Backend::kSqlite,    \
                                             ::triage::store::testing::Backend::kPostgres), \
                           ::triage::store::testing::BackendName)

// `triage watch` under systemd: sd_notify's READY=1 once it watches and STOPPING=1 at SIGTERM,
// sent to the datagram socket NOTIFY_SOCKET names (Type=notify), and its own log with journald's
// "<N>" priority prefixes when its stderr is the stream JOURNAL_STREAM names, without them when
// stderr is anything else.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;

class Folder {
 public:
  Folder() {
    std::string pattern = (fs::temp_directory_path() / "triage-sd-XXXXXX").string();
    if (char* p = ::mkdtemp(pattern.data())) path_ = p;
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A datagram socket bound at `path`, as systemd's notify socket is.
int BindNotifySocket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
  return fd;
}

// The next datagram within `ms`, "" when none came.
std::string Receive(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, ms) != 1) return "";
  char buf[256];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, size_t(n)) : "";
}

// `triage watch` on `folder` with stderr to `err_path`; JOURNAL_STREAM names that file's device
// and inode when `journal`, another file's when not.
pid_t StartWatch(const Folder& dir, const std::string& err_path, bool journal) {
  const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const std::string other = dir.path() + "/other";
  const int other_fd = ::open(other.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  struct stat st {};
  ::fstat(journal ? err : other_fd, &st);
  ::close(other_fd);
  const std::string stream = "JOURNAL_STREAM=" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  const std::string notify = "NOTIFY_SOCKET=" + dir.path() + "/notify";
  const std::string home = "HOME=" + dir.path();
  const std::string rules = "TRIAGE_RULES_DIR=" + std::string(TRIAGE_SOURCE_DIR) + "/rules";
  const std::string logs = dir.path() + "/logs", db = dir.path() + "/t.db";
  fs::create_directories(logs);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(err, STDERR_FILENO);
    const char* argv[] = {TRIAGE_BINARY, "watch", logs.c_str(), "--db", db.c_str(), nullptr};
    const char* envp[] = {"PATH=/usr/bin:/bin", home.c_str(), rules.c_str(), stream.c_str(),
                          notify.c_str(), nullptr};
    ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp));
    ::_exit(127);
  }
  ::close(err);
  return pid;
}

int Stop(pid_t pid) {
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ServiceManager, WatchSaysReadyAndStoppingAndPrefixesItsLogForTheJournal) {
  Folder dir;
  const int sock = BindNotifySocket(dir.path() + "/notify");
  ASSERT_GE(sock, 0);
  const std::string err = dir.path() + "/stderr";
  const pid_t pid = StartWatch(dir, err, /*journal=*/true);
  EXPECT_EQ(Receive(sock, 20000), "READY=1");
  EXPECT_EQ(Stop(pid), 0);
  EXPECT_EQ(Receive(sock, 5000), "STOPPING=1");
  const std::string log = triage::testing::Slurp(err);
  EXPECT_EQ(log.rfind("<6>time=", 0), 0u) << log;
  EXPECT_NE(log.find("\n<6>time=") , std::string::npos) << log;
  EXPECT_NE(log.find("event=watch.stop"), std::string::npos) << log;
  for (size_t b = 0, e; (e = log.find('\n', b)) != std::string::npos; b = e + 1)
    EXPECT_EQ(log[b], '<') << log.substr(b, e - b);
  ::close(sock);
}

TEST(ServiceManager, AStderrThatIsNotTheJournalsStreamGetsNoPrefixes) {
  Folder dir;
  const int sock = BindNotifySocket(dir.path() + "/notify");
  ASSERT_GE(sock, 0);
  const std::string err = dir.path() + "/stderr";
  const pid_t pid = StartWatch(dir, err, /*journal=*/false);
  EXPECT_EQ(Receive(sock, 20000), "READY=1");
  EXPECT_EQ(Stop(pid), 0);
  const std::string log = triage::testing::Slurp(err);
  EXPECT_EQ(log.rfind("time=", 0), 0u) << log;
  EXPECT_EQ(log.find("<6>"), std::string::npos) << log;
  ::close(sock);
}

}  // namespace

// Test harness for the daemon's integration tests: temporary folders, the real `triage` binary
// run as a child process (watch in the background, analyze/--once in the foreground), and the
// store read back through the store library.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "../../read_source.h"
#include "triage/store/store.h"

namespace triage::daemon::testing {

namespace fs = std::filesystem;

inline std::string Binary() { return TRIAGE_BINARY; }
inline std::string DataFile(const std::string& name) {
  return std::string(TRIAGE_TEST_DATA) + "/data/daemon/" + name;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "triage-daemon-XXXXXX").string();
    char* p = mkdtemp(tmpl.data());
    path_ = p ? fs::path(p) : fs::path();
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

// The environment every child gets: the source tree's rules, and no user configuration.
inline void PrepareChildEnvironment(const fs::path& home) {
  setenv("TRIAGE_RULES_DIR", (std::string(TRIAGE_SOURCE_DIR) + "/rules").c_str(), 1);
  setenv("XDG_CONFIG_HOME", (home / "config").c_str(), 1);
  setenv("XDG_STATE_HOME", (home / "state").c_str(), 1);
  unsetenv("TRIAGE_DB");
}

// Starts `triage args...` with its output appended to the two files; `in_child`, when given,
// runs in the child just before the exec (after the environment is prepared).
inline pid_t Spawn(const std::vector<std::string>& args, const fs::path& home,
                   const fs::path& stdout_path, const fs::path& stderr_path,
                   const std::function<void()>& in_child = {}) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  PrepareChildEnvironment(home);
  if (in_child) in_child();
  int out = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (out >= 0) dup2(out, 1);
  if (err >= 0) dup2(err, 2);
  std::vector<char*> argv;
  std::string bin = Binary();
  argv.push_back(bin.data());
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(bin.c_str(), argv.data());
  _exit(127);
}

// Waits for `pid`; returns its exit status, 128+signal when killed, -1 on timeout (then kills).
inline int WaitFor(pid_t pid, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Runs `triage args...` to completion; stdout into *out when given.
inline int RunTriage(const std::vector<std::string>& args, const fs::path& home,
                     std::string* out = nullptr) {
  fs::path o = home / "run.out", e = home / "run.err";
  std::error_code ec;
  fs::remove(o, ec);
  pid_t pid = Spawn(args, home, o, e);
  int rc = WaitFor(pid, std::chrono::seconds(120));
  if (out) {
    std::ifstream in(o);
    std::stringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
  }
  return rc;
}

// A `triage watch` running in the background; killed at the end of the test if still running.
class WatchProcess {
 public:
  // Returns once the daemon has logged its start (its store is open then: a reader opening the
  // database earlier could race the daemon's creation of the schema), or has exited. `in_child`
  // as for Spawn.
  WatchProcess(const fs::path& home, std::vector<std::string> args,
               const std::function<void()>& in_child = {})
      : home_(home) {
    args.insert(args.begin(), "watch");
    log_ = home / "watch.log";
    size_t before = Starts();
    pid_ = Spawn(args, home, home / "watch.out", log_, in_child);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (Starts() == before && Running() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~WatchProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      int st;
      waitpid(pid_, &st, 0);
    }
  }
  WatchProcess(const WatchProcess&) = delete;
  WatchProcess& operator=(const WatchProcess&) = delete;

  void Signal(int sig) { kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  // Sends `sig` and waits; returns the exit status (see WaitFor).
  int Stop(int sig = SIGTERM, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    kill(pid_, sig);
    int rc = WaitFor(pid_, timeout);
    pid_ = -1;
    return rc;
  }
  bool Running() {
    int st;
    return pid_ > 0 && waitpid(pid_, &st, WNOHANG) == 0;
  }
  size_t Starts() const {
    std::string log = Log();
    size_t n = 0;
    for (size_t k = log.find("event=watch.start"); k != std::string::npos;
         k = log.find("event=watch.start", k + 1))
      ++n;
    return n;
  }
  std::string Log() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  fs::path home_;
  fs::path log_;
  pid_t pid_ = -1;
};

// A test with a temporary home: a log folder to watch (`dir_`), a database path (`db_`) and an
// empty configuration folder, all removed at the end.
class WatchFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    dir_ = tmp_ / "logs";
    fs::create_directories(dir_);
    fs::create_directories(tmp_ / "config");
    db_ = tmp_ / "watch.db";
  }

  TempDir tmp_;
  fs::path dir_, db_;
};

inline bool WaitUntil(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

// Occurrences per root cause in a database (an incident counts under each of its causes).
inline std::map<std::string, int64_t> CauseOccurrences(const fs::path& db) {
  std::map<std::string, int64_t> out;
  if (!fs::exists(db)) return out;
  store::StoreOptions o;
  o.create = false;
  auto s = store::Store::Open(db.string(), o);
  if (!s.ok()) return out;
  auto stats = s->GetStats();
  if (!stats.ok()) return out;
  for (const auto& row : stats->by_cause) out[row.key] = row.occurrences;
  return out;
}

inline int64_t TotalOccurrences(const std::map<std::string, int64_t>& m) {
  int64_t n = 0;
  for (const auto& [k, v] : m) n += v;
  return n;
}

inline std::optional<store::Heartbeat> ReadHeartbeat(const fs::path& db) {
  if (!fs::exists(db)) return std::nullopt;
  store::StoreOptions o;
  o.create = false;
  auto s = store::Store::Open(db.string(), o);
  if (!s.ok()) return std::nullopt;
  auto hb = s->GetHeartbeat();
  if (!hb.ok() || !*hb) return std::nullopt;
  return **hb;
}

inline int64_t HeartbeatCounter(const fs::path& db, const std::string& key) {
  auto hb = ReadHeartbeat(db);
  if (!hb) return -1;
  auto it = hb->counters.find(key);
  return it == hb->counters.end() ? -1 : it->second;
}

inline std::string ToString(const std::map<std::string, int64_t>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += "  " + k + ": " + std::to_string(v) + "\n";
  return s.empty() ? "  (none)\n" : s;
}

// The truth sidecar of a genlogs.py workload: its incident groups (one group = one incident)
// with the root cause of each and the lines they span.
struct WorkloadTruth {
  struct Group {
    std::string root_cause;
    uint64_t first_line = 0, last_line = 0;
  };
  std::map<int64_t, Group> groups;

  // Incidents per root cause, `copies` times over (the workload written that many times). The
  // generator writes each rank's failure as a group of its own; groups of one root cause whose
  // lines interleave are the ranks of one job failing together, one incident (DESIGN.md 5b).
  std::map<std::string, int64_t> PerCause(int64_t copies = 1) const {
    std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> spans;
    for (const auto& [id, g] : groups) spans[g.root_cause].emplace_back(g.first_line, g.last_line);
    std::map<std::string, int64_t> out;
    for (auto& [cause, list] : spans) {
      std::sort(list.begin(), list.end());
      uint64_t end = 0;
      for (size_t k = 0; k < list.size(); ++k) {
        if (k == 0 || list[k].first > end) out[cause] += copies;
        end = std::max(end, list[k].second);
      }
    }
    return out;
  }

  // Stored occurrences per cause, each cause counted under the truth's root cause it refines
  // ("nccl.failure.timeout" under "nccl.failure"); others are kept as they are.
  std::map<std::string, int64_t> ByRootCause(const std::map<std::string, int64_t>& stored) const {
    const auto truth = PerCause();
    std::map<std::string, int64_t> out;
    for (const auto& [cause, n] : stored) {
      std::string key = cause;
      for (const auto& [root, unused] : truth)
        if (cause == root || cause.rfind(root + ".", 0) == 0) key = root;
      out[key] += n;
    }
    return out;
  }

  // The number of lines nearest `want` after which the workload can be cut into two files
  // without cutting an incident: no group has lines on both sides.
  size_t CutNear(size_t want) const {
    auto clean = [&](size_t cut) {
      for (const auto& [id, g] : groups)
        if (g.first_line <= cut && cut < g.last_line) return false;
      return true;
    };
    for (size_t d = 0;; ++d) {
      if (clean(want + d)) return want + d;
      if (d <= want && clean(want - d)) return want - d;
    }
  }
};

// Reads the sidecar's {"type": "incident", ...} records (genlogs.py writes one per line, with
// `"key": value` spacing).
inline WorkloadTruth ReadTruth(const std::string& path) {
  WorkloadTruth t;
  std::ifstream in(path);
  std::string rec;
  auto text = [&](const std::string& key) {
    auto k = rec.find("\"" + key + "\": \"");
    if (k == std::string::npos) return std::string();
    k += key.size() + 5;
    return rec.substr(k, rec.find('"', k) - k);
  };
  auto number = [&](const std::string& key) -> int64_t {
    auto k = rec.find("\"" + key + "\": ");
    return k == std::string::npos ? -1 : std::stoll(rec.substr(k + key.size() + 4));
  };
  while (std::getline(in, rec)) {
    if (text("type") != "incident") continue;
    auto& g = t.groups[number("group")];
    const auto first = static_cast<uint64_t>(number("first_line"));
    const auto last = static_cast<uint64_t>(number("last_line"));
    if (g.last_line == 0) g.first_line = first;
    g.first_line = std::min(g.first_line, first);
    g.last_line = std::max(g.last_line, last);
    g.root_cause = text("root_cause");
  }
  return t;
}

// The workload's lines, each with its '\n' (a gzip-compressed file is read decompressed).
inline std::vector<std::string> ReadLines(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(triage::testing::ReadSource(path));
  std::string line;
  while (std::getline(in, line)) lines.push_back(line + "\n");
  return lines;
}

inline void Append(const fs::path& path, const std::vector<std::string>& lines, size_t from,
                   size_t to) {
  std::string buf;
  for (size_t i = from; i < to && i < lines.size(); ++i) buf += lines[i];
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  size_t off = 0;
  while (off < buf.size()) {
    ssize_t w = write(fd, buf.data() + off, buf.size() - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
  close(fd);
}

inline uint64_t FileSize(const fs::path& p) {
  std::error_code ec;
  auto s = fs::file_size(p, ec);
  return ec ? 0 : s;
}

}  // namespace triage::daemon::testing

// Safe program runs: see detail/process.h.
#include "triage/verifiers/detail/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace triage::verifiers::detail {

namespace {

std::atomic<uint64_t> g_started{0};

// Lexically normal absolute path: no "." or ".." components, no doubled slashes.
bool IsNormalAbsolute(const std::string& p) {
  if (p.empty() || p[0] != '/') return false;
  size_t start = 1;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    if (slash == std::string::npos) slash = p.size();
    std::string part = p.substr(start, slash - start);
    if (part.empty() && slash != p.size()) return false;
    if (part == "." || part == "..") return false;
    start = slash + 1;
  }
  return true;
}

bool UnderPrefix(const std::string& path, std::string prefix) {
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  if (prefix == "/") return true;
  return path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
         path[prefix.size()] == '/';
}

// The file and every folder above it: owned by root or this user, not writable by group or
// others. Symbolic links are followed for the file (what would run) and checked as links too.
std::string OwnershipProblem(const std::string& path) {
  uid_t me = ::geteuid();
  auto check = [&](const std::string& p, bool follow) -> std::string {
    struct stat st;
    if ((follow ? ::stat(p.c_str(), &st) : ::lstat(p.c_str(), &st)) != 0)
      return p + ": " + std::strerror(errno);
    if (st.st_uid != 0 && st.st_uid != me) return p + " is owned by uid " + std::to_string(st.st_uid);
    if (!S_ISLNK(st.st_mode) && (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
      return p + " is writable by others";
    return {};
  };
  if (auto p = check(path, true); !p.empty()) return p;
  if (auto p = check(path, false); !p.empty()) return p;
  std::string dir = path;
  while (true) {
    size_t slash = dir.find_last_of('/');
    if (slash == std::string::npos) break;
    dir = slash == 0 ? "/" : dir.substr(0, slash);
    if (auto p = check(dir, true); !p.empty()) return p;
    if (dir == "/") break;
  }
  return {};
}

}  // namespace

ProgramDecision MayRun(const std::string& path, const VerifyConfig& config) {
  ProgramDecision d;
  if (!IsNormalAbsolute(path)) {
    d.reason = "not allowed: '" + path + "' is not a plain absolute path";
    return d;
  }
  for (const auto& prefix : config.allowed_prefixes)
    if (!prefix.empty() && UnderPrefix(path, prefix)) {
      d.allowed = true;
      return d;
    }
  if (config.trust_log_paths) {
    std::string problem = OwnershipProblem(path);
    if (problem.empty()) {
      d.allowed = true;
      return d;
    }
    d.reason = "not allowed: " + path + " is untrusted (" + problem +
               "); add a prefix of it to [verify] allowed_prefixes";
    return d;
  }
  d.reason = "not allowed: " + path +
             " is under no allowed prefix; add one to [verify] allowed_prefixes, or pass "
             "--trust-log-paths";
  return d;
}

std::string InterpreterOfSitePackages(const std::string& path) {
  size_t pos = path.find("/lib/python3");
  while (pos != std::string::npos) {
    size_t after = path.find('/', pos + 5);  // the slash after "python3.X"
    if (after != std::string::npos) {
      std::string version = path.substr(pos + 5, after - pos - 5);  // "python3.12"
      bool ok = version.size() > 8 && version[7] == '.';
      for (size_t i = 8; ok && i < version.size(); ++i)
        ok = std::isdigit(static_cast<unsigned char>(version[i])) != 0;
      if (ok && (path.compare(after, 15, "/site-packages/") == 0 ||
                 path.compare(after, 14, "/site-packages") == 0 ||
                 path.compare(after, 13, "/dist-packages") == 0))
        return path.substr(0, pos) + "/bin/python3";
    }
    pos = path.find("/lib/python3", pos + 1);
  }
  return {};
}

bool IsPythonName(std::string_view name, bool dotted) {
  if (name.empty() || name.size() > 200) return false;
  bool start = true;
  for (char c : name) {
    if (c == '.' && dotted && !start) {
      start = true;
      continue;
    }
    bool alpha = std::isalpha(static_cast<unsigned char>(c)) || c == '_';
    bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (start ? !alpha : !(alpha || digit)) return false;
    start = false;
  }
  return !start;
}

ProgramOutput RunProgram(const std::vector<std::string>& argv, double timeout_seconds,
                         const std::vector<std::string>& env) {
  ProgramOutput out;
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    out.error = "not an absolute program path";
    return out;
  }
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    out.error = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    out.error = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) {
    out.error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    return out;
  }
  if (pid == 0) {
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ++g_started;
  out.started = true;
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_seconds));
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&out.out, &out.err};
  int open_count = 2;
  constexpr size_t kCap = 4u << 20;
  while (open_count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      out.timed_out = true;
      break;
    }
    int r = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[16384];
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
        continue;
      }
      if (sinks[i]->size() < kCap) sinks[i]->append(buf, static_cast<size_t>(n));
    }
  }
  for (auto& p : fds)
    if (p.fd >= 0) ::close(p.fd);
  if (out.timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  if (out.exit_code == 127 && out.out.empty() && out.err.empty())
    out.error = "could not execute " + argv[0];
  return out;
}

uint64_t ProgramsStarted() { return g_started.load(); }

}  // namespace triage::verifiers::detail

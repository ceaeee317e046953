// Safe program runs: see detail/process.h.
#include "triage/verifiers/detail/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

namespace triage::verifiers::detail {

// The one way to make an open ProgramFile: MayRun and MayLoad, after their checks.
class ProgramFileOpener {
 public:
  static ProgramFile Make(int fd, std::string path, bool script) {
    return ProgramFile(fd, std::move(path), script);
  }
};

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

bool UnderAnyPrefix(const std::string& path, const VerifyConfig& config) {
  for (const auto& prefix : config.allowed_prefixes)
    if (!prefix.empty() && UnderPrefix(path, prefix)) return true;
  return false;
}

enum class Purpose { kRun, kLoad };

// Owns a descriptor while a walk holds it.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// What a trusted component must be: owned by root or this user; a folder or the file writable
// by neither group nor others, except a sticky folder (/tmp), where no one else may rename or
// remove what root or this user owns. A link's own mode means nothing; its owner does (in a
// sticky folder, a link someone else owns is theirs to point anywhere).
std::string TrustProblem(const std::string& p, const struct stat& st) {
  const uid_t me = ::geteuid();
  if (st.st_uid != 0 && st.st_uid != me) return p + " is owned by uid " + std::to_string(st.st_uid);
  if (S_ISLNK(st.st_mode) || (S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX))) return {};
  if (st.st_mode & S_IWOTH) return p + " is writable by others";
  if (st.st_mode & S_IWGRP) return p + " is writable by its group";
  return {};
}

std::string Child(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string Parent(const std::string& dir) {
  size_t slash = dir.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
}

struct Opened {
  Fd fd;                // the file, O_RDONLY and close-on-exec
  std::string problem;  // why not, when fd is not open
};

Opened Refuse(std::string problem) {
  Opened o;
  o.problem = std::move(problem);
  return o;
}

// The walk of MayRun's contract (detail/process.h): from "/", one component at a time, each
// looked at without following it (fstatat AT_SYMLINK_NOFOLLOW) relative to the folder already
// checked and held open; a link is read (readlinkat) and its target's components walked on in
// its place; the file is opened relative to its checked folder with O_NOFOLLOW, and checked
// again on the descriptor. Holding each folder open means a folder renamed or replaced after
// its check cannot redirect the rest of the walk.
Opened OpenTrusted(const std::string& path, Purpose purpose) {
  constexpr int kMaxLinks = 40;  // the kernel's own bound (MAXSYMLINKS)
  std::vector<std::string> todo;  // components left, the next one last
  auto push = [&todo](const std::string& p) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= p.size()) {
      size_t slash = std::min(p.find('/', start), p.size());
      std::string part = p.substr(start, slash - start);
      if (!part.empty() && part != ".") parts.push_back(std::move(part));
      start = slash + 1;
    }
    todo.insert(todo.end(), parts.rbegin(), parts.rend());
  };
  auto open_root = [](Fd& dir, std::string& where) -> std::string {
    dir = Fd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    where.assign(1, '/');  // (not = "/": GCC 12 warns falsely of an overlapping copy)
    struct stat st;
    if (dir.get() < 0 || ::fstat(dir.get(), &st) != 0) return std::string("/: ") + std::strerror(errno);
    return TrustProblem("/", st);
  };

  Fd dir;
  std::string where;
  if (auto p = open_root(dir, where); !p.empty()) return Refuse(p);
  push(path);
  int links = 0;
  while (!todo.empty()) {
    const std::string name = std::move(todo.back());
    todo.pop_back();
    const bool last = todo.empty();
    if (name == "..") {
      // A link's target may climb: ".." of the folder reached, as the kernel resolves it.
      Fd up(::openat(dir.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
      struct stat st;
      if (up.get() < 0 || ::fstat(up.get(), &st) != 0) return Refuse(Parent(where) + ": " + std::strerror(errno));
      where = Parent(where);
      if (auto p = TrustProblem(where, st); !p.empty()) return Refuse(p);
      if (last) return Refuse(where + " is a folder");
      dir = std::move(up);
      continue;
    }
    const std::string here = Child(where, name);
    struct stat st;
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return Refuse(here + ": " + std::strerror(errno));
    if (auto p = TrustProblem(here, st); !p.empty()) return Refuse(p);
    if (S_ISLNK(st.st_mode)) {
      if (++links > kMaxLinks) return Refuse(path + ": more than 40 symbolic links");
      char buf[4096];
      ssize_t n = ::readlinkat(dir.get(), name.c_str(), buf, sizeof buf);
      if (n <= 0 || static_cast<size_t>(n) >= sizeof buf)
        return Refuse(here + ": cannot read the link" + (n < 0 ? std::string(": ") + std::strerror(errno) : ""));
      std::string target(buf, static_cast<size_t>(n));
      if (target[0] == '/')
        if (auto p = open_root(dir, where); !p.empty()) return Refuse(p);
      push(target);
      if (todo.empty()) return Refuse(here + " points to a folder");  // "/" or "."
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (last) return Refuse(here + " is a folder");
      Fd next(::openat(dir.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (next.get() < 0 || ::fstat(next.get(), &st) != 0) return Refuse(here + ": " + std::strerror(errno));
      if (auto p = TrustProblem(here, st); !p.empty()) return Refuse(p);  // what is held now
      dir = std::move(next);
      where = here;
      continue;
    }
    if (!last) return Refuse(here + " is not a folder");
    if (!S_ISREG(st.st_mode)) return Refuse(here + " is not a regular file");
    Fd file(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (file.get() < 0 || ::fstat(file.get(), &st) != 0) return Refuse(here + ": " + std::strerror(errno));
    // The checks that count are on what was opened.
    if (!S_ISREG(st.st_mode)) return Refuse(here + " is not a regular file");
    if (auto p = TrustProblem(here, st); !p.empty()) return Refuse(p);
    if (purpose == Purpose::kRun && !(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
      return Refuse(here + " is not executable");
    Opened o;
    o.fd = std::move(file);
    return o;
  }
  return Refuse(path + " is a folder");
}

// Under an allowed prefix the configuration vouches for the path as it resolves; it is opened
// once, like execve would, and that descriptor is what runs.
Opened OpenAsResolved(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Refuse("cannot open " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Refuse("cannot open " + path + ": not a regular file");
  Fd file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (file.get() < 0 || ::fstat(file.get(), &st) != 0)
    return Refuse("cannot open " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Refuse("cannot open " + path + ": not a regular file");
  Opened o;
  o.fd = std::move(file);
  return o;
}

// The interpreter of a "#!" line (the kernel's reading: blanks skipped, up to the next blank or
// the end of the line, within the first 256 bytes); "" when the file is no script. `script` is
// set when the file starts with "#!".
std::string ScriptInterpreter(int fd, bool& script) {
  char buf[256];
  ssize_t n;
  do n = ::pread(fd, buf, sizeof buf, 0);
  while (n < 0 && errno == EINTR);
  script = n >= 2 && buf[0] == '#' && buf[1] == '!';
  if (!script) return {};
  size_t i = 2, end = static_cast<size_t>(n);
  while (i < end && (buf[i] == ' ' || buf[i] == '\t')) ++i;
  size_t j = i;
  while (j < end && buf[j] != ' ' && buf[j] != '\t' && buf[j] != '\n' && buf[j] != '\0') ++j;
  return std::string(buf + i, j - i);
}

// A script runs its interpreter, which the kernel opens by path: it must be as trusted as the
// script (under an allowed prefix, or passing the ownership walk whatever trust_log_paths says:
// the configuration vouched for the script, not for whatever it names), and no script itself,
// so the chain ends there.
std::string InterpreterProblem(const std::string& script, const std::string& interpreter,
                               const VerifyConfig& config) {
  if (interpreter.empty() || !IsNormalAbsolute(interpreter))
    return script + " is a script whose interpreter is not a plain absolute path ('" + interpreter + "')";
  Opened o = UnderAnyPrefix(interpreter, config) ? OpenAsResolved(interpreter)
                                                 : OpenTrusted(interpreter, Purpose::kRun);
  if (o.fd.get() < 0)
    return "the interpreter of script " + script + " is untrusted (" + o.problem + ")";
  bool nested = false;
  ScriptInterpreter(o.fd.get(), nested);
  if (nested) return "the interpreter of script " + script + ", " + interpreter + ", is itself a script";
  return {};
}

ProgramDecision Decide(const std::string& path, const VerifyConfig& config, Purpose purpose) {
  ProgramDecision d;
  if (!IsNormalAbsolute(path)) {
    d.reason = "not allowed: '" + path + "' is not a plain absolute path";
    return d;
  }
  Opened opened;
  if (UnderAnyPrefix(path, config)) {
    // Allowed by the configuration; a file that cannot be opened is the run's failure (the
    // verdict says why it could not run), as it was when execve failed.
    d.allowed = true;
    opened = OpenAsResolved(path);
    if (opened.fd.get() < 0) {
      d.reason = opened.problem;
      return d;
    }
  } else if (config.trust_log_paths) {
    opened = OpenTrusted(path, purpose);
    if (opened.fd.get() < 0) {
      d.reason = "not allowed: " + path + " is untrusted (" + opened.problem +
                 "); add a prefix of it to [verify] allowed_prefixes";
      return d;
    }
    d.allowed = true;
  } else {
    d.reason = "not allowed: " + path +
               " is under no allowed prefix; add one to [verify] allowed_prefixes, or pass "
               "--trust-log-paths";
    return d;
  }
  bool script = false;
  if (purpose == Purpose::kRun) {
    std::string interpreter = ScriptInterpreter(opened.fd.get(), script);
    if (script) {
      if (std::string p = InterpreterProblem(path, interpreter, config); !p.empty()) {
        d.allowed = false;
        d.reason = "not allowed: " + p;
        return d;
      }
    }
  }
  d.program = ProgramFileOpener::Make(opened.fd.release(), path, script);
  return d;
}

}  // namespace

ProgramFile::ProgramFile(ProgramFile&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)), script_(o.script_) {}

ProgramFile& ProgramFile::operator=(ProgramFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    path_ = std::move(o.path_);
    script_ = o.script_;
  }
  return *this;
}

ProgramFile::~ProgramFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string ProgramFile::ProcPath() const { return "/proc/self/fd/" + std::to_string(fd_); }

ProgramDecision MayRun(const std::string& path, const VerifyConfig& config) {
  return Decide(path, config, Purpose::kRun);
}

ProgramDecision MayLoad(const std::string& path, const VerifyConfig& config) {
  return Decide(path, config, Purpose::kLoad);
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

namespace {

// fork + exec: `fd` >= 0 runs that descriptor (fexecve), else the path argv[0] (execve).
ProgramOutput Spawn(const std::vector<std::string>& argv, double timeout_seconds,
                    const std::vector<std::string>& env, int fd, bool script) {
  ProgramOutput out;
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
    for (int p : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(p);
    return out;
  }
  if (pid == 0) {
    // The program's descriptor must survive the dup2s onto 0-2 below.
    if (fd >= 0 && fd <= 2 && (fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) ::_exit(127);
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    if (fd < 0) {
      ::execve(args[0], args.data(), envp.data());
    } else {
      // A script's interpreter reads it as /dev/fd/N, which exec would have closed (fexecve
      // then fails with ENOENT): the descriptor stays open for it. A binary keeps none.
      if (script) ::fcntl(fd, F_SETFD, 0);
      ::fexecve(fd, args.data(), envp.data());
    }
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

}  // namespace

ProgramOutput RunProgram(const ProgramFile& program, const std::vector<std::string>& argv,
                         double timeout_seconds, const std::vector<std::string>& env) {
  if (!program.is_open()) {
    ProgramOutput out;
    out.error = "no checked program file to run" + (program.path().empty() ? "" : ": " + program.path());
    return out;
  }
  if (argv.empty()) {
    ProgramOutput out;
    out.error = "no argv";
    return out;
  }
  return Spawn(argv, timeout_seconds, env, program.fd(), program.script());
}

ProgramOutput RunProgram(const std::vector<std::string>& argv, double timeout_seconds,
                         const std::vector<std::string>& env) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    ProgramOutput out;
    out.error = "not an absolute program path";
    return out;
  }
  return Spawn(argv, timeout_seconds, env, -1, false);
}

uint64_t ProgramsStarted() { return g_started.load(); }

}  // namespace triage::verifiers::detail

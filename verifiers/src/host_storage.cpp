// host.disk, host.shm, host.path: the file system the log names, on this host.
//
// host.disk (host.disk_full): the free space and inodes of the filesystem holding the path the
// log names (or its nearest existing folder): the failing call's path, then every absolute path
// of the log's lines (LogSite::named_paths: the file being written, the cache folder, the
// checkpoint folder). Any of them full now (under 1% or 1 GiB free, or under 1% of its inodes)
// is `confirmed`; room on all now is `not_reproduced` (space may have been freed since: a log's
// "No space left on device" is a fact of its time). A log that names no path is judged on the
// folders a service writes to (the working folder, TMPDIR, the Hub cache) and on every writable
// filesystem of the host that holds files: the service's environment may have put a cache there
// (TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR), and one of them full now is `confirmed` by name.
// host.shm (host.shm_exhausted): the size and use of /dev/shm. Smaller than 1 GiB (a
// container's 64 MB default) or nearly full is `confirmed`; large and free is `not_reproduced`
// (the service's container may have had its own, smaller one).
// host.path (model.load_failed, host.permission): whether the path the log names exists and
// what its owner and mode are. For model.load_failed a path that does not exist here is
// `confirmed`; one that exists and is readable is `not_reproduced`. For host.permission a path
// that no one but its owner (and group) may use is `confirmed` with who owns it; one open to all
// is `not_reproduced`; a path that does not exist is `not_applicable` (not this file system's).
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common.h"

namespace triage::verifiers {

namespace {

// The path a hypothesis names: the rule's argument, else a capture that holds a path.
std::string NamedPath(const Hypothesis& h) {
  std::string path = h.Arg("path");
  for (const char* key : {"path", "path2", "path3", "file", "model"})
    if (path.empty() || path[0] != '/') path = h.Capture(key);
  if (path.empty() || path[0] != '/' || path.size() > 4096) return {};
  return path;
}

// The nearest folder at or above `path` that exists (the path of a file that could not be
// written may not exist; its filesystem is its folder's).
std::string ExistingAbove(std::string path) {
  struct stat st;
  while (!path.empty()) {
    if (::stat(path.c_str(), &st) == 0) return path;
    const size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) break;
    path = slash == 0 ? "/" : path.substr(0, slash);
    if (path == "/") return path;
  }
  return "/";
}

struct Space {
  bool ok = false;
  uint64_t size = 0, free = 0;
  uint64_t inodes = 0, inodes_free = 0;
  std::string error;
};

Space SpaceOf(const std::string& path) {
  Space s;
  struct statvfs v;
  if (::statvfs(path.c_str(), &v) != 0) {
    s.error = path + ": " + std::strerror(errno);
    return s;
  }
  s.ok = true;
  s.size = uint64_t(v.f_blocks) * v.f_frsize;
  s.free = uint64_t(v.f_bavail) * v.f_frsize;
  s.inodes = v.f_files;
  s.inodes_free = v.f_favail;
  return s;
}

void WriteSpace(JsonWriter& w, const std::string& path, const Space& s) {
  w.BeginObject().Key("path").String(path);
  if (!s.ok) {
    w.Key("error").String(s.error).EndObject();
    return;
  }
  w.Key("size_bytes").Uint(s.size).Key("free_bytes").Uint(s.free);
  w.Key("size").String(ByteSizeText(s.size)).Key("free").String(ByteSizeText(s.free));
  w.Key("inodes").Uint(s.inodes).Key("inodes_free").Uint(s.inodes_free).EndObject();
}

bool Full(const Space& s) {
  if (!s.ok) return false;
  const bool space = s.size > 0 && (s.free < s.size / 100 || s.free < (1ull << 30));
  const bool inodes = s.inodes > 0 && s.inodes_free < s.inodes / 100;
  return space || inodes;
}

// A mount table's field as written there: blanks and backslashes are octal escapes (\040).
std::string UnescapeMountField(std::string_view field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] >= '0' && field[i + 1] <= '3' && field[i + 2] >= '0' && field[i + 2] <= '7' &&
        field[i + 3] >= '0' && field[i + 3] <= '7') {
      out.push_back(char((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

// The mount points of `table` (a /proc/self/mounts) that are mounted writable and hold files:
// not the kernel's own filesystems, not read-only images (a squashfs is always 100% used).
std::vector<std::string> WritableMounts(const std::string& table) {
  static const char* const kNoFiles[] = {
      "proc",     "sysfs",   "cgroup",   "cgroup2", "devpts",   "mqueue",   "debugfs",
      "tracefs",  "securityfs", "pstore", "bpf",    "configfs", "fusectl",  "hugetlbfs",
      "autofs",   "binfmt_misc", "nsfs", "devtmpfs", "squashfs", "iso9660", "efivarfs",
      "rpc_pipefs", "nfsd",  "selinuxfs", "ramfs"};
  std::vector<std::string> out;
  const std::optional<std::string> read = ReadSmallFile(table, 1 << 20);
  if (!read) return out;
  for (const std::string& line : SplitLines(*read)) {
    if (out.size() >= 256) break;
    // device, mount point, type, options, ...
    std::string_view f[4];
    size_t n = 0;
    for (size_t at = 0; n < 4 && at <= line.size(); ++n) {
      const size_t sp = std::min(line.find(' ', at), line.size());
      f[n] = std::string_view(line).substr(at, sp - at);
      at = sp + 1;
    }
    if (n < 4 || f[1].empty() || f[1][0] != '/') continue;
    if (std::find(std::begin(kNoFiles), std::end(kNoFiles), f[2]) != std::end(kNoFiles)) continue;
    std::string options(1, ',');
    options.append(f[3]).push_back(',');
    if (options.find(",ro,") != std::string::npos) continue;
    std::string point = UnescapeMountField(f[1]);
    if (std::find(out.begin(), out.end(), point) == out.end()) out.push_back(std::move(point));
  }
  return out;
}

class HostDisk final : public Verifier {
 public:
  std::string_view name() const override { return "host.disk"; }

  Finding Check(const VerifyConfig&, const Hypothesis& h) const override {
    // The paths the log names first (the one the failing call named, then every other: the
    // file being written, the cache and checkpoint folders), the mount of each; the folders a
    // service writes to only when the log names none.
    std::vector<std::string> paths;
    if (std::string p = NamedPath(h); !p.empty()) paths.push_back(p);
    for (const auto& p : h.log.named_paths)
      if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
    const bool guessed = paths.empty();
    if (guessed) {
      char cwd[4096];
      if (::getcwd(cwd, sizeof cwd)) paths.push_back(cwd);
      const char* tmp = std::getenv("TMPDIR");
      paths.push_back(tmp && *tmp == '/' ? tmp : "/tmp");
      if (const char* home = std::getenv("HOME"); home && *home == '/')
        paths.push_back(std::string(home) + "/.cache");
      // Of the other writable filesystems, only those full now are listed: a host has dozens.
      if (!h.cause.empty())
        for (const auto& m : WritableMounts("/proc/self/mounts"))
          if (std::find(paths.begin(), paths.end(), m) == paths.end() && Full(SpaceOf(m)))
            paths.push_back(m);
    }
    JsonWriter w;
    w.BeginObject().Key("filesystems").BeginArray();
    std::string full, roomy;
    for (const auto& p : paths) {
      const Space s = SpaceOf(ExistingAbove(p));
      WriteSpace(w, p, s);
      if (Full(s) && full.empty())
        full = p + " has " + ByteSizeText(s.free) + " of " + ByteSizeText(s.size) + " free (" +
               std::to_string(s.inodes_free) + " inodes)";
      else if (s.ok && roomy.empty())
        roomy = p + " has " + ByteSizeText(s.free) + " free";
    }
    w.EndArray().EndObject();
    if (h.cause.empty())  // doctor: the state of the folders a service writes to
      return full.empty() ? Finding::Host(roomy.empty() ? HostStatus::kUnavailable : HostStatus::kPass,
                                          roomy.empty() ? "no filesystem could be measured" : roomy, w.Take())
                          : Finding::Host(HostStatus::kFail, full, w.Take());
    if (!full.empty())
      return Finding::Confirmed((guessed ? "the log names no path; a writable filesystem is full now: "
                                         : "the filesystem is full now: ") + full, w.Take());
    if (!roomy.empty())
      return Finding::NotReproduced(roomy + " now (space may have been freed since the log)", w.Take());
    return Finding::Inconclusive("no filesystem could be measured", w.Take());
  }
};

class HostShm final : public Verifier {
 public:
  std::string_view name() const override { return "host.shm"; }

  Finding Check(const VerifyConfig&, const Hypothesis& h) const override {
    const std::string shm = "/dev/shm";
    const Space s = SpaceOf(shm);
    JsonWriter w;
    WriteSpace(w, shm, s);
    const std::string facts = w.Take();
    if (!s.ok) return Finding::Inconclusive(s.error, facts);
    const std::string sizes = shm + " is " + ByteSizeText(s.size) + " with " + ByteSizeText(s.free) + " free";
    if (h.cause.empty())
      return Finding::Host(s.size < (1ull << 30) || s.free < s.size / 20 ? HostStatus::kWarn : HostStatus::kPass,
                           sizes, facts);
    if (s.size < (1ull << 30))
      return Finding::Confirmed(sizes + ": too small for data-loading workers or NCCL's segments",
                                facts);
    if (s.free < s.size / 20) return Finding::Confirmed(sizes + ": nearly full", facts);
    return Finding::NotReproduced(
        sizes + " here now (the service's container may have had its own, smaller /dev/shm)", facts);
  }
};

class HostPath final : public Verifier {
 public:
  std::string_view name() const override { return "host.path"; }
  bool host_check() const override { return false; }  // it needs a path from a log

  Finding Check(const VerifyConfig&, const Hypothesis& h) const override {
    const std::string path = NamedPath(h);
    if (path.empty()) return Finding::Inconclusive("the log names no absolute path");
    const bool permission = h.cause.rfind("host.permission", 0) == 0;
    struct stat st;
    JsonWriter w;
    w.BeginObject().Key("path").String(path);
    if (::lstat(path.c_str(), &st) != 0) {
      const int err = errno;
      w.Key("error").String(std::strerror(err)).EndObject();
      if (permission)
        return Finding::NotApplicable(path + " does not exist on this host: not the file system of the log",
                                      w.Take());
      if (err == ENOENT || err == ENOTDIR)
        return Finding::Confirmed(path + " does not exist here", w.Take());
      return Finding::Inconclusive(path + ": " + std::strerror(err), w.Take());
    }
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    w.Key("owner_uid").Uint(st.st_uid).Key("group_gid").Uint(st.st_gid).Key("mode").String(mode);
    w.Key("kind").String(S_ISDIR(st.st_mode) ? "folder" : S_ISCHR(st.st_mode) ? "character device"
                         : S_ISREG(st.st_mode) ? "file" : "other");
    w.EndObject();
    const std::string who = path + " (owner " + std::to_string(st.st_uid) + ", group " +
                            std::to_string(st.st_gid) + ", mode " + mode + ")";
    if (permission) {
      // Others may neither read nor write it: a service that is neither its owner nor in its
      // group is refused, as the log says.
      if (!(st.st_mode & (S_IROTH | S_IWOTH)))
        return Finding::Confirmed(who + " is closed to users other than its owner and group", w.Take());
      return Finding::NotReproduced(who + " is open to every user here now", w.Take());
    }
    if (::access(path.c_str(), R_OK) == 0)
      return Finding::NotReproduced(path + " exists and is readable here now", w.Take());
    return Finding::Confirmed(who + " exists but cannot be read", w.Take());
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeHostDisk() { return std::make_unique<HostDisk>(); }
std::unique_ptr<Verifier> MakeHostShm() { return std::make_unique<HostShm>(); }
std::unique_ptr<Verifier> MakeHostPath() { return std::make_unique<HostPath>(); }

}  // namespace triage::verifiers

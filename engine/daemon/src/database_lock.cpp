#include "database_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "file_io.h"
#include "triage/core/host.h"
#include "triage/store/store.h"

namespace triage::daemon::detail {

namespace {

namespace fs = std::filesystem;

std::string LockPath(const std::string& db_path) {
  if (!store::IsServerUrl(db_path)) return db_path + ".watch-lock";
  const char* state = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path base = state && *state ? fs::path(state)
                                        : fs::path(home && *home ? home : "/tmp") / ".local/state";
  const fs::path dir = base / "triage";
  std::error_code ec;
  fs::create_directories(dir, ec);
  // The name the store keys this machine's checkpoints by (core/host.h).
  const uint64_t key = HeadHash(core::ThisHost() + '\n' + db_path);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(key));
  return (dir / ("watch-" + std::string(hex) + ".lock")).string();
}

}  // namespace

Result<std::unique_ptr<DatabaseLock>> DatabaseLock::Acquire(const std::string& db_path) {
  const std::string lock_path = LockPath(db_path);
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Io(lock_path + ": " + ErrnoText(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder = ReadAt(fd, 0, 32);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
    close(fd);
    if (err == EWOULDBLOCK)
      return Status::Busy("another `triage watch`" +
                          (holder.empty() ? std::string() : " (pid " + holder + ")") +
                          " is already using " +
                          (store::IsServerUrl(db_path) ? std::string("this database") : db_path) +
                          "; stop it first");
    return Status::Io(lock_path + ": " + ErrnoText(err));
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) == 0 && pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The pid is only for the message a second daemon prints; the lock holds without it.
  }
  return std::unique_ptr<DatabaseLock>(new DatabaseLock(db_path, lock_path, fd));
}

DatabaseLock::~DatabaseLock() {
  if (fd_ >= 0) close(fd_);
}

Status DatabaseLock::NoteDatabase() {
  if (store::IsServerUrl(db_path_)) return Status::Ok();
  if (stat(db_path_.c_str(), &db_stat_) != 0) return Status::Io(db_path_ + ": " + ErrnoText(errno));
  return Status::Ok();
}

bool DatabaseLock::DatabaseReplaced() const {
  if (store::IsServerUrl(db_path_)) return false;  // a server's database is not a file here
  struct stat st {};
  if (stat(db_path_.c_str(), &st) != 0) return true;
  return st.st_dev != db_stat_.st_dev || st.st_ino != db_stat_.st_ino;
}

}  // namespace triage::daemon::detail

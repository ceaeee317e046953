// One `watch` per database: two would both read every file and count each crash twice.
//
// The lock is an flock on "<db>.watch-lock" (not on the database: SQLite's POSIX locks on it are
// dropped when any descriptor of it is closed), held for the owner's life and released by the
// kernel however the process ends. --once takes it too: it reads the same files from the same
// checkpoints. A shared server is locked per machine, in the user's state folder
// ($XDG_STATE_HOME/triage/watch-<hash of the machine's name and the URL>.lock): one daemon per
// machine and database, as its checkpoints there (kept per machine, docs/schema.md) require,
// and a fleet's daemons on many machines at once. The machine's name is in the lock's so that
// machines sharing one state folder (a home folder on NFS, where flock reaches across
// machines) do not refuse each other.
//
// Not thread-safe; owned by the daemon's thread.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <string>

#include "triage/status.h"

namespace triage::daemon::detail {

class DatabaseLock {
 public:
  // Takes the lock for `db_path` (a file or a server's URL). Busy, with the holder's pid where
  // it wrote one, when another daemon holds it.
  static Result<std::unique_ptr<DatabaseLock>> Acquire(const std::string& db_path);
  // The lock file's path.
  const std::string& path() const { return lock_path_; }
  ~DatabaseLock();
  DatabaseLock(const DatabaseLock&) = delete;
  DatabaseLock& operator=(const DatabaseLock&) = delete;

  // Notes the database file as it is now (after the store opened it); nothing for a server.
  Status NoteDatabase();
  // The database file was deleted or replaced since NoteDatabase: what the daemon writes would
  // go to an unlinked file that nobody reads (`status` would say "never ran").
  bool DatabaseReplaced() const;

 private:
  DatabaseLock(std::string db_path, std::string lock_path, int fd)
      : db_path_(std::move(db_path)), lock_path_(std::move(lock_path)), fd_(fd) {}
  std::string db_path_;
  std::string lock_path_;
  int fd_ = -1;
  struct stat db_stat_ {};
};

}  // namespace triage::daemon::detail

#include "sqlite.h"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace triage::store::detail {

namespace {

// Why a write failed, in plain words. SQLite reports every failed write as "disk I/O error", and
// the errno it keeps is not reliable by then (later calls overwrite it), so when it has none the
// file system and the process's limits are asked.
std::string WriteFailure(sqlite3* db, int sys_errno) {
  if (sys_errno == ENOSPC) return "disk full";
  if (sys_errno == EFBIG) return "file too large (size limit reached)";
  if (sys_errno == EDQUOT) return "disk quota exceeded";
  if (sys_errno != 0) return std::string("write failed: ") + std::strerror(sys_errno);
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  if (file && *file) {
    std::string dir(file);
    auto slash = dir.find_last_of('/');
    dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : dir.substr(0, slash));
    struct statvfs vfs {};
    if (statvfs(dir.c_str(), &vfs) == 0 &&
        uint64_t(vfs.f_bavail) * uint64_t(vfs.f_frsize) < (uint64_t{1} << 20)) {
      return "disk full";
    }
  }
  struct rlimit lim {};
  if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    return "file too large (size limit reached: " + std::to_string(uint64_t(lim.rlim_cur)) +
           " bytes per file)";
  }
  return "write failed: disk I/O error";
}

}  // namespace

Status SqliteStatus(sqlite3* db, int rc, std::string_view what) {
  const int primary = rc & 0xff;
  const int sys_errno = db ? sqlite3_system_errno(db) : 0;
  std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string prefix(what);
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Busy(prefix + ": the database is locked by another process (gave up after "
                                   "the busy timeout)");
    case SQLITE_FULL:
      return Status::Io(prefix + ": disk full");
    case SQLITE_IOERR:
      switch (rc) {
        case SQLITE_IOERR_WRITE:
        case SQLITE_IOERR_FSYNC:
        case SQLITE_IOERR_TRUNCATE:
        case SQLITE_IOERR_SHMSIZE:
        case SQLITE_IOERR_SHMMAP:
          return Status::Io(prefix + ": " + WriteFailure(db, sys_errno));
        default:
          break;
      }
      if (sys_errno == ENOSPC || sys_errno == EFBIG || sys_errno == EDQUOT) {
        return Status::Io(prefix + ": " + WriteFailure(db, sys_errno));
      }
      if (sys_errno != 0) return Status::Io(prefix + ": " + why + ": " + std::strerror(sys_errno));
      return Status::Io(prefix + ": " + why + " (extended code " + std::to_string(rc) + ")");
    case SQLITE_CORRUPT:
      return Status::Corrupt(prefix + ": the database is damaged: " + why);
    case SQLITE_NOTADB:
      return Status::Corrupt(prefix + ": not a triage database: " + why);
    case SQLITE_READONLY:
      if (sys_errno != 0) {
        return Status::Io(prefix + ": the database is read-only: " + std::strerror(sys_errno));
      }
      return Status::Io(prefix + ": the database is read-only (" + why + ")");
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      if (sys_errno != 0) return Status::Io(prefix + ": " + why + ": " + std::strerror(sys_errno));
      return Status::Io(prefix + ": " + why);
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
      return Status::InvalidInput(prefix + ": " + why);
    default:
      return Status::Io(prefix + ": " + why);
  }
}

Result<bool> SqliteStmt::Step() {
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status s = SqliteStatus(db_, rc, "database");
  sqlite3_reset(stmt_.get());
  return s;
}

std::string SqliteStmt::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_.get(), col);
  int n = sqlite3_column_bytes(stmt_.get(), col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p), size_t(n));
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  auto db = std::make_unique<SqliteDb>();
  db->db_.reset(raw);  // closed on every path, including a failed open
  if (rc != SQLITE_OK) return SqliteStatus(raw, rc, path);
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Status SqliteDb::Exec(const char* sql, std::string_view what) {
  int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db_.get(), rc, what);
  return Status::Ok();
}

Result<Stmt*> SqliteDb::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return it->second.get();
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v3(db_.get(), sql.c_str(), int(sql.size()), SQLITE_PREPARE_PERSISTENT,
                              &raw, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(raw);
    return SqliteStatus(db_.get(), rc, "database");
  }
  auto stmt = std::make_unique<SqliteStmt>(db_.get(), raw);
  Stmt* p = stmt.get();
  cache_.emplace(sql, std::move(stmt));
  return p;
}

Status SqliteDb::Begin(Mode mode) {
  return Exec(mode == Mode::kWrite ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED", "database");
}

// A failed COMMIT (SQLITE_BUSY aside, which cannot happen under BEGIN IMMEDIATE) has already
// rolled back or leaves the transaction open; the Transaction's ROLLBACK covers both.
Status SqliteDb::Commit() { return Exec("COMMIT", "database"); }

void SqliteDb::Rollback() { sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr); }

}  // namespace triage::store::detail

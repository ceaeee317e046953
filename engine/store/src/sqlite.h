// SQLite at its edge: the detail::Db of sql.h over a SQLite connection, RAII owners for it and
// its statements, and SQLite result codes turned into triage Statuses. Nothing outside
// engine/store/src includes this header.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sql.h"
#include "triage/status.h"

namespace triage::store::detail {

// The Status for a failed SQLite call: Busy for locks, Io for the file system (with "disk full"
// and "file too large" said plainly), Corrupt for a damaged or foreign file.
Status SqliteStatus(sqlite3* db, int rc, std::string_view what);

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};

// A prepared SQLite statement. Text is bound with SQLITE_TRANSIENT: SQLite copies it, so any
// string_view is safe.
class SqliteStmt final : public Stmt {
 public:
  SqliteStmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  Stmt& BindNull(int i) override {
    sqlite3_bind_null(stmt_.get(), i);
    return *this;
  }
  Result<bool> Step() override;
  void Reset() override {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }
  int64_t Int(int col) const override { return sqlite3_column_int64(stmt_.get(), col); }
  double Double(int col) const override { return sqlite3_column_double(stmt_.get(), col); }
  bool IsNull(int col) const override {
    return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL;
  }
  std::string Text(int col) const override;

 protected:
  Stmt& BindInt(int i, int64_t v) override {
    sqlite3_bind_int64(stmt_.get(), i, v);
    return *this;
  }
  Stmt& BindDouble(int i, double v) override {
    sqlite3_bind_double(stmt_.get(), i, v);
    return *this;
  }
  Stmt& BindText(int i, std::string_view v) override {
    sqlite3_bind_text64(stmt_.get(), i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    return *this;
  }

 private:
  sqlite3* db_ = nullptr;
  std::unique_ptr<sqlite3_stmt, StmtFinalizer> stmt_;
};

// One SQLite connection. Writes take the lock up front (BEGIN IMMEDIATE: a busy writer waits
// in the busy handler instead of failing on upgrade); reads are a snapshot (BEGIN).
class SqliteDb final : public Db {
 public:
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, int flags);

  sqlite3* get() const { return db_.get(); }
  Dialect dialect() const override { return Dialect::kSqlite; }
  Status Exec(const char* sql, std::string_view what) override;
  Result<Stmt*> Prepare(const std::string& sql) override;
  Status Begin(Mode mode) override;
  Status Commit() override;
  void Rollback() override;

 private:
  std::unique_ptr<sqlite3, DbCloser> db_;
  // Declared after db_: statements are finalized before the connection closes.
  std::unordered_map<std::string, std::unique_ptr<SqliteStmt>> cache_;
};

}  // namespace triage::store::detail

// SQLite at its edge: RAII owners for the connection and statements, and SQLite result codes
// turned into triage Statuses. Nothing outside engine/store/src includes this header.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

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

// A prepared statement. Bind indexes are 1-based, column indexes 0-based (as in SQLite).
// Text is bound with SQLITE_TRANSIENT semantics only when the caller's buffer may not outlive
// the step; BindText copies, so any string_view is safe.
class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_.get(), i, v);
    return *this;
  }
  Stmt& Bind(int i, double v) {
    sqlite3_bind_double(stmt_.get(), i, v);
    return *this;
  }
  Stmt& Bind(int i, std::string_view v) {
    sqlite3_bind_text64(stmt_.get(), i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    return *this;
  }
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::optional<std::string>& v) {
    return v ? Bind(i, std::string_view(*v)) : BindNull(i);
  }
  Stmt& BindNull(int i) {
    sqlite3_bind_null(stmt_.get(), i);
    return *this;
  }

  // true: a row is ready; false: done. An error resets the statement.
  Result<bool> Step();
  // Steps to completion (for statements that return no rows we need).
  Status Run();
  // Ready for the next use: bindings cleared.
  void Reset() {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
  double Double(int col) const { return sqlite3_column_double(stmt_.get(), col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL; }
  std::string Text(int col) const;
  std::optional<std::string> OptText(int col) const {
    if (IsNull(col)) return std::nullopt;
    return Text(col);
  }

 private:
  sqlite3* db_ = nullptr;
  std::unique_ptr<sqlite3_stmt, StmtFinalizer> stmt_;
};

// Resets a cached statement when the scope that used it ends, whatever the path out.
class StmtUse {
 public:
  explicit StmtUse(Stmt& s) : s_(s) {}
  ~StmtUse() { s_.Reset(); }
  StmtUse(const StmtUse&) = delete;
  StmtUse& operator=(const StmtUse&) = delete;
  Stmt* operator->() { return &s_; }
  Stmt& operator*() { return s_; }

 private:
  Stmt& s_;
};

// One connection with a cache of prepared statements (keyed by their SQL text, which is always a
// constant or built from constant fragments: values are bound, never spliced).
class Db {
 public:
  static Result<Db> Open(const std::string& path, int flags);

  sqlite3* get() const { return db_.get(); }
  // Runs SQL without results (schema statements, PRAGMAs, BEGIN/COMMIT).
  Status Exec(const char* sql, std::string_view what);
  // A cached prepared statement, or the error preparing it.
  Result<Stmt*> Prepare(const std::string& sql);
  // One integer from a query without parameters (PRAGMA user_version, count(*)).
  Result<int64_t> QueryInt(const std::string& sql);

 private:
  std::unique_ptr<sqlite3, DbCloser> db_;
  // Declared after db_: statements are finalized before the connection closes.
  std::unordered_map<std::string, std::unique_ptr<Stmt>> cache_;
};

// A write (BEGIN IMMEDIATE: the lock is taken up front, so a busy writer waits in the busy
// handler instead of failing on upgrade) or a read snapshot (BEGIN). Rolled back unless
// committed.
class Transaction {
 public:
  enum class Mode { kRead, kWrite };
  static Result<std::unique_ptr<Transaction>> Begin(Db& db, Mode mode);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Status Commit();

 private:
  explicit Transaction(Db& db) : db_(db) {}
  Db& db_;
  bool open_ = true;
};

}  // namespace triage::store::detail

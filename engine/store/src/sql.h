// The store's view of a database connection: prepared statements with bound values, rows read
// by column, transactions. SQLite (sqlite.h) and PostgreSQL (postgres.h) implement it, so that
// the store's logic (store.cpp) is written once. Nothing outside engine/store/src includes this.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "triage/status.h"

namespace triage::store::detail {

// Where the two SQL dialects differ, the store asks which one it speaks.
enum class Dialect { kSqlite, kPostgres };

// A prepared statement. SQL text names its parameters ?1, ?2, ... in both dialects (the
// PostgreSQL driver writes them $1, $2, ...). Bind indexes are 1-based, column indexes
// 0-based. Every value is bound, never spliced into the text.
class Stmt {
 public:
  virtual ~Stmt() = default;

  Stmt& Bind(int i, int64_t v) { return BindInt(i, v); }
  Stmt& Bind(int i, double v) { return BindDouble(i, v); }
  Stmt& Bind(int i, std::string_view v) { return BindText(i, v); }
  Stmt& Bind(int i, const char* v) { return BindText(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::string& v) { return BindText(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::optional<std::string>& v) {
    return v ? BindText(i, std::string_view(*v)) : BindNull(i);
  }
  virtual Stmt& BindNull(int i) = 0;

  // true: a row is ready; false: done. An error resets the statement.
  virtual Result<bool> Step() = 0;
  // Steps to completion (for statements whose rows are not needed).
  Status Run() {
    for (;;) {
      auto r = Step();
      if (!r.ok()) return r.status();
      if (!*r) return Status::Ok();
    }
  }
  // Ready for the next use: bindings cleared.
  virtual void Reset() = 0;

  virtual int64_t Int(int col) const = 0;
  virtual double Double(int col) const = 0;
  virtual bool IsNull(int col) const = 0;
  virtual std::string Text(int col) const = 0;
  std::optional<std::string> OptText(int col) const {
    if (IsNull(col)) return std::nullopt;
    return Text(col);
  }

 protected:
  virtual Stmt& BindInt(int i, int64_t v) = 0;
  virtual Stmt& BindDouble(int i, double v) = 0;
  virtual Stmt& BindText(int i, std::string_view v) = 0;
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

// One connection, with a cache of prepared statements keyed by their SQL text (always a
// constant, or built from constant fragments).
class Db {
 public:
  enum class Mode { kRead, kWrite };
  virtual ~Db() = default;
  virtual Dialect dialect() const = 0;
  // Runs SQL without parameters or results (schema statements, transaction control).
  virtual Status Exec(const char* sql, std::string_view what) = 0;
  virtual Result<Stmt*> Prepare(const std::string& sql) = 0;
  // Starts a transaction: a write takes the database's write lock up front (a writer that has to
  // wait does so there, up to the busy timeout); a read is one snapshot.
  virtual Status Begin(Mode mode) = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;
  // One integer from a query without parameters; 0 when it gives no row.
  Result<int64_t> QueryInt(const std::string& sql) {
    auto st = Prepare(sql);
    if (!st.ok()) return st.status();
    StmtUse use(**st);
    auto row = use->Step();
    if (!row.ok()) return row.status();
    if (!*row) return int64_t{0};
    return use->Int(0);
  }
};

// A transaction on a Db, rolled back unless committed.
class Transaction {
 public:
  using Mode = Db::Mode;
  static Result<std::unique_ptr<Transaction>> Begin(Db& db, Mode mode) {
    Status s = db.Begin(mode);
    if (!s.ok()) return s;
    return std::unique_ptr<Transaction>(new Transaction(db));
  }
  ~Transaction() {
    if (open_) db_.Rollback();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Status Commit() {
    Status s = db_.Commit();
    if (s.ok()) open_ = false;
    return s;
  }

 private:
  explicit Transaction(Db& db) : db_(db) {}
  Db& db_;
  bool open_ = true;
};

}  // namespace triage::store::detail

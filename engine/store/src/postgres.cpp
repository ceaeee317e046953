#include "postgres.h"

#include "triage/redact.h"

#include <dlfcn.h>
#include <libpq-fe.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace triage::store::detail {

namespace {

// The libpq functions the driver calls, resolved from the library once. The types come from
// libpq's own header, so a prototype cannot drift from the library's.
struct Libpq {
  decltype(&PQconnectdb) connectdb = nullptr;
  decltype(&PQstatus) status = nullptr;
  decltype(&PQerrorMessage) error_message = nullptr;
  decltype(&PQfinish) finish = nullptr;
  decltype(&PQresultStatus) result_status = nullptr;
  decltype(&PQresultErrorField) result_error_field = nullptr;
  decltype(&PQresultErrorMessage) result_error_message = nullptr;
  decltype(&PQclear) clear = nullptr;
  decltype(&PQntuples) ntuples = nullptr;
  decltype(&PQgetvalue) getvalue = nullptr;
  decltype(&PQgetlength) getlength = nullptr;
  decltype(&PQgetisnull) getisnull = nullptr;
  decltype(&PQsetNoticeProcessor) set_notice_processor = nullptr;
  decltype(&PQsendQuery) send_query = nullptr;
  decltype(&PQsendQueryParams) send_query_params = nullptr;
  decltype(&PQsetnonblocking) set_nonblocking = nullptr;
  decltype(&PQflush) flush = nullptr;
  decltype(&PQsocket) socket = nullptr;
  decltype(&PQconsumeInput) consume_input = nullptr;
  decltype(&PQisBusy) is_busy = nullptr;
  decltype(&PQgetResult) get_result = nullptr;
};

// Loads libpq.so.5 once per process; the handle stays open for the process's life (libpq
// keeps global state, such as its SSL initialisation, that must not be unloaded).
Result<const Libpq*> LoadLibpq() {
  static std::once_flag once;
  static Libpq lib;
  static std::string error;
  std::call_once(once, [] {
    // A constant soname: nothing from a log or a user reaches the loader.
    void* h = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();
      error = std::string("cannot load libpq.so.5 (install the package libpq5): ") +
              (why ? why : "not found");
      return;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (!fn) ok = false;
    };
    sym(lib.connectdb, "PQconnectdb");
    sym(lib.status, "PQstatus");
    sym(lib.error_message, "PQerrorMessage");
    sym(lib.finish, "PQfinish");
    sym(lib.result_status, "PQresultStatus");
    sym(lib.result_error_field, "PQresultErrorField");
    sym(lib.result_error_message, "PQresultErrorMessage");
    sym(lib.clear, "PQclear");
    sym(lib.ntuples, "PQntuples");
    sym(lib.getvalue, "PQgetvalue");
    sym(lib.getlength, "PQgetlength");
    sym(lib.getisnull, "PQgetisnull");
    sym(lib.set_notice_processor, "PQsetNoticeProcessor");
    sym(lib.send_query, "PQsendQuery");
    sym(lib.send_query_params, "PQsendQueryParams");
    sym(lib.set_nonblocking, "PQsetnonblocking");
    sym(lib.flush, "PQflush");
    sym(lib.socket, "PQsocket");
    sym(lib.consume_input, "PQconsumeInput");
    sym(lib.is_busy, "PQisBusy");
    sym(lib.get_result, "PQgetResult");
    if (!ok) error = "libpq.so.5 lacks a function triage needs (libpq5 too old?)";
  });
  if (!error.empty()) return Status::Unavailable(error);
  return &lib;
}

extern "C" void DropNotice(void*, const char*) {}

// libpq's messages end in a newline (sometimes several lines); one line for ours.
std::string OneLine(const char* msg) {
  std::string s = msg ? msg : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

// PostgreSQL text must be valid UTF-8 without NUL; log text may be anything. Invalid bytes and
// NUL become U+FFFD, as the report writer shows them.
std::string ValidUtf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    const unsigned char c = static_cast<unsigned char>(in[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = n != 0 && c != 0 && i + n <= in.size() && !(n == 2 && c < 0xC2);
    for (size_t k = 1; ok && k < n; ++k)
      ok = (static_cast<unsigned char>(in[i + k]) & 0xC0) == 0x80;
    if (ok && n >= 3) {
      const unsigned char c1 = static_cast<unsigned char>(in[i + 1]);
      if (n == 3)
        ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
      else
        ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90) && c <= 0xF4;
    }
    if (ok) {
      out.append(in.data() + i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

// "?12" -> "$12" outside quoted text: the store writes one SQL for both dialects.
std::string ToDollarParams(const std::string& sql) {
  std::string out;
  out.reserve(sql.size());
  char quote = 0;
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?' && i + 1 < sql.size() && sql[i + 1] >= '0' && sql[i + 1] <= '9') {
      out += '$';
      continue;
    }
    out += c;
  }
  return out;
}

// The Status of a failed statement, by its SQLSTATE class.
Status ResultStatus(const Libpq& pq, PGresult* res, PGconn* conn, std::string_view what) {
  const char* state = res ? pq.result_error_field(res, PG_DIAG_SQLSTATE) : nullptr;
  std::string why = OneLine(res ? pq.result_error_message(res) : pq.error_message(conn));
  if (why.empty()) why = OneLine(pq.error_message(conn));
  const std::string prefix = std::string(what) + ": ";
  const std::string code = state ? state : "";
  if (code == "40001" || code == "40P01" || code == "55P03") {
    return Status::Busy(
        prefix +
        "the database is locked by another writer (gave up after the busy timeout): " + why);
  }
  if (code == "53100") return Status::Io(prefix + "disk full: " + why);
  if (code == "25006") return Status::Io(prefix + "the database is read-only: " + why);
  if (code.rfind("23", 0) == 0 || code.rfind("22", 0) == 0)
    return Status::InvalidInput(prefix + why);
  // Class 08 (connection exception), 57P01..57P03 (the server shutting down or starting) and a
  // connection found broken are a server that cannot be reached now: the daemon reconnects.
  if (code.rfind("08", 0) == 0 || code.empty() || code == "57P01" || code == "57P02" ||
      code == "57P03" || pq.status(conn) == CONNECTION_BAD)
    return Status::Unavailable(prefix + why);
  return Status::Io(prefix + why);
}

struct ResultCloser {
  const Libpq* pq;
  void operator()(PGresult* r) const {
    if (r) pq->clear(r);
  }
};
using ResultPtr = std::unique_ptr<PGresult, ResultCloser>;

// One connection, in libpq's non-blocking mode, and the wait for its answers: every command is
// sent and its answer awaited for at most `wait_ms`. A server that stalls (stopped, or a
// listener that never answers) fails the command with Unavailable instead of holding the
// caller, and the connection is given up then (an answer may still be under way on it); every
// later command on it fails at once, and the store's owner reconnects (Store::Reconnect).
class PgConn {
 public:
  PgConn(const Libpq& pq, PGconn* conn, int wait_ms) : pq_(pq), conn_(conn), wait_ms_(wait_ms) {}
  ~PgConn() { pq_.finish(conn_); }
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;
  const Libpq& pq() const { return pq_; }
  PGconn* get() const { return conn_; }

  // Runs `sql`: one statement with `n` parameters when `values` is given, else one or more
  // statements without. The first result that failed, else the last; a non-ok Status when no
  // result came (the connection broke, or the wait ran out).
  Result<ResultPtr> Run(const char* sql, int n, const Oid* types, const char* const* values,
                        std::string_view what) {
    if (!given_up_.empty()) return Status::Unavailable(std::string(what) + ": " + given_up_);
    const int sent = values ? pq_.send_query_params(conn_, sql, n, types, values, nullptr,
                                                    nullptr, 0)
                            : pq_.send_query(conn_, sql);
    if (!sent) return ResultStatus(pq_, nullptr, conn_, what);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms_);
    for (int left = pq_.flush(conn_); left != 0; left = pq_.flush(conn_)) {
      if (left < 0) return ResultStatus(pq_, nullptr, conn_, what);
      auto ready = Wait(POLLIN | POLLOUT, deadline, what);
      if (!ready.ok()) return ready.status();
      if ((*ready & POLLIN) && !pq_.consume_input(conn_))
        return ResultStatus(pq_, nullptr, conn_, what);
    }
    ResultPtr kept(nullptr, ResultCloser{&pq_});
    for (;;) {
      while (pq_.is_busy(conn_)) {
        auto ready = Wait(POLLIN, deadline, what);
        if (!ready.ok()) return ready.status();
        if (!pq_.consume_input(conn_)) return ResultStatus(pq_, nullptr, conn_, what);
      }
      ResultPtr next(pq_.get_result(conn_), ResultCloser{&pq_});
      if (!next) break;
      if (!kept || Succeeded(kept.get())) kept = std::move(next);
    }
    if (!kept) return ResultStatus(pq_, nullptr, conn_, what);
    return kept;
  }
  bool Succeeded(PGresult* r) const {
    const ExecStatusType st = r ? pq_.result_status(r) : PGRES_FATAL_ERROR;
    return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
  }

 private:
  // Waits until the socket is ready for `events`; past `deadline` the connection is given up.
  Result<short> Wait(short events, std::chrono::steady_clock::time_point deadline,
                     std::string_view what) {
    pollfd p{pq_.socket(conn_), events, 0};
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      const int r = left.count() > 0 ? poll(&p, 1, static_cast<int>(left.count())) : 0;
      if (r > 0) return p.revents;
      if (r < 0 && errno == EINTR) continue;
      given_up_ = r == 0 ? "the server did not answer within " +
                               std::to_string(wait_ms_ / 1000) + " s (the connection is given up)"
                         : std::string("waiting for the server: ") + std::strerror(errno);
      return Status::Unavailable(std::string(what) + ": " + given_up_);
    }
  }

  const Libpq& pq_;
  PGconn* conn_;
  const int wait_ms_;
  std::string given_up_;  // why the connection was given up; empty while it is in use
};

class PgStmt final : public Stmt {
 public:
  PgStmt(PgConn& conn, std::string sql)
      : pq_(conn.pq()), conn_(conn), sql_(ToDollarParams(sql)),
        result_(nullptr, ResultCloser{&conn.pq()}) {}

  Stmt& BindNull(int i) override {
    Slot(i) = Param{std::nullopt, 0};
    return *this;
  }
  Result<bool> Step() override {
    if (!executed_) {
      std::vector<const char*> values(params_.size());
      std::vector<Oid> types(params_.size());
      for (size_t k = 0; k < params_.size(); ++k) {
        values[k] = params_[k].value ? params_[k].value->c_str() : nullptr;
        types[k] = params_[k].type;
      }
      auto ran = conn_.Run(sql_.c_str(), int(params_.size()), types.data(), values.data(),
                           "database");
      if (!ran.ok()) {
        Reset();
        return ran.status();
      }
      result_ = std::move(ran).value();
      if (!conn_.Succeeded(result_.get())) {
        Status s = ResultStatus(pq_, result_.get(), conn_.get(), "database");
        Reset();
        return s;
      }
      executed_ = true;
      rows_ = pq_.ntuples(result_.get());
      row_ = -1;
    }
    if (row_ + 1 >= rows_) {
      row_ = rows_;
      return false;
    }
    ++row_;
    return true;
  }
  void Reset() override {
    result_.reset();
    params_.clear();
    executed_ = false;
    rows_ = row_ = 0;
  }
  int64_t Int(int col) const override {
    return IsNull(col) ? 0 : std::strtoll(pq_.getvalue(result_.get(), row_, col), nullptr, 10);
  }
  double Double(int col) const override {
    return IsNull(col) ? 0 : std::strtod(pq_.getvalue(result_.get(), row_, col), nullptr);
  }
  bool IsNull(int col) const override { return pq_.getisnull(result_.get(), row_, col) != 0; }
  std::string Text(int col) const override {
    return std::string(pq_.getvalue(result_.get(), row_, col),
                       size_t(pq_.getlength(result_.get(), row_, col)));
  }

 protected:
  // Values go as text with their types named (int8, float8, text), so the server never has to
  // guess a parameter's type from where it stands.
  Stmt& BindInt(int i, int64_t v) override {
    Slot(i) = Param{std::to_string(v), 20};
    return *this;
  }
  Stmt& BindDouble(int i, double v) override {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    Slot(i) = Param{std::string(buf), 701};
    return *this;
  }
  Stmt& BindText(int i, std::string_view v) override {
    Slot(i) = Param{ValidUtf8(v), 25};
    return *this;
  }

 private:
  // A parameter never bound (a fragment of the SQL that was left out) goes as a NULL text; one
  // bound NULL has its type from where it stands (0).
  struct Param {
    std::optional<std::string> value;
    Oid type = 25;
  };
  Param& Slot(int i) {
    if (params_.size() < size_t(i)) params_.resize(size_t(i));
    return params_[size_t(i) - 1];
  }
  const Libpq& pq_;
  PgConn& conn_;
  std::string sql_;
  std::vector<Param> params_;
  ResultPtr result_;
  bool executed_ = false;
  int rows_ = 0;
  int row_ = 0;
};

// The key of the advisory lock every writing transaction takes ("triage" in ASCII): writers are
// one at a time, as on SQLite, so a batch reads and writes incidents without a race.
constexpr const char* kWriteLock = "SELECT pg_advisory_xact_lock(7526769026352741)";

class PgDb final : public Db {
 public:
  PgDb(const Libpq& pq, PGconn* conn, int wait_ms) : conn_(pq, conn, wait_ms) {}
  ~PgDb() override { cache_.clear(); }
  Dialect dialect() const override { return Dialect::kPostgres; }
  Status Exec(const char* sql, std::string_view what) override {
    auto r = conn_.Run(sql, 0, nullptr, nullptr, what);
    if (!r.ok()) return r.status();
    if (!conn_.Succeeded(r->get())) return ResultStatus(conn_.pq(), r->get(), conn_.get(), what);
    return Status::Ok();
  }
  Result<Stmt*> Prepare(const std::string& sql) override {
    auto it = cache_.find(sql);
    if (it != cache_.end()) return it->second.get();
    auto stmt = std::make_unique<PgStmt>(conn_, sql);
    Stmt* p = stmt.get();
    cache_.emplace(sql, std::move(stmt));
    return p;
  }
  Status Begin(Mode mode) override {
    if (mode == Mode::kRead)
      return Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "database");
    Status s = Exec("BEGIN", "database");
    if (!s.ok()) return s;
    s = Exec(kWriteLock, "database");
    if (!s.ok()) Rollback();
    return s;
  }
  Status Commit() override { return Exec("COMMIT", "database"); }
  void Rollback() override { (void)conn_.Run("ROLLBACK", 0, nullptr, nullptr, "database"); }

 private:
  PgConn conn_;  // before the statements, which refer to it (destroyed after them)
  std::unordered_map<std::string, std::unique_ptr<Stmt>> cache_;
};

}  // namespace

bool IsPostgresUrl(const std::string& target) {
  return target.rfind("postgresql://", 0) == 0 || target.rfind("postgres://", 0) == 0 ||
         IsLibpqKeywords(target);
}

std::string RedactUrl(const std::string& url) { return RedactSecrets(url); }

namespace {

// A server that accepts and never answers must not hang a command: without a connect_timeout of
// the user's, the connection gets kConnectTimeoutSeconds, in the URL's form or the keywords'.
constexpr int kConnectTimeoutSeconds = 10;
// A statement the server holds longer than this (a lock, a slow plan) fails instead; a server
// that does not answer at all is given up by the client, kStatementTimeoutMs + 5 s unless the
// caller gives another wait (StoreOptions::answer_timeout_ms).
constexpr int kStatementTimeoutMs = 60000;

std::string WithConnectTimeout(const std::string& target) {
  if (target.find("connect_timeout") != std::string::npos) return target;
  const std::string value = std::to_string(kConnectTimeoutSeconds);
  if (IsLibpqKeywords(target)) return target + " connect_timeout=" + value;
  const size_t fragment = target.find('#');
  const std::string head = target.substr(0, fragment);
  const std::string tail = fragment == std::string::npos ? std::string() : target.substr(fragment);
  return head + (head.find('?') == std::string::npos ? "?" : "&") + "connect_timeout=" + value + tail;
}

}  // namespace

Result<std::unique_ptr<Db>> OpenPostgres(const std::string& url, int busy_timeout_ms,
                                         int answer_timeout_ms) {
  auto pq = LoadLibpq();
  if (!pq.ok()) return pq.status();
  const Libpq& lib = **pq;
  PGconn* conn = lib.connectdb(WithConnectTimeout(url).c_str());
  if (!conn) return Status::Unavailable("cannot connect (out of memory)");
  if (lib.status(conn) != CONNECTION_OK || lib.set_nonblocking(conn, 1) != 0) {
    std::string why = OneLine(lib.error_message(conn));
    lib.finish(conn);
    return Status::Unavailable("cannot connect: " + why);
  }
  lib.set_notice_processor(conn, DropNotice, nullptr);
  const int wait_ms = answer_timeout_ms > 0 ? answer_timeout_ms : kStatementTimeoutMs + 5000;
  auto db = std::make_unique<PgDb>(lib, conn, wait_ms);
  // Settings of this session only; the numbers are computed here, not text from outside.
  const std::string settings = "SET client_encoding = 'UTF8'; SET lock_timeout = " +
                               std::to_string(busy_timeout_ms > 0 ? busy_timeout_ms : 0) +
                               "; SET statement_timeout = " + std::to_string(kStatementTimeoutMs) +
                               "; SET client_min_messages = warning";
  Status s = db->Exec(settings.c_str(), "database");
  if (!s.ok()) return s;
  return std::unique_ptr<Db>(std::move(db));
}

}  // namespace triage::store::detail

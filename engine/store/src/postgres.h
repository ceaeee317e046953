// PostgreSQL at its edge: a detail::Db over libpq, loaded when a postgresql:// store is opened
// (never at program start: a host without libpq runs triage on SQLite). Nothing outside
// engine/store/src includes this header.
#pragma once

#include <memory>
#include <string>

#include "sql.h"

namespace triage::store::detail {

// True for "postgresql://..." and "postgres://..." (the URI forms libpq takes).
bool IsPostgresUrl(const std::string& target);

// Connects to the database of `url`. Loads libpq (the fixed soname libpq.so.5) on first use:
// Unavailable, naming the package libpq5, when it is not installed. Notices the server sends
// are dropped (the library never prints). `busy_timeout_ms` bounds how long a statement waits
// for a lock (lock_timeout), after which it is Busy. `answer_timeout_ms` (0: the statement
// timeout and 5 s) bounds how long a command waits for the server's answer: past it the command
// is Unavailable and the connection given up (every later command on it Unavailable at once).
Result<std::unique_ptr<Db>> OpenPostgres(const std::string& url, int busy_timeout_ms,
                                         int answer_timeout_ms);

// `url` with any password taken out, for messages.
std::string RedactUrl(const std::string& url);

}  // namespace triage::store::detail

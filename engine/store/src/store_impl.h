// What store.cpp and export.cpp share: the connection behind a Store and the snapshot reader of
// one incident.
#pragma once

#include <memory>
#include <string>

#include "sql.h"
#include "triage/store/store.h"

namespace triage::store {

struct Store::Impl {
  std::string path;  // the file, or the PostgreSQL URL without its password
  StoreOptions options;
  std::unique_ptr<detail::Db> db;  // SQLite or PostgreSQL (sql.h)
  std::string server;              // a PostgreSQL store's URL as given (Reconnect); empty: a file
};

namespace detail {

// Reads incident `id` completely; the caller holds a read transaction so the parts agree.
Result<StoredIncident> ReadIncident(Db& db, int64_t id);

}  // namespace detail
}  // namespace triage::store

// What store.cpp and export.cpp share: the connection behind a Store and the snapshot reader of
// one incident.
#pragma once

#include <string>

#include "sqlite.h"
#include "triage/store/store.h"

namespace triage::store {

struct Store::Impl {
  std::string path;
  StoreOptions options;
  detail::Db db;
};

namespace detail {

// Reads incident `id` completely; the caller holds a read transaction so the parts agree.
Result<StoredIncident> ReadIncident(Db& db, int64_t id);

}  // namespace detail
}  // namespace triage::store

// Schema migrations, applied on open (see schema.cpp and docs/schema.md).
#pragma once

#include "sql.h"
#include "triage/store/store.h"

namespace triage::store::detail {

// Brings the database to kSchemaVersion in one write transaction (a no-op when it is there).
// Refuses a newer version, and a non-empty database without a triage schema version. SQLite
// keeps the version in PRAGMA user_version, PostgreSQL in the table triage_schema.
Status Migrate(Db& db);

// The database's schema version (0: none yet).
Result<int64_t> StoredSchemaVersion(Db& db);

}  // namespace triage::store::detail

// Schema migrations, applied on open (see schema.cpp and docs/schema.md).
#pragma once

#include "sqlite.h"
#include "triage/store/store.h"

namespace triage::store::detail {

// Brings the database to kSchemaVersion in one write transaction (a no-op when it is there).
// Refuses a newer version, and a non-empty file without a triage schema version.
Status Migrate(Db& db);

}  // namespace triage::store::detail

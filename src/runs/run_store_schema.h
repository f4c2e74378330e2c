// The run store's file format: its stamp and the migrations that build its schema, version by
// version (RunStore::kSchemaVersion). The usage ledger opens the same file through it.
#pragma once

#include "common/sqlite_db.h"

namespace ptxbench {

/// "PTBR" in the SQLite header, and run_store_schema().migrations[v] takes a store from version v
/// to v + 1.
const StoreSchema& run_store_schema();

}  // namespace ptxbench

// Turns a run store back into what an older ptxbench wrote, for the migration tests: undoes the
// migrations of src/runs/run_store_schema.cpp down to schema `version`. A new migration
// adds its undo here, and every test that starts from an old schema keeps working.
#pragma once

#include <string>

#include "common/sqlite_db.h"

namespace ptxbench::test {

inline void downgrade_run_store(const std::string& path, int version) {
  SqliteDb db(path);
  const int64_t current = db.pragma_int("user_version");
  if (current >= 5 && version < 5) db.exec("DROP TABLE seed_turns");  // repair seeds as turn 0
  if (current >= 4 && version < 4) {  // the run lifecycle
    db.exec("DROP TABLE infra_attempts");
    for (const char* column : {"state", "failure", "holder_pid", "holder_host", "holder_started", "archived_at"})
      db.exec(std::string("ALTER TABLE runs DROP COLUMN ") + column);
  }
  if (current >= 3 && version < 3) db.exec("ALTER TABLE candidates DROP COLUMN language");  // Triton candidates
  if (current >= 2 && version < 2) {  // imported runs
    db.exec("DROP INDEX runs_by_import_key");
    db.exec("ALTER TABLE runs DROP COLUMN import_key");
    db.exec("ALTER TABLE runs DROP COLUMN gpu");
    db.exec("ALTER TABLE runs DROP COLUMN origin");
  }
  db.exec("PRAGMA user_version = " + std::to_string(version));
}

}  // namespace ptxbench::test

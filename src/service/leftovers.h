// What a killed service instance leaves behind: runner and tool processes that outlived their
// worker (a hung candidate under compute-sanitizer goes on holding the GPU, and every later timing
// on that GPU shares it), and their scratch folders. Each service (one queue database) has its own
// scratch root, so a restart finds exactly its predecessor's leftovers and nothing of other users.
#pragma once

#include "common/fs.h"

namespace ptxbench {

/// The evaluations' scratch root of the service whose queue database is `db`: under the cache
/// folder (never under /tmp, which the runner's filesystem view replaces), one per database.
fs::path service_scratch_root(const std::string& db);

struct Leftovers {
  int processes_killed = 0;
  int folders_removed = 0;
};

/// Kills every process working in or naming `scratch_root`, then empties it (creating it when
/// missing). Called by the service before its workers start.
Leftovers clear_leftovers(const fs::path& scratch_root);

}  // namespace ptxbench

// One service instance per queue database: a lock that a second `serve` on the same queue finds
// held (a clear error instead of two services fighting over one queue and its GPUs), the
// evaluations' scratch root of that queue, and what a killed predecessor left behind there —
// runner and tool processes that outlived their worker (a hung candidate under compute-sanitizer
// goes on holding the GPU, and every later timing on that GPU shares it) and their folders.
#pragma once

#include <string>

#include "common/fd.h"
#include "common/fs.h"

namespace ptxbench {

/// Held for the service's lifetime (flock on `<db>.serve.lock`, released by the kernel when the
/// process dies, not inherited by workers). Throws InputError when another service still holds it
/// after 5 s (a killed predecessor gets that long to exit).
class InstanceLock {
 public:
  explicit InstanceLock(const std::string& db);

 private:
  Fd m_fd;
};

/// The evaluations' scratch root of the service whose queue database is `db`: under the cache
/// folder (never under /tmp, which the runner's filesystem view replaces), one per database.
fs::path service_scratch_root(const std::string& db);

struct Leftovers {
  int processes_killed = 0;
  int folders_removed = 0;
};

/// Kills every process working in or naming `scratch_root`, then empties it (creating it when
/// missing). Called by the service, holding its InstanceLock, before its workers start.
Leftovers clear_leftovers(const fs::path& scratch_root);

}  // namespace ptxbench

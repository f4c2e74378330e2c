// Host paths a sandboxed process needs to see (read-only), found at run time rather than listed
// by hand per host: the system folders, the folders of every shared library this process has
// loaded (the CUDA driver, runtime, CUPTI, cuDNN wherever this host keeps them), and
// $LD_LIBRARY_PATH. Also the sandbox setting of this host ($PTXBENCH_SANDBOX).
#pragma once

#include <string>
#include <vector>

#include "sandbox/sandbox_policy.h"

namespace ptxbench {

/// /usr, /lib*, /bin, /sbin (those that exist; usrmerge links are followed by the view).
std::vector<std::string> system_paths();
/// Folders of the shared objects mapped into this process (from /proc/self/maps).
std::vector<std::string> loaded_library_dirs();
/// The folders of $LD_LIBRARY_PATH.
std::vector<std::string> ld_library_path_dirs();

/// $PTXBENCH_SANDBOX: "best_effort" (default), "required", or "off" (the older name
/// $PTXBENCH_SANDBOX_FS is read too). Throws InputError for another value.
Enforcement sandbox_enforcement_setting();

/// How runners are sandboxed (EvalOptions carries it per evaluation).
struct RunnerSandboxOptions {
  Enforcement enforcement = sandbox_enforcement_setting();
  uint64_t memory_bytes = uint64_t{24} << 30;  ///< host memory of a runner (and its tool), a cgroup
};

}  // namespace ptxbench

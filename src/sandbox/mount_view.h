// The filesystem a sandboxed process sees: a fresh tmpfs root holding read-only binds of an
// allowlist of host paths, writable binds, a minimal /dev, its own /proc, private /tmp and
// /dev/shm; pivot_root into it. Planned in the parent (path resolution allocates), applied in the
// child between clone and exec with system calls only (async-signal-safe).
#pragma once

#include <string>
#include <vector>

#include "sandbox/sandbox_policy.h"

namespace ptxbench {

struct MountStep {
  enum class Kind { mkdir, touch, symlink, bind_ro, bind_rw, bind_dev, tmpfs, proc, seal_root };
  Kind kind;
  std::string source;  ///< bind source, symlink target, tmpfs options
  std::string target;  ///< absolute path inside the new root (prefixed with the staging root)
};

struct MountPlan {
  std::string staging;  ///< an empty host folder on which the new root's tmpfs is mounted
  std::vector<MountStep> steps;
  std::string cwd;      ///< where the child starts (inside the view)
};

/// Plans the view of `policy` (cwd must lie in a writable path). The staging folder is created
/// under `staging_parent` when missing. Throws EnvironmentError when a writable path is missing.
MountPlan plan_mount_view(const SandboxPolicy& policy, const std::string& cwd, const std::string& staging_parent);

/// In the child (inside a new mount namespace, as root of it): builds and enters the view.
/// Returns 0, or the errno of the failing step with `failed_step` set to its index.
int apply_mount_plan(const MountPlan& plan, int& failed_step) noexcept;

/// Human-readable description of step `index` (for the parent's error message).
std::string describe_step(const MountPlan& plan, int index);

}  // namespace ptxbench

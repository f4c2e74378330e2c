// The sandbox of a process we start (a runner, a tool running a runner, nvcc): new PID, mount,
// network and IPC namespaces, a filesystem view of an allowlist of paths, an unprivileged
// identity without capabilities and with no_new_privs, a clean environment, and a memory
// cgroup. It is the ChildSetup of that process's ProcessSpec. What the host could not give
// (best effort) is recorded in report(). docs/sandbox.md is the threat model.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "sandbox/cgroup.h"
#include "sandbox/mount_view.h"
#include "sandbox/sandbox_policy.h"

namespace ptxbench {

class Sandbox final : public ChildSetup {
 public:
  /// Plans everything for a child that starts in `cwd` (which must lie in a writable path).
  /// Throws EnvironmentError when `required` cannot be met on this host.
  Sandbox(SandboxPolicy policy, const std::string& cwd);

  [[nodiscard]] unsigned long clone_flags() const noexcept override;
  void adopt(int child_pid) override;
  [[nodiscard]] int enter() const noexcept override;
  [[nodiscard]] int drop() const noexcept override;
  [[nodiscard]] std::string describe(int code, int err) const override;
  bool degrade(const std::string& reason) override;
  [[nodiscard]] std::vector<std::string> environment() const override;

  [[nodiscard]] const SandboxReport& report() const noexcept { return m_report; }
  [[nodiscard]] const SandboxPolicy& policy() const noexcept { return m_policy; }
  /// Whether the kernel killed a process of this sandbox for lack of (its limit of) host memory.
  [[nodiscard]] bool out_of_memory() const;
  [[nodiscard]] const ProcessCgroup* cgroup() const noexcept { return m_cgroup.get(); }

 private:
  SandboxPolicy m_policy;
  SandboxReport m_report;
  bool m_namespaces = false;
  bool m_view = false;
  bool m_userns = false;     ///< not root: a user namespace maps us to root inside it
  uint32_t m_uid = 0, m_gid = 0, m_outer_uid = 0, m_outer_gid = 0;
  MountPlan m_plan;
  std::unique_ptr<ProcessCgroup> m_cgroup;
  std::vector<std::string> m_env;
};

/// The user the sandbox runs candidates as on this host: $PTXBENCH_SANDBOX_UID / _GID, else 65534.
uint32_t sandbox_uid();
uint32_t sandbox_gid();

}  // namespace ptxbench

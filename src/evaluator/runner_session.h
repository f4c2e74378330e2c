// The worker's handle on one sandboxed runner process (docs/sandbox.md): started in its own PID,
// mount, network and IPC namespaces as an unprivileged user, seeing only what it needs read-only
// and its scratch folder writable, under a host-memory cgroup; spoken to over a socket
// (runner/protocol.h) with a deadline on every request; hard-killed on timeout or destruction.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/control_channel.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "runner/protocol.h"
#include "sandbox/sandbox.h"

namespace ptxbench {

/// How runners are sandboxed on this host (EvalOptions carries it per evaluation).
struct RunnerSandboxOptions {
  Enforcement enforcement = sandbox_enforcement_default();
  uint64_t memory_bytes = uint64_t{24} << 30;  ///< host memory of a runner (and its tool), a cgroup
  /// The default of $PTXBENCH_SANDBOX (host_paths.h).
  static Enforcement sandbox_enforcement_default();
};

struct RunnerLaunch {
  std::string runner_path;  ///< ptxbench-runner
  int device = 0;
  fs::path scratch;         ///< the runner's cwd, its only writable folder
  std::vector<fs::path> readable;  ///< also visible read-only: the candidate library's folder
  std::size_t output_cap_bytes = 256 << 10;
  RunnerSandboxOptions sandbox;
};

/// The sandbox of a process that runs candidate code (the session runner, or a tool running the
/// runner): system folders, /etc, this process's library folders and $LD_LIBRARY_PATH, the runner's
/// folder, `readable`, the GPU devices and /sys read-only; `scratch` writable. `keep_root` for a
/// tool stage that cannot run unprivileged (ncu's performance counters).
SandboxPolicy runner_sandbox_policy(const fs::path& scratch, const std::vector<fs::path>& readable,
                                    const RunnerSandboxOptions& options, bool keep_root = false);

/// A ProcessSpec for `argv` in that sandbox (cwd = scratch, capped output, rlimits, dies with us).
ProcessSpec sandboxed_spec(const std::vector<std::string>& argv, const fs::path& scratch, std::size_t output_cap_bytes,
                           const std::vector<fs::path>& readable = {}, const RunnerSandboxOptions& options = {},
                           bool keep_root = false);

/// The runner did not answer in time, died, or broke the protocol.
struct RunnerFault : std::runtime_error {
  enum class Kind { timeout, died, protocol, out_of_memory };
  RunnerFault(Kind kind, const std::string& what) : std::runtime_error(what), kind(kind) {}
  Kind kind;
};

class RunnerSession {
 public:
  /// Starts the runner and waits up to startup_timeout_s for it to be ready.
  RunnerSession(const RunnerLaunch& launch, double startup_timeout_s);
  ~RunnerSession();
  RunnerSession(const RunnerSession&) = delete;
  RunnerSession& operator=(const RunnerSession&) = delete;

  /// Sends `request` (with `fds`, for setup), returns the reply (which may carry a failure).
  /// Throws RunnerFault; after a fault the runner is dead (killed if it was still running).
  RunnerReply request(const RunnerRequest& request, double timeout_s, const std::vector<int>& fds = {});
  /// Untyped form, kept only until the evaluator's stages speak runner/protocol.h (same session).
  ordered_json request(const ordered_json& message, double timeout_s);
  /// Everything the runner printed (candidate printf included), capped.
  [[nodiscard]] std::string output();
  /// Ends the runner (asks, then kills after 2 s) and returns everything it printed.
  std::string finish();
  /// What the sandbox enforced for this runner.
  [[nodiscard]] const SandboxReport& sandbox_report() const { return m_sandbox->report(); }

 private:
  [[noreturn]] void fail(RunnerFault::Kind kind, const std::string& what);
  std::shared_ptr<Sandbox> m_sandbox;
  std::unique_ptr<ChildProcess> m_child;
  std::unique_ptr<ControlChannel> m_channel;
};

}  // namespace ptxbench

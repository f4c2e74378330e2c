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
#include "sandbox/host_paths.h"
#include "sandbox/sandbox.h"

namespace ptxbench {

struct RunnerLaunch {
  std::string runner_path;  ///< ptxbench-runner
  int device = 0;
  fs::path scratch;         ///< the runner's cwd, its only writable folder
  std::vector<fs::path> readable;  ///< also visible read-only: the candidate library's folder
  std::size_t output_cap_bytes = 256 << 10;
  RunnerSandboxOptions sandbox;
  /// How long the worker polls for a reply before it sleeps (ControlChannel::set_spin): the host
  /// bound compares the worker's clock around calls, so its wake-up must not vary with the call.
  double reply_spin_s = 0.05;
};

/// The sandbox of a process that runs candidate code (the session runner, or a tool running the
/// runner): system folders, /etc, this process's library folders and $LD_LIBRARY_PATH, the runner's
/// folder, `readable`, the GPU devices and /sys read-only; `scratch` writable. `keep_root` for a
/// tool stage that cannot run unprivileged (ncu's performance counters).
SandboxPolicy runner_sandbox_policy(const fs::path& scratch, const std::vector<fs::path>& readable,
                                    const RunnerSandboxOptions& options, bool keep_root = false);

/// A ProcessSpec for `argv` in that sandbox (cwd = scratch, capped output, rlimits, dies with us).
/// Whether runners leave their start-up block and /proc readable to the candidate: only when the
/// worker's environment says PTXBENCH_PROC_VIEW=visible (diagnosis of a tool that needs them;
/// docs/sandbox.md, "Denying the look").
bool runner_keeps_look();

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
  /// Starts the runner without waiting (wait_ready() before the first request). The runner dies
  /// with the thread that starts it (PR_SET_PDEATHSIG), so a long-lived thread must start it; a
  /// short-lived one may then wait for it and set it up.
  explicit RunnerSession(const RunnerLaunch& launch);
  /// Waits up to `timeout_s` for the runner's first line. Throws EnvironmentError.
  void wait_ready(double timeout_s);
  ~RunnerSession();
  RunnerSession(const RunnerSession&) = delete;
  RunnerSession& operator=(const RunnerSession&) = delete;

  /// Sends `request` (numbered; with `fds`, for setup), returns the reply (which may carry a
  /// failure). Throws RunnerFault; after a fault the runner is dead (killed if it was still running).
  /// A reply out of step (a forged line in the channel) is a protocol fault.
  /// See RunnerLaunch::reply_spin_s.
  void set_reply_spin(double seconds) noexcept { m_channel->set_spin(seconds); }
  RunnerReply request(RunnerRequest request, double timeout_s, const std::vector<int>& fds = {});
  /// The setup request: `setup` with its shared allocations' descriptors (`fds`, indexed by the
  /// setup's fd_index fields). Throws RunnerFault like request().
  RunnerReply setup(SetupRequest setup, const std::vector<Fd>& fds, double timeout_s);
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
  uint64_t m_seq = 0;
};

}  // namespace ptxbench

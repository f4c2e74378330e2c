// The worker's handle on one sandboxed runner process: started in its own process group (no
// network namespace where the host allows, resource limits, scratch folder as cwd), spoken to
// over a socket with a deadline on every request, hard-killed on timeout or on destruction.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/fs.h"
#include "common/subprocess.h"
#include "common/control_channel.h"

namespace ptxbench {

struct RunnerLaunch {
  std::string runner_path;  ///< ptxbench-runner
  int device = 0;
  fs::path scratch;         ///< the runner's cwd
  std::size_t output_cap_bytes = 256 << 10;
};

/// $PTXBENCH_SANDBOX_FS: "best_effort" (default), "required", or "off".
FilesystemIsolation filesystem_isolation_setting();

/// Sandbox settings shared by every runner start (interactive, sanitizer, profiler).
ProcessSpec sandboxed_spec(const std::vector<std::string>& argv, const fs::path& scratch,
                           std::size_t output_cap_bytes);

/// The runner did not answer in time, died, or broke the protocol.
struct RunnerFault : std::runtime_error {
  enum class Kind { timeout, died, protocol };
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

  /// Sends `message`, returns the reply (which may say ok:false). Throws RunnerFault; after a
  /// fault the runner is dead (killed if it was still running).
  ordered_json request(const ordered_json& message, double timeout_s);
  /// Everything the runner printed (candidate printf included), capped.
  [[nodiscard]] std::string output();
  /// Ends the runner (asks, then kills after 2 s) and returns everything it printed.
  std::string finish();
  /// How the process ended, once it has.
  [[nodiscard]] std::string exit_description() const { return m_exit; }

 private:
  [[noreturn]] void fail(RunnerFault::Kind kind, const std::string& what);
  std::unique_ptr<ChildProcess> m_child;
  std::unique_ptr<ControlChannel> m_channel;
  std::string m_exit;
};

}  // namespace ptxbench

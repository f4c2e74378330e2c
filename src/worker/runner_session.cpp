#include "worker/runner_session.h"

#include "common/error.h"

#include <unistd.h>

#include <cstdlib>

namespace ptxbench {

FilesystemIsolation filesystem_isolation_setting() {
  // Default best effort: validated on the H200 host (a full evaluation with compute-sanitizer and
  // ncu inside the view, results/h200.md); "off" is the escape hatch for hosts without namespaces.
  const char* v = std::getenv("PTXBENCH_SANDBOX_FS");
  if (v && std::string(v) == "off") return FilesystemIsolation::off;
  if (v && std::string(v) == "required") return FilesystemIsolation::required;
  return FilesystemIsolation::best_effort;
}

ProcessSpec sandboxed_spec(const std::vector<std::string>& argv, const fs::path& scratch,
                           std::size_t output_cap_bytes) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = scratch.string();
  spec.network = NetworkIsolation::best_effort;  // needs CAP_SYS_ADMIN; recorded in docs/sandbox.md
  spec.filesystem = filesystem_isolation_setting();
  if (spec.filesystem != FilesystemIsolation::off) {
    spec.writable_paths = {fs::absolute(scratch).string()};
    // Tools and the CUDA runtime write caches under $HOME and temp files under $TMPDIR: keep both
    // inside what stays writable.
    spec.env_overrides = {"HOME=" + fs::absolute(scratch).string(), "TMPDIR=" + fs::absolute(scratch).string(),
                          "CUDA_CACHE_DISABLE=1"};
  }
  spec.limits.core_bytes = 0;
  spec.limits.open_files = 4096;
  spec.limits.file_size_bytes = 1ul << 30;
  spec.output_cap_bytes = output_cap_bytes;
  spec.die_with_parent = true;
  return spec;
}

RunnerSession::RunnerSession(const RunnerLaunch& launch, double startup_timeout_s) {
  int fds[2];
  make_socket_pair(fds);
  ProcessSpec spec = sandboxed_spec({launch.runner_path, "serve", "--control-fd", "3", "--device",
                                     std::to_string(launch.device)},
                                    launch.scratch, launch.output_cap_bytes);
  spec.control_fd = fds[1];
  try {
    m_child = std::make_unique<ChildProcess>(spec);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  m_channel = std::make_unique<ControlChannel>(fds[0]);
  // The runner's first line says whether it got the device. Nothing of the candidate has run yet,
  // so any failure here is the host's, not the candidate's.
  ordered_json ready;
  try {
    ready = m_channel->receive(startup_timeout_s);
  } catch (const ChannelError& e) {
    auto exited = m_child->poll_exit();
    std::string how = exited ? exited->describe() : (m_child->kill_and_wait(), std::string("killed after no answer"));
    throw EnvironmentError("runner", std::string("the runner did not start: ") + e.what() + "; " + how + "\n" + output());
  }
  if (!ready.value("ok", false))
    throw EnvironmentError("runner", "the runner could not use the device: " + ready.value("error", std::string("?")));
}

RunnerSession::~RunnerSession() { (void)finish(); }

std::string RunnerSession::finish() {
  if (!m_child) return "";
  if (!m_child->poll_exit()) {
    try {
      m_channel->send({{"op", "exit"}});
    } catch (...) {
    }
    if (!m_child->wait_for(2.0)) m_child->kill_and_wait();
  }
  return output();
}

void RunnerSession::fail(RunnerFault::Kind kind, const std::string& what) {
  auto exited = m_child->poll_exit();
  ExitStatus st = exited ? *exited : m_child->kill_and_wait();
  m_exit = st.describe();
  throw RunnerFault(kind, what.empty() ? m_exit : what + " (runner " + m_exit + ")");
}

ordered_json RunnerSession::request(const ordered_json& message, double timeout_s) {
  try {
    m_channel->send(message);
    return m_channel->receive(timeout_s);
  } catch (const ChannelError& e) {
    if (e.kind == ChannelFailure::timeout) fail(RunnerFault::Kind::timeout, "");
    // Closed: give the process a moment to finish dying so its status is accurate.
    m_child->wait_for(2.0);
    fail(e.kind == ChannelFailure::closed ? RunnerFault::Kind::died : RunnerFault::Kind::protocol, "");
  }
}

std::string RunnerSession::output() {
  auto out = m_child->stdout_capture();
  auto err = m_child->stderr_capture();
  std::string s = out.text;
  if (!err.text.empty()) s += (s.empty() ? "" : "\n") + err.text;
  return s;
}

}  // namespace ptxbench

#include "evaluator/runner_session.h"

#include <cstdlib>
#include <algorithm>

#include "common/cuda_tools.h"
#include "common/error.h"
#include "sandbox/host_paths.h"

namespace ptxbench {

SandboxPolicy runner_sandbox_policy(const fs::path& scratch, const std::vector<fs::path>& readable,
                                    const RunnerSandboxOptions& options, bool keep_root) {
  SandboxPolicy p;
  p.enforcement = options.enforcement;
  p.read_only = system_paths();
  p.read_only.push_back("/etc");  // the loader's cache, the tools' user lookups; nothing of ours
  for (auto dirs : {loaded_library_dirs(), ld_library_path_dirs()})
    p.read_only.insert(p.read_only.end(), dirs.begin(), dirs.end());
  p.read_only.push_back(executable_dir().string());
  // The CUDA toolkit's tools (compute-sanitizer, ncu) and what they load from their own folders.
  std::string nvcc = find_cuda_tool("nvcc");
  if (!nvcc.empty()) p.read_only.push_back(fs::path(nvcc).parent_path().parent_path().string());
  for (const char* tool : {"compute-sanitizer", "ncu"}) {
    std::string path = find_cuda_tool(tool);
    std::error_code ec;
    if (!path.empty()) p.read_only.push_back(fs::canonical(path, ec).parent_path().string());
  }
  // ncu's launcher looks for its installation beside the toolkit or under /opt/nvidia.
  p.read_only.push_back("/opt/nvidia");
  for (const auto& r : readable) p.read_only.push_back(fs::absolute(r).string());
  p.writable = {fs::absolute(scratch).string()};
  p.gpu_devices = true;
  p.sys = true;  // the driver reads the PCI topology there
  p.keep_root = keep_root;
  p.memory_bytes = options.memory_bytes;
  return p;
}

bool runner_keeps_look() {
  const char* v = std::getenv("PTXBENCH_PROC_VIEW");
  return v && std::string(v) == "visible";
}

ProcessSpec sandboxed_spec(const std::vector<std::string>& argv, const fs::path& scratch, std::size_t output_cap_bytes,
                           const std::vector<fs::path>& readable, const RunnerSandboxOptions& options, bool keep_root) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = fs::absolute(scratch).string();
  spec.setup = std::make_shared<Sandbox>(runner_sandbox_policy(scratch, readable, options, keep_root), spec.cwd);
  // Tools and the CUDA runtime write caches under $HOME and temp files under $TMPDIR.
  spec.env_overrides = {"HOME=" + spec.cwd, "TMPDIR=" + spec.cwd, "CUDA_CACHE_DISABLE=1"};
  spec.limits.core_bytes = 0;
  spec.limits.open_files = 4096;
  spec.limits.file_size_bytes = 1ul << 30;
  spec.output_cap_bytes = output_cap_bytes;
  spec.die_with_parent = true;
  return spec;
}

RunnerSession::RunnerSession(const RunnerLaunch& launch, double startup_timeout_s) : RunnerSession(launch) {
  wait_ready(startup_timeout_s);
}

RunnerSession::RunnerSession(const RunnerLaunch& launch) {
  Fd ours, theirs;
  make_socket_pair(ours, theirs);
  std::vector<std::string> argv = {launch.runner_path, "serve", "--control-fd", "3", "--device", std::to_string(launch.device)};
  if (runner_keeps_look()) argv.insert(argv.begin() + 1, "--keep-look");
  ProcessSpec spec = sandboxed_spec(argv, launch.scratch, launch.output_cap_bytes, launch.readable, launch.sandbox);
  m_sandbox = std::static_pointer_cast<Sandbox>(spec.setup);
  spec.control_fd = theirs.get();
  m_child = std::make_unique<ChildProcess>(spec);
  theirs.reset();
  m_channel = std::make_unique<ControlChannel>(std::move(ours));
  m_channel->set_spin(launch.reply_spin_s);
}

void RunnerSession::wait_ready(double startup_timeout_s) {
  // The runner's first line says whether it got the device. Nothing of the candidate has run yet,
  // so any failure here is the host's, not the candidate's.
  RunnerReply ready;
  try {
    ready = runner_reply_from_json(m_channel->receive(startup_timeout_s));
  } catch (const std::exception& e) {
    auto exited = m_child->poll_exit();
    std::string how = exited ? exited->describe() : (m_child->kill_and_wait(), std::string("killed after no answer"));
    throw EnvironmentError("runner", std::string("the runner did not start: ") + e.what() + "; " + how + "\n" + output());
  }
  if (!ready.ok())
    throw EnvironmentError("runner", "the runner could not use the device: " + ready.failure->error);
}

RunnerSession::~RunnerSession() { (void)finish(); }

std::string RunnerSession::finish() {
  if (!m_child) return "";
  if (!m_child->poll_exit()) {
    try {
      m_channel->send(to_json(RunnerRequest{RunnerOp::exit, {}, {}}));
    } catch (...) {
    }
    if (!m_child->wait_for(2.0)) m_child->kill_and_wait();
  }
  return output();
}

void RunnerSession::fail(RunnerFault::Kind kind, const std::string& what) {
  auto exited = m_child->poll_exit();
  ExitStatus st = exited ? *exited : m_child->kill_and_wait();
  std::string how = st.describe();
  if (m_sandbox->out_of_memory()) {
    kind = RunnerFault::Kind::out_of_memory;
    how = "killed for using more than its host-memory limit of " +
          std::to_string(m_sandbox->cgroup()->limit_bytes() >> 20) + " MiB";
  }
  throw RunnerFault(kind, what.empty() ? how : what + " (runner " + how + ")");
}

RunnerReply RunnerSession::request(RunnerRequest request, double timeout_s, const std::vector<int>& fds) {
  request.seq = ++m_seq;
  try {
    m_channel->send(to_json(request), fds);
    RunnerReply reply = runner_reply_from_json(m_channel->receive(timeout_s));
    if (reply.seq != request.seq)
      fail(RunnerFault::Kind::protocol, "a reply out of step (number " + std::to_string(reply.seq) + " for request " +
                                            std::to_string(request.seq) +
                                            "): something other than the runner wrote to its control channel");
    return reply;
  } catch (const ChannelError& e) {
    if (e.kind == ChannelFailure::timeout) fail(RunnerFault::Kind::timeout, "");
    // Closed: give the process a moment to finish dying so its status is accurate.
    m_child->wait_for(2.0);
    if (e.kind == ChannelFailure::closed) fail(RunnerFault::Kind::died, "");
    fail(RunnerFault::Kind::protocol, e.what());  // malformed: what was wrong with its reply (a line too long)
  } catch (const InputError& e) {
    fail(RunnerFault::Kind::protocol, e.what());  // a reply that is not one: forged or corrupted
  }
}

RunnerReply RunnerSession::setup(SetupRequest setup, const std::vector<Fd>& fds, double timeout_s) {
  RunnerRequest r;
  r.op = RunnerOp::setup;
  r.setup = std::move(setup);
  std::vector<int> raw;
  for (const auto& f : fds) raw.push_back(f.get());
  return request(std::move(r), timeout_s, raw);
}

std::string RunnerSession::output() {
  auto out = m_child->stdout_capture();
  auto err = m_child->stderr_capture();
  std::string s = out.text;
  if (!err.text.empty()) s += (s.empty() ? "" : "\n") + err.text;
  return s;
}

}  // namespace ptxbench

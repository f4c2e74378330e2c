#include "evaluator/stages/tool_process.h"

#include <unistd.h>

#include "evaluator/runner_session.h"
#include "sandbox/sandbox.h"

namespace ptxbench {

std::string runner_path(const EvalOptions& o) {
  if (!o.runner_path.empty()) return o.runner_path;
  return (executable_dir() / "ptxbench-runner").string();
}

std::vector<std::string> once_command(const EvalOptions& o, const fs::path& library, const fs::path& spec, uint64_t seed,
                                      bool triton) {
  std::vector<std::string> argv = {runner_path(o), "once", "--library", library.string(), "--spec", spec.string(),
                                   "--seed", std::to_string(seed), "--calls", "1", "--device", std::to_string(o.device)};
  if (triton) argv.insert(argv.end(), {"--language", "triton"});
  if (runner_keeps_look()) argv.insert(argv.begin() + 1, "--keep-look");
  if (o.sandbox.enforcement != Enforcement::off) argv.push_back("--no-orphan-watch");
  else argv.insert(argv.end(), {"--owner-pid", std::to_string(getpid())});
  return argv;
}

ProcessSpec tool_spec(const EvalOptions& o, const std::vector<std::string>& argv, const fs::path& scratch,
                      const std::vector<fs::path>& readable, bool keep_root) {
  return sandboxed_spec(argv, scratch, 1 << 20, readable, o.sandbox, keep_root);
}

std::string sandbox_finding(const ProcessSpec& spec, const ProcessResult& r) {
  auto* sandbox = dynamic_cast<const Sandbox*>(spec.setup.get());
  if (sandbox && sandbox->out_of_memory())
    return "the candidate exceeded its host-memory limit of " + std::to_string(sandbox->cgroup()->limit_bytes() >> 30) +
           " GiB and was killed";
  std::string err = r.err.text + r.out.text;
  auto at = err.find("the sandbox denied system calls:");
  if (at != std::string::npos) return err.substr(at, err.find('\n', at) - at);
  return "";
}

}  // namespace ptxbench

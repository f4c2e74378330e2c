#include "evaluator/evaluation.h"

#include "common/error.h"
#include "evaluator/runner_session.h"

namespace ptxbench {

std::vector<fs::path> EvalInputs::readable() const {
  std::vector<fs::path> r = {build.library.parent_path()};
  r.insert(r.end(), build.python_dirs.begin(), build.python_dirs.end());
  return r;
}

bool EvalInputs::runs_sass_tool() const {
  return options.profile && (build.static_mechanism_opcodes != false || options.profile_always);
}

TrustedRunner& PendingRunner::get(const std::string& what) {
  if (ready) return *ready;
  if (!starting.valid()) throw Error("timing", what + "'s runner was never started");
  try {
    ready = starting.get();
  } catch (const RunnerFault& f) {
    throw EnvironmentError("runner", what + "'s runner failed to start: " + f.what());
  }
  return *ready;
}

EvalRunners::EvalRunners() = default;
EvalRunners::~EvalRunners() = default;
EvalRunners::EvalRunners(EvalRunners&&) noexcept = default;
EvalRunners& EvalRunners::operator=(EvalRunners&&) noexcept = default;

}  // namespace ptxbench

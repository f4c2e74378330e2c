#include "evaluator/stages/compile.h"

#include <chrono>

#include "common/clock.h"

namespace ptxbench {

namespace {

// A failed compile's verdict status.
Status compile_failure_status(CompileStatus s) {
  switch (s) {
    case CompileStatus::banned_api: return Status::BANNED_API;
    case CompileStatus::abi_error: return Status::ABI_ERROR;
    default: return Status::COMPILE_ERROR;
  }
}

}  // namespace

CompileOutcome compile_cuda(Compiler& compiler, const std::string& source) {
  auto start = std::chrono::steady_clock::now();
  CompileResult compiled = compiler.compile(source);
  CompileOutcome out;
  out.section = compile_section(compiled);
  out.section->wall_s = seconds_since(start);
  if (!compiled.ok()) {
    // A failed nvcc run's message is its log, in the section; the verdict's says what happened.
    const bool own_message = compiled.status != CompileStatus::compile_error;
    out.fail(compile_failure_status(compiled.status), own_message ? compiled.message : "the candidate did not compile");
    return out;
  }
  out.library = compiled.library();
  out.cubin = compiled.cubin();
  out.kernels.insert(compiled.kernels.begin(), compiled.kernels.end());
  return out;
}

CompileOutcome check_triton(const EvalOptions& options, int expected_args, const std::string& source) {
  auto start = std::chrono::steady_clock::now();
  TritonCheckOptions o;
  o.arch = options.compile.arch;
  o.expected_args = expected_args;
  o.sandbox = options.compile.sandbox;
  CompileOutcome out;
  CompileResult checked;
  try {
    checked = TritonChecker(o).check(source);
  } catch (const std::exception& e) {  // the checker or its interpreter: ours
    out.section.emplace().message = e.what();
    out.fail(Status::INFRA_ERROR, std::string("the Triton checker failed: ") + e.what());
    return out;
  }
  out.section = compile_section(checked);
  out.section->wall_s = seconds_since(start);
  if (!checked.ok()) out.fail(compile_failure_status(checked.status), checked.message);
  return out;
}

}  // namespace ptxbench

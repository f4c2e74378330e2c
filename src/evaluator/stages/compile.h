// The compile stage: a CUDA candidate through nvcc and the checks of its source and binary
// (compile/compiler.h), or a Triton candidate through its static checks (compile/triton_check.h;
// its build pass runs on the GPU later, stages/triton_build.h). Either way no GPU is touched, so a
// COMPILE_ERROR, BANNED_API or ABI_ERROR verdict never waits for one.
#pragma once

#include <string>

#include "compile/compiler.h"
#include "compile/triton_check.h"
#include "evaluator/evaluation.h"

namespace ptxbench {

struct CompileOutcome : StageOutcome<CompileSection> {
  fs::path library;               ///< a CUDA candidate's library (empty for a Triton one)
  fs::path cubin;                 ///< its cubin
  std::set<std::string> kernels;  ///< its kernels' entry points
};

CompileOutcome compile_cuda(Compiler& compiler, const std::string& source);

/// A Triton candidate's static checks for a workload of `expected_args` tensors. The checker's own
/// failure (it or its interpreter) is INFRA_ERROR.
CompileOutcome check_triton(const EvalOptions& options, int expected_args, const std::string& source);

}  // namespace ptxbench

// A Triton candidate's build pass (docs/triton.md): the candidate's own host code runs once on the
// workload's tensors in the runner's kind of sandbox, so that Triton compiles every kernel for the
// GPU; then the static SASS of its cubins, and the plan of its launch-path calibration. Runs on the
// GPU, shared with other workers' untimed stages.
#pragma once

#include <memory>
#include <string>

#include "compile/triton_build.h"
#include "evaluator/evaluation.h"
#include "evaluator/stages/static_sass.h"

namespace ptxbench {

/// The Triton builder of a GPU host. Throws EnvironmentError where torch or Triton is missing.
std::unique_ptr<TritonBuilder> make_triton_builder(const EvalOptions& options);

struct TritonBuildStageOutcome : StageOutcome<CompileSection> {
  std::optional<StaticSassOutcome> static_sass;
  fs::path library;               ///< the shim's build folder's library
  std::set<std::string> kernels;  ///< the kernels Triton built
};

/// The build pass of `source` (through its static checks: `compile` is their section, extended
/// here) for the workload's tensors (`tensors`: {"tensors": [TensorSpec]}).
TritonBuildStageOutcome triton_build(const TritonBuilder& builder, const std::string& source, const ordered_json& tensors,
                                     CompileSection compile);

/// Whether this evaluation times the launch probe (docs/triton.md, "What the timing means for a
/// Triton candidate"): only while this GPU's calibration for this Python, torch, Triton, driver
/// and argument count holds fewer measurements than the policy wants. The probe is built like a
/// candidate (the build pass on the workload's tensors; cached by content after the first time).
/// Unset: no launch allowance (timing off, the allowance off).
std::optional<TritonLaunchPlan> plan_triton_launch(const TritonBuilder& builder, const EvalOptions& options,
                                                   int cuda_driver, const std::string& calibration_key,
                                                   const ordered_json& tensors, int tensor_count);

}  // namespace ptxbench

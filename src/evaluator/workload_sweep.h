// One candidate evaluated over a sweep of its definition's workloads by one Evaluator
// (`ptxbench eval --workloads`). The candidate compiles once: the compile stage's content-hash cache
// (compile/compiler.h) hands the later workloads the first one's build, failed builds included (a
// Triton candidate's build pass runs per workload, since it compiles for the workload's tensors, and
// hits Triton's own cache); each workload keeps its own inputs, references and baseline
// (WorkloadState), as when it is evaluated alone.
#pragma once

#include <string>
#include <vector>

#include "compile/triton_check.h"
#include "evaluator/evaluator.h"
#include "verdict/sweep_verdict.h"

namespace ptxbench {

/// What a sweep evaluates: candidate source, or (non-empty `trusted_library`) a trusted prebuilt
/// library, the A/A self-test of `eval --builtin`.
struct SweepCandidate {
  std::string source;
  CandidateLanguage language = CandidateLanguage::cuda;
  fs::path trusted_library;
};

/// Evaluates `candidate` at each of `workloads` (of `def`, in order; select_workloads gives them)
/// under `options`' stop rule. Throws what Evaluator throws for a definition or workload it does
/// not know; every candidate failure is a verdict of its workload.
SweepVerdict evaluate_sweep(Evaluator& evaluator, const Definition& def,
                            const std::vector<const Workload*>& workloads, const SweepCandidate& candidate,
                            const SweepOptions& options = {});

}  // namespace ptxbench

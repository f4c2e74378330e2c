// The runtime-SASS stage: which instructions the candidate's call really executed, counted by ncu
// (predicate-true per opcode; the default) or by CUPTI's SASS counting, on one call of the runner's
// `once` command. It decides the run-time mechanisms (wgmma, TMA, tcgen05) and the tensor-core
// coverage; the launches it saw are held against the timed calls' (stages/timing.h).
#pragma once

#include <vector>

#include "evaluator/evaluation.h"
#include "timing/call_activity.h"
#include "timing/profile_binding.h"

namespace ptxbench {

/// What a profile saw, for the timing stage to hold against the timed calls.
struct ProfileSeen {
  std::vector<KernelLaunch> launches;  ///< the profiled call's launches of the candidate's kernels
  ProfileEvidence evidence;
};

struct RuntimeSassOutcome : StageOutcome<RuntimeSassSection> {
  std::optional<Mechanisms> mechanisms;  ///< the verdict's runtime_mechanisms
  std::optional<double> coverage;        ///< the verdict's tensor_core_coverage
  std::optional<ProfileSeen> profile;    ///< set when ncu profiled the call (its launches can be compared)
};

RuntimeSassOutcome runtime_sass(const EvalInputs& in, const EvalRunners& runners, HostState& host);

}  // namespace ptxbench

// The runners of ours beside the candidate's (docs/verdict.md, "Timing method"): the baseline's,
// and a Triton candidate's launch probe's. Same sandbox, same filter, same shared memory and the
// same per-call preparation as the candidate's runner, and no candidate code ever loaded. So both
// sides of a speedup are timed by the same kind of process (an A/A comparison reads 1.00), a
// candidate cannot touch the baseline's calls, and the baseline's calls calibrate the host bound.
// Both start in the background: their setup (cuDNN builds its engines, the probe starts Python)
// overlaps the correctness stage.
#pragma once

#include <string>
#include <vector>

#include "evaluator/evaluation.h"
#include "evaluator/runner_session.h"

namespace ptxbench {

/// Starts the baseline's runner (`launch`: the candidate's, less what it reads) and, with a launch
/// probe to time, the probe's. Called on the evaluation's thread: a runner dies with the thread
/// that started it.
void start_trusted_runners(const EvalInputs& in, EvalRunners& runners, HostState& host, const RunnerLaunch& launch);

/// With TimingPolicy::runner_l2_flush (experimental, off), both runners overwrite one shared buffer
/// of 2 × L2 in their own context before every call: the worker's own flush guarantees cold inputs
/// whatever a runner does, but leaves L2 clean by the time the runner's call starts, which favours
/// some kernels (cuBLASLt by 1.3% on the H200) over others. One buffer for both, so both start
/// with the same lines. Adds it to `setup` and `fds`; a no-op when the policy is off.
void share_flush_buffer(const EvalInputs& in, HostState& host, SetupRequest& setup, std::vector<Fd>& fds);

/// A trusted runner's spans of its timed calls (by call number). Anything amiss is ours.
std::vector<double> trusted_spans(const RunnerReply& report, const std::vector<uint64_t>& calls, const std::string& name);

}  // namespace ptxbench

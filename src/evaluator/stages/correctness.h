// The correctness stage: the candidate's session runner is started and set up with the workload's
// shared buffers, and runs options.correctness_trials calls, each on fresh inputs with poisoned
// outputs, checked in full against the reference. With timing on, the trusted runners start here
// too (their setup overlaps these calls).
#pragma once

#include <vector>

#include "evaluator/evaluation.h"

namespace ptxbench {

struct CorrectnessOutcome : StageOutcome<CorrectnessSection> {
  double slowest_call_us = 0.0;  ///< by the worker's clock: the timing stage's call budget grows with it
};

CorrectnessOutcome correctness(const EvalInputs& in, EvalRunners& runners, HostState& host);

}  // namespace ptxbench

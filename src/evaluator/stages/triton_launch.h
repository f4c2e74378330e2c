// A Triton candidate's launch-path allowance for this evaluation (docs/triton.md, "What the timing
// means for a Triton candidate"). While the GPU's calibration wants measurements, the launch probe
// is timed as the candidate will be: the policy's trials of warm-up and timed calls, each call
// prepared by the worker like the candidate's (fresh inputs, poisoned outputs, cold L2, on the
// candidate's side) and alternating with the baseline's calls, whose gaps calibrate the overhead;
// the probe's excess (the median of host − span over its timed calls, less that overhead) joins the
// calibration. Runs under the timing stage's exclusive hold of the GPU. Anything amiss is ours
// (the probe and its runner are trusted): EnvironmentError, so INFRA_ERROR.
#pragma once

#include "evaluator/stages/timing_trials.h"

namespace ptxbench {

LaunchAllowanceRecord triton_launch_allowance(TimingRun& run);

}  // namespace ptxbench

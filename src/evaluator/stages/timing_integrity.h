// The timing stage's checks over the whole evaluation, after its trials: the host bound's charge,
// the kernels' origin, the profile against the timed calls, and the baseline against this GPU's
// calibration (docs/verdict.md, "Measurement integrity").
#pragma once

#include <optional>
#include <string>

#include "evaluator/stages/runtime_sass.h"
#include "evaluator/stages/timing_trials.h"

namespace ptxbench {

/// The host bound over every trial: the excess beyond the slack (and a Triton candidate's launch
/// allowance) is charged to every timed call. Returns the note for the verdict's message (empty:
/// nothing was charged).
std::string charge_host_clock(TimingRun& run, double launch_allowance_us);

/// Every kernel of the timed calls is the candidate's own, and the profiled call launched what the
/// timed calls did (what the runtime-SASS counts describe must be what was timed).
std::optional<Failure> check_timed_kernels(TimingRun& run, const std::optional<ProfileSeen>& profile);

/// Whether the profile's claims hold for the timed calls (timing/profile_binding.h): the reason
/// they are void, if they are.
std::optional<std::string> bind_profile_claims(TimingRun& run, const std::optional<ProfileSeen>& profile, double timed_us);

/// The baseline against this GPU's calibration: slower beyond the margin is the GPU's problem (or
/// work someone left on it), never a bigger speedup.
std::optional<Failure> judge_baseline(TimingRun& run, double baseline_median_us);

}  // namespace ptxbench

// The timing stage (docs/verdict.md, "Timing method" and "Measurement integrity"): the trials
// (stages/timing_trials.h), then the checks over the whole evaluation (stages/timing_integrity.h)
// and the summary: the candidate's and the baseline's times, and the speedup. Runs with the GPU
// alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evaluator/evaluation.h"
#include "evaluator/stages/runtime_sass.h"

namespace ptxbench {

struct TimingOutcome : StageOutcome<TimingSection> {
  std::vector<TrialRecord> trials;  ///< its full and failed spot checks: they join the correctness section's
  std::string host_clock_note;      ///< set when the calls were charged the worker's clock
  std::optional<std::string> claims_void;  ///< why the profile's target-instruction claims are not credited
  std::optional<double> candidate_us, baseline_us, speedup;
  std::optional<std::string> baseline_name;
};

/// `slowest_call_us`: the slowest correctness call by the worker's clock; `profile`: what the
/// runtime-SASS stage's profile saw, when one ran.
TimingOutcome timing(const EvalInputs& in, EvalRunners& runners, HostState& host, double slowest_call_us,
                     const std::optional<ProfileSeen>& profile);

}  // namespace ptxbench

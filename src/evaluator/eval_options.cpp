#include "evaluator/eval_options.h"

namespace ptxbench {

EvalOptionsRecord EvalOptions::record() const {
  EvalOptionsRecord r;
  r.device = device;
  r.correctness_trials = correctness_trials;
  r.tolerance = tolerance;
  r.timing = policy_record(timing);
  r.sanitize = sanitize;
  r.sanitize_runs = sanitize_runs;
  r.sanitize_timeout_s = sanitize_timeout_s;
  r.profile = profile;
  r.sass_tool = sass_tool;
  r.profile_always = profile_always;
  r.profile_timeout_s = profile_timeout_s;
  r.measure_time = measure_time;
  r.call_timeout_s = call_timeout_s;
  r.trial_timeout_s = trial_timeout_s;
  r.compile_timeout_s = compile.timeout_s;
  r.shared_gpu = !gpu_lock.empty();
  r.state_budget_fraction = state_budget_fraction;
  r.compare_threads = compare_threads;
  return r;
}

}  // namespace ptxbench

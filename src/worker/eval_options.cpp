#include "worker/eval_options.h"

namespace ptxbench {

ordered_json EvalOptions::to_json() const {
  return {{"device", device},
          {"correctness_trials", correctness_trials},
          {"tolerance", ptxbench::to_json(tolerance)},
          {"timing", timing.to_json()},
          {"sanitize", sanitize},
          {"sanitize_runs", sanitize_runs},
          {"sanitize_timeout_s", sanitize_timeout_s},
          {"profile", profile},
          {"sass_tool", sass_tool},
          {"profile_always", profile_always},
          {"profile_timeout_s", profile_timeout_s},
          {"measure_time", measure_time},
          {"call_timeout_s", call_timeout_s},
          {"trial_timeout_s", trial_timeout_s},
          {"compile_timeout_s", compile.timeout_s},
          {"shared_gpu", !gpu_lock.empty()},
          {"state_budget_fraction", state_budget_fraction},
          {"compare_threads", compare_threads}};
}

}  // namespace ptxbench

#include "verdict/environment.h"

namespace ptxbench {

void to_json(ordered_json& j, const GpuRecord& g) {
  j = {{"device", g.device},
       {"name", g.name},
       {"compute_capability", g.compute_capability},
       {"sm_count", g.sm_count},
       {"l2_bytes", g.l2_bytes},
       {"memory_bytes", g.memory_bytes},
       {"cuda_driver", g.cuda_driver},
       {"cuda_runtime", g.cuda_runtime}};
}

void from_json(const ordered_json& j, GpuRecord& g) {
  require_json_object(j);
  read_field(j, "device", g.device);
  read_field(j, "name", g.name);
  read_field(j, "compute_capability", g.compute_capability);
  read_field(j, "sm_count", g.sm_count);
  read_field(j, "l2_bytes", g.l2_bytes);
  read_field(j, "memory_bytes", g.memory_bytes);
  read_field(j, "cuda_driver", g.cuda_driver);
  read_field(j, "cuda_runtime", g.cuda_runtime);
}

void to_json(ordered_json& j, const EvalOptionsRecord& o) {
  j = {{"device", o.device},
       {"correctness_trials", o.correctness_trials},
       {"tolerance", o.tolerance},
       {"timing", o.timing},
       {"sanitize", o.sanitize},
       {"sanitize_runs", o.sanitize_runs},
       {"sanitize_timeout_s", o.sanitize_timeout_s},
       {"profile", o.profile}};
  if (o.sass_tool) j["sass_tool"] = to_string(*o.sass_tool);
  write_optional(j, "profile_always", o.profile_always);
  j["profile_timeout_s"] = o.profile_timeout_s;
  j["measure_time"] = o.measure_time;
  j["call_timeout_s"] = o.call_timeout_s;
  j["trial_timeout_s"] = o.trial_timeout_s;
  j["compile_timeout_s"] = o.compile_timeout_s;
  write_optional(j, "shared_gpu", o.shared_gpu);
  write_optional(j, "state_budget_fraction", o.state_budget_fraction);
  write_optional(j, "compare_threads", o.compare_threads);
}

void from_json(const ordered_json& j, EvalOptionsRecord& o) {
  require_json_object(j);
  read_field(j, "device", o.device);
  read_field(j, "correctness_trials", o.correctness_trials);
  read_field(j, "tolerance", o.tolerance);
  read_field(j, "timing", o.timing);
  read_field(j, "sanitize", o.sanitize);
  read_field(j, "sanitize_runs", o.sanitize_runs);
  read_field(j, "sanitize_timeout_s", o.sanitize_timeout_s);
  read_field(j, "profile", o.profile);
  o.sass_tool.reset();
  read_enum(j, "sass_tool", o.sass_tool, parse_sass_tool);
  read_field(j, "profile_always", o.profile_always);
  read_field(j, "profile_timeout_s", o.profile_timeout_s);
  read_field(j, "measure_time", o.measure_time);
  read_field(j, "call_timeout_s", o.call_timeout_s);
  read_field(j, "trial_timeout_s", o.trial_timeout_s);
  read_field(j, "compile_timeout_s", o.compile_timeout_s);
  read_field(j, "shared_gpu", o.shared_gpu);
  read_field(j, "state_budget_fraction", o.state_budget_fraction);
  read_field(j, "compare_threads", o.compare_threads);
}

void to_json(ordered_json& j, const Environment& e) {
  j = {{"gpu", e.gpu}, {"ptxbench_version", e.ptxbench_version}, {"nvcc", e.nvcc}, {"options", e.options}};
  write_optional(j, "sandbox", e.sandbox);
  write_optional(j, "cpu_affinity", e.cpu_affinity);
  write_optional(j, "language", e.language);
  write_optional(j, "python", e.python);
  write_optional(j, "torch", e.torch);
  write_optional(j, "triton", e.triton);
}

void from_json(const ordered_json& j, Environment& e) {
  require_json_object(j);
  read_field(j, "gpu", e.gpu);
  read_field(j, "ptxbench_version", e.ptxbench_version);
  read_field(j, "nvcc", e.nvcc);
  read_field(j, "options", e.options);
  read_field(j, "sandbox", e.sandbox);
  read_field(j, "cpu_affinity", e.cpu_affinity);
  read_field(j, "language", e.language);
  read_field(j, "python", e.python);
  read_field(j, "torch", e.torch);
  read_field(j, "triton", e.triton);
}

}  // namespace ptxbench

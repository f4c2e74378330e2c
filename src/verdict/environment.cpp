#include "verdict/environment.h"

namespace ptxbench {

void json_fields(JsonIo& io, GpuRecord& g) {
  io("device", g.device);
  io("name", g.name);
  io("compute_capability", g.compute_capability);
  io("sm_count", g.sm_count);
  io("l2_bytes", g.l2_bytes);
  io("memory_bytes", g.memory_bytes);
  io("cuda_driver", g.cuda_driver);
  io("cuda_runtime", g.cuda_runtime);
}

void json_fields(JsonIo& io, EvalOptionsRecord& o) {
  io("device", o.device);
  io("correctness_trials", o.correctness_trials);
  io("tolerance", o.tolerance);
  io("timing", o.timing);
  io("sanitize", o.sanitize);
  io("sanitize_runs", o.sanitize_runs);
  io("sanitize_timeout_s", o.sanitize_timeout_s);
  io("profile", o.profile);
  io.name("sass_tool", o.sass_tool, parse_sass_tool);
  io("profile_always", o.profile_always);
  io("profile_timeout_s", o.profile_timeout_s);
  io("measure_time", o.measure_time);
  io("call_timeout_s", o.call_timeout_s);
  io("trial_timeout_s", o.trial_timeout_s);
  io("compile_timeout_s", o.compile_timeout_s);
  io("shared_gpu", o.shared_gpu);
  io("state_budget_fraction", o.state_budget_fraction);
  io("compare_threads", o.compare_threads);
}

void json_fields(JsonIo& io, Environment& e) {
  io("gpu", e.gpu);
  io("ptxbench_version", e.ptxbench_version);
  io("nvcc", e.nvcc);
  io("options", e.options);
  io("sandbox", e.sandbox);
  io("cpu_affinity", e.cpu_affinity);
  io("language", e.language);
  io("python", e.python);
  io("torch", e.torch);
  io("triton", e.triton);
}

}  // namespace ptxbench

// The verdict's environment: the GPU, the versions and the options an evaluation ran with.
#pragma once

#include <optional>
#include <string>

#include "sass/sass_tool.h"
#include "verdict/correctness.h"
#include "verdict/timing_section.h"

namespace ptxbench {

struct GpuRecord {
  int device = 0;
  std::string name;                ///< "NVIDIA H200"
  std::string compute_capability;  ///< "9.0"
  int sm_count = 0;
  long l2_bytes = 0;
  long memory_bytes = 0;
  int cuda_driver = 0;
  int cuda_runtime = 0;
};
void json_fields(JsonIo& io, GpuRecord& g);

/// The evaluation's options as recorded (evaluator/eval_options.h). The optional ones were added
/// after the first stored verdicts and are absent there.
struct EvalOptionsRecord {
  int device = 0;
  int correctness_trials = 0;
  Tolerance tolerance;
  TimingPolicyRecord timing;
  bool sanitize = false;
  int sanitize_runs = 0;
  double sanitize_timeout_s = 0.0;
  bool profile = false;
  std::optional<SassTool> sass_tool;
  std::optional<bool> profile_always;
  double profile_timeout_s = 0.0;
  bool measure_time = false;
  double call_timeout_s = 0.0;
  double trial_timeout_s = 0.0;
  double compile_timeout_s = 0.0;
  std::optional<bool> shared_gpu;
  std::optional<double> state_budget_fraction;
  std::optional<unsigned> compare_threads;
};
void json_fields(JsonIo& io, EvalOptionsRecord& o);

struct Environment {
  GpuRecord gpu;
  std::string ptxbench_version;
  std::string nvcc;  ///< `nvcc --version`
  EvalOptionsRecord options;
  /// What the runner's sandbox enforced on this host (sandbox/sandbox_policy.h); a host without
  /// the permissions gets a weaker one, and a report can say so.
  std::optional<ordered_json> sandbox;
  /// The CPUs the worker and its runners ran on (gpu/cpu_affinity.h).
  std::optional<std::string> cpu_affinity;
  /// The candidate's language ("cuda", "triton"); absent in verdicts from before Triton.
  std::optional<std::string> language;
  /// A Triton candidate's runtime: the Python, torch and Triton versions that built and ran it.
  std::optional<std::string> python, torch, triton;
};
void json_fields(JsonIo& io, Environment& e);

}  // namespace ptxbench

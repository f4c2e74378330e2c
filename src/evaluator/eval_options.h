// The options of one evaluation (trials, tolerance, timing policy, stage switches, time limits),
// with named defaults; shared by the evaluator, the CLI and the service's requests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/fs.h"
#include "common/json_check.h"
#include "compile/compiler.h"
#include "sass/sass_tool.h"
#include "sandbox/host_paths.h"
#include "timing/call_integrity.h"
#include "timing/timing_policy.h"
#include "verdict/correctness.h"
#include "verdict/environment.h"

namespace ptxbench {

struct EvalOptions {
  int device = 0;
  std::optional<uint64_t> seed;  ///< unset: a random seed, recorded in the verdict
  int correctness_trials = 3;    ///< orig: ≥ 3, fresh inputs each
  Tolerance tolerance;
  TimingPolicy timing;
  bool sanitize = true;
  int sanitize_runs = 2;  ///< orig: 2
  double sanitize_timeout_s = 120.0;
  bool profile = true;  ///< runtime SASS counts (target-instruction verdict)
  /// ncu: Nsight Compute (the default). cupti: CUPTI SASS metrics inside the runner
  /// (sass/pc_counts.h), experimental: on CUPTI 13.0 it records only the first kernel launched,
  /// which makes every evaluation INFRA_ERROR, never a wrong verdict (results/runtime_sass_tools.md).
  /// Trusted prebuilt libraries have no cubin listing to map offsets with and always use ncu.
  SassTool sass_tool = SassTool::ncu;
  /// Profile even a cubin without mechanism opcodes (comparing the tools; the verdict is the same).
  bool profile_always = false;
  double profile_timeout_s = 300.0;
  bool measure_time = true;
  double startup_timeout_s = 60.0;  ///< runner start, library load, IPC mapping
  double call_timeout_s = 30.0;     ///< one correctness call
  double trial_timeout_s = 180.0;   ///< one timing trial (warm-ups + timed calls)
  CompileOptions compile;
  /// The runner's sandbox (docs/sandbox.md) and the integrity checks of the timing (docs/verdict.md).
  RunnerSandboxOptions sandbox;
  IntegrityPolicy integrity;
  fs::path scratch_root;    ///< empty: cache_root()/scratch (never under /tmp: see docs/sandbox.md)
  std::string runner_path;  ///< empty: ptxbench-runner beside this executable
  std::string gpu_lock;     ///< lock file shared by the workers of this GPU (worker/gpu_lock.h); empty: none
  /// Cached workload states (inputs, references, baselines) may hold this share of the GPU's
  /// memory; least recently used ones are dropped beyond it (worker/state_budget.h).
  double state_budget_fraction = 0.5;
  /// Host threads comparing an output with its reference (0: one per core, at most 16). Workers
  /// sharing a host get their share, so comparisons do not crowd each other out.
  unsigned compare_threads = 0;

  /// The options as the verdict records them (environment.options).
  [[nodiscard]] EvalOptionsRecord record() const;
};

}  // namespace ptxbench

// The evaluation pipeline of DESIGN §4, in order: compile → static SASS → sanitize → correctness →
// runtime SASS → timing. Each stage can end the evaluation with its status; the verdict records
// every stage that ran. The evaluator is the trusted worker: candidate code runs only in
// sandboxed runner processes that it starts and kills.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "compile/compiler.h"
#include "definitions/catalog.h"
#include "gpu/activity_recorder.h"
#include "gpu/l2_flush.h"
#include "timing/timing_policy.h"
#include "verdict/correctness.h"
#include "verdict/verdict.h"
#include "worker/workload_state.h"

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
  bool profile = true;  ///< runtime SASS through ncu
  double profile_timeout_s = 300.0;
  bool measure_time = true;
  double startup_timeout_s = 60.0;  ///< runner start, library load, IPC mapping
  double call_timeout_s = 30.0;     ///< one correctness call
  double trial_timeout_s = 180.0;   ///< one timing trial (warm-ups + timed calls)
  CompileOptions compile;
  fs::path scratch_root;    ///< empty: the system temp folder
  std::string runner_path;  ///< empty: ptxbench-runner beside this executable

  [[nodiscard]] ordered_json to_json() const;
};

class Evaluator {
 public:
  Evaluator(const Catalog& catalog, EvalOptions options);
  ~Evaluator();

  /// Evaluates candidate source for a definition (workload: uuid or "M=8192"; empty = default).
  /// Throws InputError for an unknown definition or workload; every candidate failure is a verdict.
  Verdict evaluate_source(const std::string& definition, const std::string& workload, const std::string& source);

  /// Evaluates a trusted prebuilt library (the A/A self-test): no compile stage, no kernel-origin check.
  Verdict evaluate_trusted_library(const std::string& definition, const std::string& workload,
                                   const fs::path& library);

  [[nodiscard]] const EvalOptions& options() const noexcept { return m_options; }

 private:
  struct Context;
  /// Resolves the workload (InputError for unknown names) and fills the verdict's header.
  void begin(Context& c, const std::string& definition, const std::string& workload) const;
  Verdict run_stages(Context& c);
  bool stage_sanitize(Context& c);
  bool stage_correctness(Context& c);
  bool stage_runtime_sass(Context& c);
  bool stage_timing(Context& c);
  WorkloadState& state_for(const ResolvedWorkload& w);
  const Catalog& m_catalog;
  EvalOptions m_options;
  Compiler m_compiler;
  std::map<std::string, std::unique_ptr<WorkloadState>> m_states;
  std::unique_ptr<L2Flusher> m_flusher;
  std::unique_ptr<ActivityRecorder> m_recorder;
};

}  // namespace ptxbench

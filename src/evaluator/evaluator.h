// The evaluation pipeline of docs/design.md §4, in order: compile → static SASS → sanitize → correctness →
// runtime SASS → timing. Each stage can end the evaluation with its status; the verdict records
// every stage that ran. The evaluator is the trusted worker: candidate code runs only in
// sandboxed runner processes that it starts and kills.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>

#include "compile/compiler.h"
#include "compile/triton_build.h"
#include "compile/triton_check.h"
#include "evaluator/eval_options.h"
#include "definitions/catalog.h"
#include "gpu/activity_recorder.h"
#include "gpu/l2_flush.h"
#include "gpu/shared_allocation.h"
#include "timing/timing_policy.h"
#include "verdict/correctness.h"
#include "verdict/verdict.h"
#include "evaluator/state_budget.h"
#include "evaluator/workload_state.h"

namespace ptxbench {

struct RunnerLaunch;

/// What Evaluator::build_triton_source did: `built` when the static checks and the build pass
/// passed; the verdict's compile and static_sass sections hold the result, and its status and
/// message say what failed (a built candidate's verdict is no evaluation: its status means nothing).
struct TritonBuildOnly {
  bool built = false;
  Verdict verdict;
};

class Evaluator {
 public:
  Evaluator(const Catalog& catalog, EvalOptions options);
  ~Evaluator();

  /// Evaluates candidate source for a definition (workload: uuid or "M=8192"; empty = default).
  /// Throws InputError for an unknown definition or workload; every candidate failure is a verdict.
  /// `options` replaces the evaluator's defaults for this evaluation (compile options excepted).
  /// `language`: a CUDA file (.cu) or a Triton one (.py, docs/triton.md).
  Verdict evaluate_source(const std::string& definition, const std::string& workload, const std::string& source,
                          const std::optional<EvalOptions>& options = std::nullopt,
                          CandidateLanguage language = CandidateLanguage::cuda);

  /// A Triton candidate's compile stage as an evaluation runs it on this GPU host: the static
  /// checks, the build pass on the workload's tensors (Triton compiles every kernel for the GPU),
  /// the static SASS of the cubins; nothing runs after it (`ptxbench compile FILE.py --definition D`).
  TritonBuildOnly build_triton_source(const std::string& definition, const std::string& workload, const std::string& source);

  /// Evaluates a trusted prebuilt library (the A/A self-test): no compile stage, no kernel-origin check.
  Verdict evaluate_trusted_library(const std::string& definition, const std::string& workload,
                                   const fs::path& library);

  [[nodiscard]] const EvalOptions& options() const noexcept { return m_options; }

 private:
  struct Context;
  /// Resolves the workload (InputError for unknown names) and fills the verdict's header.
  void begin(Context& c, const std::string& definition, const std::string& workload,
             const std::optional<EvalOptions>& options) const;
  Verdict run_stages(Context& c);
  /// A Triton candidate's static checks (the compile section); false: the verdict is given.
  bool check_triton(Context& c, const std::string& source);
  /// A Triton candidate's build pass on the GPU (docs/triton.md) and the static SASS of its cubins.
  bool stage_triton_build(Context& c);
  bool stage_sanitize(Context& c);
  bool stage_correctness(Context& c);
  void baseline_starting(Context& c, const RunnerLaunch& launch);
  /// A Triton candidate's launch-path calibration (docs/triton.md, "What the timing means for a
  /// Triton candidate"): whether this evaluation times the probe (and its build), the probe's
  /// runner, and the allowance its host bound gets.
  void plan_triton_launch(Context& c, const ordered_json& tensors);
  void launch_probe_starting(Context& c, RunnerLaunch launch);
  LaunchAllowanceRecord triton_launch_allowance(Context& c, const std::function<RunnerReply(const RunnerRequest&)>& ask_baseline,
                                                double call_budget_s);
  void share_flush_buffer(const Context& c, SetupRequest& setup, std::vector<Fd>& fds);
  bool stage_runtime_sass(Context& c);
  bool stage_timing(Context& c);
  WorkloadState& state_for(const ResolvedWorkload& w);
  const Catalog& m_catalog;
  EvalOptions m_options;
  Compiler m_compiler;
  std::unique_ptr<TritonBuilder> m_triton_builder;  ///< made at the first Triton candidate
  std::map<std::string, std::unique_ptr<WorkloadState>> m_states;
  std::unique_ptr<StateBudget> m_budget;
  std::unique_ptr<L2Flusher> m_flusher;
  std::unique_ptr<SharedAllocation> m_runner_flush;  ///< the runners' common L2 flush buffer
  bool m_profile_needs_root = false;  ///< ncu found the performance counters reserved for administrators
  std::set<std::string> m_ncu_refused;  ///< optional metrics this ncu refused (kNcuOptionalMetrics)
  std::optional<std::string> m_cpu_affinity;  ///< what pinning to the GPU's local CPUs did (once)
};

}  // namespace ptxbench

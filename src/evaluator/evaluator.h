// The evaluation pipeline of docs/design.md §4, in order: compile → static SASS → (a Triton
// candidate's build pass) → sanitize → correctness → runtime SASS → timing. Each stage is a
// function in evaluator/stages/ from the evaluation's inputs to its section or a failure that ends
// the evaluation with its status; the evaluator runs them in order (the scheduler holds the GPU),
// and records every stage that ran in the verdict. The evaluator is the trusted worker: candidate
// code runs only in sandboxed runner processes that it starts and kills.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "compile/compiler.h"
#include "compile/triton_build.h"
#include "compile/triton_check.h"
#include "evaluator/eval_options.h"
#include "definitions/catalog.h"
#include "verdict/verdict.h"
#include "evaluator/state_budget.h"
#include "evaluator/workload_state.h"

namespace ptxbench {

struct HostState;

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

  /// The compile stage alone, as evaluate_source runs it, touching no GPU (a service's check
  /// worker): the verdict when the candidate fails it (COMPILE_ERROR, BANNED_API, ABI_ERROR),
  /// nullopt when it passes. A CUDA candidate's build stays in the compile cache for the GPU worker.
  std::optional<Verdict> check_source(const std::string& definition, const std::string& workload, const std::string& source,
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
  struct Evaluation;
  /// Resolves the workload (InputError for unknown names) and fills the verdict's header.
  void begin(Evaluation& e, const std::string& definition, const std::string& workload,
             const std::optional<EvalOptions>& options) const;
  /// A CUDA candidate's compile and static-SASS stages; false: the verdict is given.
  bool compile(Evaluation& e, const std::string& source);
  /// A Triton candidate's static checks; false: the verdict is given.
  bool check(Evaluation& e, const std::string& source) const;
  /// begin, then the compile stage of the candidate's language: what the full evaluation and the
  /// check lane share, so their compile-stage verdicts cannot part; false: the verdict is given.
  bool begin_and_compile(Evaluation& e, const std::string& definition, const std::string& workload,
                         const std::string& source, const std::optional<EvalOptions>& options, CandidateLanguage language);
  /// The GPU stages, in order, and the verdict's conclusion; anything thrown is ours (INFRA_ERROR).
  Verdict run_stages(Evaluation& e);
  /// The device, the environment and the scratch folder; false: the verdict is given.
  bool prepare(Evaluation& e);
  /// A Triton candidate's build pass on the GPU and the static SASS of its cubins; false: the verdict is given.
  bool build_triton(Evaluation& e);
  /// Sanitize, correctness, runtime SASS (shared), timing (alone); false: the verdict is given.
  bool run_gpu_stages(Evaluation& e);
  /// Pins this process to the GPU's local CPUs, once, before any runner starts (they inherit it).
  const std::string& cpu_affinity(int device);
  WorkloadState& state_for(const ResolvedWorkload& w);
  const Catalog& m_catalog;
  EvalOptions m_options;
  Compiler m_compiler;
  std::unique_ptr<TritonBuilder> m_triton_builder;  ///< made at the first Triton candidate
  std::map<std::string, std::unique_ptr<WorkloadState>> m_states;
  std::unique_ptr<StateBudget> m_budget;
  std::unique_ptr<HostState> m_host;
  std::optional<std::string> m_cpu_affinity;  ///< what pinning to the GPU's local CPUs did (once)
};

}  // namespace ptxbench

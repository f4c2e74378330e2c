// The records one evaluation's stages share (docs/design.md §4). A stage is a function from what it
// reads to its outcome: its verdict section, or a failure that ends the evaluation. It never writes
// the verdict; the evaluator does. What stages read is fixed before the first GPU stage
// (EvalInputs); what the GPU stages share is the evaluation's runners and device state
// (EvalRunners); what the evaluator keeps between evaluations for them is HostState.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/fs.h"
#include "compile/triton_build.h"
#include "definitions/workload.h"
#include "evaluator/eval_options.h"
#include "evaluator/triton_launch_calibration.h"
#include "evaluator/workload_state.h"
#include "gpu/l2_flush.h"
#include "gpu/shared_allocation.h"
#include "sass/mma_coverage.h"
#include "sass/sass_listing.h"
#include "verdict/correctness.h"
#include "verdict/verdict.h"

namespace ptxbench {

class RunnerSession;

/// Why a stage ended the evaluation: the verdict's status and message.
struct Failure {
  Status status;
  std::string message;
};

/// A stage's result. `Section` is its verdict section (set when it recorded one).
template <class Section>
struct StageOutcome {
  using SectionType = Section;
  std::optional<Section> section;
  std::optional<Failure> failure;

  [[nodiscard]] bool passed() const noexcept { return !failure; }
  /// Ends the stage: `s` and `message` are the verdict's.
  StageOutcome& fail(Status s, std::string message) {
    failure = Failure{s, std::move(message)};
    return *this;
  }
};

/// A Triton candidate's launch-path allowance (docs/triton.md): the calibration's key, and, while
/// the GPU's calibration wants measurements, the launch probe's build.
struct TritonLaunchPlan {
  TritonLaunchKey key;
  std::optional<TritonBuildResult> probe;
};

/// What the compile stage (or a Triton candidate's build pass) hands to every later stage.
struct CandidateBuild {
  fs::path library;
  std::set<std::string> kernels;  ///< the candidate's own kernel entry points (cubin symbols)
  PcOpcodes listing;              ///< the cubin's instructions by offset (static SASS)
  std::map<std::string, std::vector<MmaShape>> mma_shapes;  ///< per kernel, from the static listing
  std::optional<bool> static_mechanism_opcodes;  ///< unset: no static listing (cuobjdump missing)
  bool trusted = false;  ///< a trusted prebuilt library (the A/A self-test): no kernel-origin check
  bool triton = false;   ///< a Triton candidate: `library` is its shim (docs/triton.md)
  std::vector<fs::path> python_dirs;  ///< what its runners must see of the Python that runs it
  std::optional<TritonLaunchPlan> launch;
};

/// What every GPU stage reads: fixed before the first of them.
struct EvalInputs {
  EvalOptions options;  ///< this evaluation's options (the evaluator's defaults, or the request's)
  Tolerance tolerance;  ///< options.tolerance with the definition's own fields over it
  ResolvedWorkload workload;
  uint64_t seed = 0;
  CandidateBuild build;
  fs::path scratch;    ///< the evaluation's scratch folder (not under /tmp: runners see a private one)
  fs::path spec_file;  ///< the workload's tensors as the runner's `once` command reads them
  std::string gpu_name;
  std::string calibration_key;  ///< the physical GPU its calibrations belong to (calibration_gpu_key)

  /// What a runner of this candidate sees read-only: its build folder (and the Python of a Triton one).
  [[nodiscard]] std::vector<fs::path> readable() const;
  /// Whether the runtime-SASS stage launches a tool (ncu or CUPTI). What runs is a subset of the
  /// cubin: with no wgmma/TMA/tcgen05 opcode in it, none can run, so no profile is needed.
  [[nodiscard]] bool runs_sass_tool() const;
};

/// A runner of ours, set up: the one that times the baseline (`name`: the baseline's, as it
/// reported it), or the one that times the Triton launch probe. Neither ever loads candidate code.
struct TrustedRunner {
  std::unique_ptr<RunnerSession> session;
  std::string name;
};

/// A trusted runner that starts in the background (its setup overlaps the correctness stage).
struct PendingRunner {
  std::future<TrustedRunner> starting;
  std::optional<TrustedRunner> ready;

  [[nodiscard]] bool started() const noexcept { return starting.valid() || ready.has_value(); }
  /// Waits for it; `what` names it in the EnvironmentError of a runner that failed to start.
  TrustedRunner& get(const std::string& what);
};

/// The runners and device state the GPU stages share within one evaluation.
struct EvalRunners {
  WorkloadState* state = nullptr;
  std::unique_ptr<RunnerSession> candidate;  ///< the candidate's session runner (correctness, timing)
  uint64_t next_call = 0;                    ///< its call numbers
  std::optional<ordered_json> sandbox;       ///< its sandbox report, for the verdict's environment
  PendingRunner baseline;
  uint64_t next_baseline_call = 0;
  std::unique_ptr<TempDir> probe_scratch;
  PendingRunner probe;

  EvalRunners();
  ~EvalRunners();
  EvalRunners(EvalRunners&&) noexcept;
  EvalRunners& operator=(EvalRunners&&) noexcept;
};

/// What the evaluator keeps between evaluations for its stages.
struct HostState {
  bool profile_needs_root = false;  ///< ncu found the performance counters reserved for administrators
  std::set<std::string> ncu_refused;  ///< optional metrics this ncu refused (kNcuOptionalMetrics)
  std::unique_ptr<L2Flusher> flusher;
  std::unique_ptr<SharedAllocation> runner_flush;  ///< the runners' common L2 flush buffer
};

}  // namespace ptxbench

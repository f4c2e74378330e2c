// Wrong→fixed kernel pairs (fixit data) and correct kernels (kernelgen data) from source
// trajectories (docs/design.md §9, issue 19; docs/adaptation.md, "Pairs and kernels").
//
// A pair lives within ONE trajectory: a failed turn and the first later turn of the same trajectory
// that is PASSED and target-instruction correct (the paper's rule: an executed wgmma/TMA/tcgen05).
// The first, not the best: it is the fix the model reached from that feedback with the fewest
// intervening turns, so the reasoning has the shortest way to explain; a failed turn with no such
// later turn gives no pair. Several failed turns before the same fix each give a pair.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapt/turn_selection.h"

namespace ptxbench {

/// One wrong→fixed pair, self-contained (the record builder needs nothing else).
struct RepairPair {
  std::string run_id;
  int64_t trajectory_id = 0;
  TrajectoryKey key;  ///< definition, workload, prompt tag, index
  std::string system, task;  ///< the trajectory's opening messages

  /// The wrong turn's number: the trajectory's own turn, or for a repair seed its source turn
  /// (selection_turn: 0 when the seed names none).
  int64_t wrong_turn = 0;
  bool wrong_is_seed = false;              ///< the wrong kernel is the trajectory's repair seed
  std::optional<SeedOrigin> wrong_origin;  ///< the seed's source run and turn (a cross-run pair)
  report::TurnLabel wrong_label = report::TurnLabel::other;
  std::string wrong_status;                 ///< the stored status (a verdict status or EXTRACTION_ERROR)
  std::optional<std::string> wrong_sha256;  ///< unset for an extraction error (no candidate)
  std::string wrong_source;                 ///< the candidate ("" for an extraction error)
  std::string wrong_answer;                 ///< the assistant message of the wrong turn
  std::string wrong_feedback;               ///< the feedback the model was given on it

  int64_t fixed_turn = 0;
  std::string fixed_sha256;
  std::string fixed_source;
  std::string fixed_status = "PASSED";
  std::optional<double> fixed_speedup;

  [[nodiscard]] const std::string& definition() const noexcept { return key.definition; }
  /// SHA-256 over the task, the wrong kernel (its hash, or the answer for an extraction error), its
  /// feedback and the fixed kernel's hash: what the record and its reasoning depend on, so equal
  /// pairs (the same failure and fix of the same task, in two trajectories) are kept once.
  [[nodiscard]] std::string pair_hash() const;
};

struct PairCounts {
  int64_t failed_turns = 0;  ///< failed turns offered
  int64_t no_fix = 0;        ///< no later PASSED and target-instruction-correct turn
  int64_t no_feedback = 0;   ///< no stored feedback (cannot be shown as the user's message)
  int64_t same_kernel = 0;   ///< the fix's source equals the wrong one (a flaky verdict, not a repair)
  int64_t slow_fix = 0;      ///< the fix's speedup is not above the rule's min_speedup
  int64_t duplicates = 0;    ///< same pair hash as an earlier pair (the first in canonical order is kept)
  int64_t pairs = 0;         ///< pairs made
  [[nodiscard]] ordered_json to_json() const;
};

struct PairSet {
  std::vector<RepairPair> pairs;  ///< in the failed turns' order
  std::vector<Stratum> strata;    ///< per pair: (definition, wrong label key)
  PairCounts counts;
};

/// What counts as a fix. The default is the paper's: PASSED with its target instructions executed
/// (the original keeps only fixes whose SASS shows wgmma or TMA ran).
struct FixRule {
  bool require_target_instruction = true;
  /// Set: pairs whose fix has no speedup above this are dropped (`slow_fix`), as the paper's
  /// post-balanced set drops fixes at speedup ≤ 0.05.
  std::optional<double> min_speedup;
};

/// The index of the fix of `t.turns[wrong_index]`: the first later turn that is PASSED (and, by
/// the rule, target-instruction correct); nullopt when none.
std::optional<std::size_t> next_fix(const SourceTrajectory& t, std::size_t wrong_index, const FixRule& rule = {});

/// A pair for each failed turn that has a fix, stored feedback and a different fixed kernel;
/// deduplicated by pair hash. A repair seed pairs with its trajectory's first fix: with a seed
/// origin, the pair spans two runs (the student's failure, the repairer's fix).
PairSet repair_pairs(const SourceSet& sources, const std::vector<FailedTurn>& failed, const FixRule& rule = {});

/// A PASSED and target-instruction-correct kernel (kernelgen data).
struct CorrectKernel {
  std::string run_id;
  int64_t trajectory_id = 0;
  TrajectoryKey key;
  std::string system, task;
  int64_t turn = 0;
  std::string sha256;
  std::string source;
  std::string status = "PASSED";
  std::optional<double> speedup;

  [[nodiscard]] const std::string& definition() const noexcept { return key.definition; }
  /// SHA-256 over the definition and the candidate hash: one record per kernel and definition.
  [[nodiscard]] std::string kernel_hash() const;
};

struct KernelCounts {
  int64_t correct_turns = 0;  ///< PASSED and target-instruction correct, within the turn range
  int64_t duplicates = 0;     ///< same definition and candidate hash as an earlier one (the first in canonical order is kept)
  int64_t kernels = 0;
  [[nodiscard]] ordered_json to_json() const;
};

struct KernelSet {
  std::vector<CorrectKernel> kernels;  ///< canonical order
  std::vector<Stratum> strata;         ///< per kernel: (definition, "correct")
  KernelCounts counts;
};

/// The PASSED and target-instruction-correct turns numbered turn_from..turn_to (inclusive), deduped
/// by candidate hash within each definition.
KernelSet correct_kernels(const SourceSet& sources, int64_t turn_from, int64_t turn_to);

}  // namespace ptxbench

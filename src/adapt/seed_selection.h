// Repair seeds from a stored run's failures (`ptxbench data seeds`, issue 36): the first link of
// the paper's Fixit chain. A student run's failed turns are chosen by the original PTXBench's rule
// (build_rebalanced_fixit_error_collection.py, docs/adaptation.md "Seeds from failures"):
//   - labels runtime error, kernel timeout, numerical error, compilation error (configurable);
//   - early turns only: the original's 0-based turn < 5, our turns 1..5;
//   - at most N per definition (the paper: 33), apportioned over (label, turn) strata by largest
//     remainder (Hamilton): each stratum gets floor(size·N/total), the slots left go to the
//     largest fractional parts (ties: larger stratum, then stratum order), never more than a
//     stratum holds;
//   - within a stratum the first ones in a stable order (definition, turn, trajectory in canonical
//     order), as the original; with a seed, the first of a seeded permutation instead.
// Each kept turn becomes one line of a repair_from seeds file (docs/agent.md) with its verdict,
// feedback and origin (store, run, trajectory, turn), which a repair run stores with its turn 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapt/turn_selection.h"

namespace ptxbench {

struct SeedRule {
  std::vector<report::TurnLabel> labels = default_failure_labels();
  int64_t turn_from = 1;
  int64_t turn_to = 5;            ///< inclusive: the original's 0-based turns 0..4
  int64_t per_definition = 33;    ///< the paper's cap
  std::optional<uint64_t> seed;   ///< unset: the stable order (the original's); set: a seeded choice
};

/// Largest-remainder apportionment of `total` slots over strata of `sizes` (in stratum order):
/// floor(size·total/Σ), then one more to the largest fractional parts (ties: larger stratum, then
/// earlier), never above a stratum's size. Every stratum whole when Σ ≤ total.
std::vector<int64_t> apportion(const std::vector<int64_t>& sizes, int64_t total);

struct SeedStratum {
  std::string definition;
  std::string label;  ///< label key
  int64_t turn = 0;
  int64_t available = 0;
  int64_t kept = 0;
};

struct SeedSelection {
  std::vector<FailedTurn> kept;  ///< stable order: definition, then turn, then trajectory order
  std::vector<SeedStratum> strata;
  std::vector<std::string> underfilled;  ///< definitions with fewer candidates than the cap
  int64_t candidates = 0;                ///< failed turns that could be seeds
  int64_t no_kernel = 0;                 ///< failed turns without a kernel or feedback (not seeds)
  [[nodiscard]] ordered_json to_json() const;
};

/// Chooses the seeds among the sources' failed turns (model turns only, never a repair seed).
SeedSelection select_seeds(const SourceSet& sources, const SeedRule& rule);

/// One repair_from line for a kept turn: definition, wrong_source, feedback, status, verdict (when
/// stored) and origin {store, run, trajectory, turn, label, workload, prompt_tag, index, model}.
ordered_json seed_line(const SourceSet& sources, const FailedTurn& turn, const std::string& store_path);

}  // namespace ptxbench

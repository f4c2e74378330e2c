// The first stage of fine-tuning data (docs/design.md §9, issue 19): reading stored runs for a recipe (the
// trajectories it may read, never those of a held-out definition), choosing failed turns by label,
// turn and definition, and balancing with a seeded cap per stratum (docs/adaptation.md, "Selection
// and balance").
//
// Determinism. Nothing here depends on the order SQLite returns rows in: trajectories are put in
// their canonical order (run id, definition, workload, prompt tag, index) and turns in turn order
// before any choice; every random choice draws from a std::mt19937_64 seeded by derive_seed(recipe
// seed, purpose), whose output sequence the C++ standard fixes, through our own Fisher-Yates
// shuffle (std::shuffle's use of the engine is left to each standard library).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runs/run_store.h"
#include "common/error.h"
#include "report/metrics.h"

namespace ptxbench {

/// A record or a read of a held-out definition was attempted: a bug or a forged input, never a
/// condition to carry on from.
class HeldOutViolation : public Error {
 public:
  explicit HeldOutViolation(const std::string& message) : Error("held-out guard", message) {}
};

/// Definitions held out from training (the problems a fine-tuned model is evaluated on). Readers of
/// stored runs skip their trajectories unread and the record builders refuse them, so no record of
/// one can be written, whatever else a recipe says.
class HeldOutDefinitions {
 public:
  explicit HeldOutDefinitions(std::vector<std::string> names);
  /// No definition held out (said explicitly where a caller means it).
  static HeldOutDefinitions none() { return HeldOutDefinitions({}); }

  [[nodiscard]] bool contains(std::string_view definition) const;
  [[nodiscard]] const std::vector<std::string>& names() const noexcept { return m_names; }  ///< sorted, unique
  /// Throws HeldOutViolation naming `what` when `definition` is held out.
  void check(std::string_view definition, std::string_view what) const;

 private:
  std::vector<std::string> m_names;
};

/// Which stored trajectories a recipe reads.
struct SourceFilter {
  std::vector<std::string> runs;  ///< exact run ids; each must exist and be a measured run
  /// The problem set: only these definitions' trajectories are read. nullopt: every definition.
  std::optional<std::vector<std::string>> definitions;
  /// Verdicts of the service's fake backend (CPU tests) are refused unless this is set: they are no
  /// GPU measurement and must not end up as training labels by accident.
  bool allow_fake_verdicts = false;
};

/// One stored trajectory as the data builders read it.
struct SourceTrajectory {
  std::string run_id;
  std::string model;               ///< the run's model
  TrajectoryInfo info;
  std::string system, task;        ///< the opening messages (turn 0): system prompt and task
  /// Turn order. A repair trajectory's seed comes first as turn 0 (RunStore::seed_turn: its
  /// kernel, status, feedback and verdict as the model was shown them; no answer, no speedup).
  std::vector<TurnRecord> turns;
  bool seeded = false;                   ///< turns[0] is the repair seed
  std::optional<SeedOrigin> seed_origin; ///< the seed's source turn in another run, when it names one
  std::vector<report::TurnLabel> labels;  ///< per turn: label_for(status, verdict); `other` before a status

  [[nodiscard]] const std::string& definition() const noexcept { return info.key.definition; }
};

/// The canonical order: run id, definition, workload, prompt tag, index.
bool canonical_less(const SourceTrajectory& a, const SourceTrajectory& b);

struct SourceCounts {
  int64_t runs = 0;
  int64_t trajectories_read = 0;
  int64_t held_out_skipped = 0;     ///< trajectories of held-out definitions: never read
  int64_t outside_problem_set = 0;  ///< trajectories of definitions outside the problem set: never read
  [[nodiscard]] ordered_json to_json() const;
};

struct SourceSet {
  std::vector<SourceTrajectory> trajectories;  ///< canonical order
  SourceCounts counts;
};

/// Reads the runs' trajectories in the problem set, in canonical order. A trajectory of a held-out
/// definition is skipped from its listing row alone: its turns and messages are never read.
/// InputError for an unknown or imported run (imported runs carry no kernels), and for a fake
/// verdict unless allowed.
SourceSet read_sources(const RunStore& store, const SourceFilter& filter, const HeldOutDefinitions& held_out);

/// The paper's label name -> label by key ("compilation_error"); InputError listing the keys.
report::TurnLabel parse_label_key(std::string_view key);
/// The failure labels the paper mined: compilation, numerical and runtime errors, and kernel
/// execution timeouts.
std::vector<report::TurnLabel> default_failure_labels();
/// Whether a label can name a failed turn worth repairing: not correct and not INFRA_ERROR (ours).
bool is_failure_label(report::TurnLabel label);

/// Which failed turns may start a pair: any, only repair seeds (turn 0 of a repair trajectory: the
/// paper's Fixit chain, a student's failure repaired by a teacher), or only the model's own turns.
enum class PairSource { all, seeds, trajectories };
std::string to_string(PairSource source);
PairSource parse_pair_source(std::string_view text);

/// The number a turn is selected and reported by: a seed's source turn when it names one (0 for a
/// seed that does not), the turn's own number otherwise.
int64_t selection_turn(const SourceTrajectory& t, std::size_t turn_index);

/// Which failed turns to select.
struct TurnFilter {
  int64_t turn_from = 1;  ///< inclusive, on selection_turn
  int64_t turn_to = std::numeric_limits<int64_t>::max();  ///< inclusive
  std::vector<report::TurnLabel> labels = default_failure_labels();
  PairSource from = PairSource::all;
};

/// A failed turn of a source trajectory.
struct FailedTurn {
  std::size_t source = 0;      ///< index into SourceSet::trajectories
  std::size_t turn_index = 0;  ///< index into that trajectory's turns
  int64_t turn = 0;            ///< selection_turn
  report::TurnLabel label = report::TurnLabel::other;
  std::string definition;
};

/// The judged turns whose label is in the filter and whose number is in its range, in canonical
/// order (trajectory order, then turn).
std::vector<FailedTurn> select_failed_turns(const SourceSet& sources, const TurnFilter& filter);

// ---- balance

/// none: keep everything; pre: cap failed turns per stratum before pairing (the paper's rebalanced
/// collection: the capped failures are what the repairer sees, so a stratum may end with fewer
/// pairs than the cap); post: pair every failed turn, then cap the pairs per stratum (each stratum
/// ends with min(cap, its pairs)). For kernelgen both cap the correct kernels per definition.
enum class BalanceMode { none, pre, post };
std::string to_string(BalanceMode mode);
BalanceMode parse_balance_mode(std::string_view text);

/// What a stratum is: (definition, label) (the default), or the definition alone (the paper's
/// post-balanced set caps pairs per definition).
enum class BalanceStrata { definition_label, definition };
std::string to_string(BalanceStrata strata);
BalanceStrata parse_balance_strata(std::string_view text);
/// Which items of a stratum over the cap are kept: a seeded random choice (the default), or the
/// fastest (highest speedup first; ties in canonical order), as the paper's post-balanced set.
enum class BalanceKeep { random, fastest };
std::string to_string(BalanceKeep keep);
BalanceKeep parse_balance_keep(std::string_view text);

/// A stratum: the definition and the turn label (the wrong turn's for fixit, "correct" for
/// kernelgen), by label key.
struct Stratum {
  std::string definition;
  std::string label;
  auto operator<=>(const Stratum&) const = default;
};

struct StratumCount {
  Stratum stratum;
  int64_t available = 0;
  int64_t kept = 0;
};
ordered_json to_json(const std::vector<StratumCount>& strata);

struct BalanceResult {
  std::vector<std::size_t> kept;      ///< indices into the input, ascending (input order kept)
  std::vector<StratumCount> strata;   ///< by stratum
};

/// Keeps at most `cap` items of each stratum (every item when cap is nullopt). Items are given by
/// their strata, in canonical order; within a stratum over the cap, the kept ones are the first
/// `cap` of a seeded permutation (seed derive_seed(seed, "balance/<definition>/<label>")), so each
/// stratum's choice depends only on its own items and the seed.
BalanceResult balance_strata(const std::vector<Stratum>& item_strata, std::optional<int64_t> cap, uint64_t seed);
/// The same, keeping the items of highest `rank` (ties: the earlier item) in a stratum over the cap.
BalanceResult balance_strata_by_rank(const std::vector<Stratum>& item_strata, std::optional<int64_t> cap,
                                     const std::vector<double>& rank);

/// A seed for one use of the recipe seed: the first 8 bytes (big-endian) of SHA-256 over the seed's
/// decimal text and `purpose`, each length-prefixed.
uint64_t derive_seed(uint64_t seed, std::string_view purpose);
/// A permutation of 0..n-1: Fisher-Yates from the back, j = engine() % (i + 1), with
/// std::mt19937_64(seed). Identical on every platform.
std::vector<std::size_t> seeded_permutation(std::size_t n, uint64_t seed);

}  // namespace ptxbench

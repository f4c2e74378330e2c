// A fine-tuning data recipe (docs/design.md §9, issue 19): which stored runs, which problems (and which are
// held out), which turns and labels, how to balance, which teacher writes the reasoning, the
// shuffle seed and the eval split, as one JSON document that `ptxbench data build` turns into a
// dataset folder (docs/adaptation.md, "Recipes").
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "adapt/reasoning_synthesis.h"
#include "adapt/repair_pairs.h"
#include "adapt/sft_records.h"
#include "adapt/turn_selection.h"
#include "llm/model_client.h"
#include "common/fs.h"
#include "common/json_check.h"

namespace ptxbench {

inline constexpr const char* kAllRuns = "all";         ///< runs: every measured run of the store
inline constexpr const char* kAllProblems = "all";     ///< problem_set: every definition the runs hold
/// problem_set: the paper's five Hopper evaluation definitions (configs/paper_hopper.json).
inline constexpr const char* kPaperHopperSet = "paper-hopper";
const std::vector<std::string>& paper_hopper_definitions();

struct DataRecipe {
  std::string name;
  RecordKind kind = RecordKind::fixit;
  bool all_runs = false;                  ///< "runs": "all"
  std::vector<std::string> runs;          ///< exact run ids (when not all_runs)
  /// The named set ("all", "paper-hopper", or a set of definitions/problem_sets.json such as
  /// "4ops") or "" when problem_set is a list.
  std::string problem_set_name = kAllProblems;
  std::vector<std::string> problem_set;   ///< the definitions of a list (or of a named set other than "all")
  std::vector<std::string> held_out;      ///< never read, never in a record
  int64_t turn_from = 1;                  ///< fixit: the wrong turn; kernelgen: the correct turn
  int64_t turn_to = std::numeric_limits<int64_t>::max();
  std::vector<report::TurnLabel> labels = default_failure_labels();  ///< fixit: the wrong turns' labels
  PairSource pairs_from = PairSource::all;  ///< fixit: which failed turns may start a pair
  FixRule fixes;                            ///< fixit: what counts as the fix of a failed turn
  BalanceMode balance = BalanceMode::none;
  std::optional<int64_t> cap_per_stratum;  ///< set exactly when balance is not none
  BalanceStrata balance_strata = BalanceStrata::definition_label;
  BalanceKeep balance_keep = BalanceKeep::random;
  std::optional<ModelConfig> teacher;      ///< unset: records without reasoning
  ReasoningLimits reasoning;
  uint64_t shuffle_seed = 0;
  double eval_fraction = 0.0;              ///< share of trajectories whose records go to eval.jsonl
  bool allow_fake_verdicts = false;        ///< tests only: accept verdicts of the fake backend
  std::string notes;                       ///< free text, kept in the manifest

  /// The problem set as a filter: nullopt for "all" (held-out definitions are still skipped).
  [[nodiscard]] std::optional<std::vector<std::string>> definitions() const;
  [[nodiscard]] HeldOutDefinitions held_out_set() const { return HeldOutDefinitions(held_out); }
  /// Every field, defaults resolved (a recipe read back from it is the same); copied into the
  /// manifest and hashed.
  [[nodiscard]] ordered_json to_json() const;
  [[nodiscard]] std::string sha256() const;  ///< of to_json().dump()
};

/// Strict: unknown fields, wrong types, bad values, and a held-out definition listed in the
/// problem set are InputError naming `document` and the field.
DataRecipe data_recipe_from_json(const ordered_json& j, const std::string& document = "data recipe");
/// Reads and checks a recipe file (the path names the document in errors).
DataRecipe load_data_recipe(const fs::path& path);

}  // namespace ptxbench

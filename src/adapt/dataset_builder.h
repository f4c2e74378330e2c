// `ptxbench data build`: a recipe and a run store in, a dataset folder out (docs/design.md §9, issue 19;
// docs/adaptation.md):
//   train.jsonl, eval.jsonl   chat records (sft_records.h), seeded split by trajectory, seeded order
//   manifest.json             the recipe and its hash, the selection counts, the record counts, the
//                             share per problem, label, turn and prompt tag, the source runs, the
//                             tool version, and the SHA-256 of each data file
//   composition.html          the shares as self-contained SVG charts (no script, no fetch)
//   dataset_info.json         LLaMA-Factory's dataset registration for the two JSONL files
//   reasoning_cache/          one file per teacher request (reasoning_synthesis.h)
// Deterministic: the same store, recipe and cache give byte-identical files. Nothing time- or
// path-dependent is written into them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "adapt/data_recipe.h"
#include "adapt/dataset_composition.h"
#include "adapt/repair_pairs.h"
#include "runs/run_store.h"

namespace ptxbench {

inline constexpr const char* kDatasetManifestSchema = "ptxbench.sft_dataset";
inline constexpr int kDatasetManifestVersion = 1;

/// A source run of a dataset.
struct PlanRun {
  std::string id, model;
  int64_t trajectories = 0;  ///< trajectories read from it
};

/// What a recipe selects from a store, before any teacher call (`data build --dry-run` prints it).
struct DatasetPlan {
  RecordKind kind = RecordKind::fixit;
  std::vector<PlanRun> runs;      ///< resolved runs, sorted by id
  SourceCounts sources;
  /// Definitions of a listed problem set that no trajectory read belongs to (a typo, or runs that
  /// never attempted them): they contribute nothing.
  std::vector<std::string> missing_definitions;
  int64_t failed_turns = 0;       ///< fixit: failed turns that match the labels and turns
  /// The balance stage's strata: pre: failed turns; post and none: pairs (fixit); kernels (kernelgen).
  std::vector<StratumCount> strata;
  PairCounts pairs;               ///< fixit
  KernelCounts kernels;           ///< kernelgen
  std::vector<RepairPair> fixit;  ///< fixit: the pairs kept, canonical order
  std::vector<CorrectKernel> kernelgen;  ///< kernelgen: the kernels kept, canonical order

  [[nodiscard]] ordered_json to_json() const;  ///< counts only
};

/// Resolves the runs ("all": every measured run, sorted by id), reads the sources (held-out
/// definitions never), selects, pairs and balances as the recipe says.
DatasetPlan plan_dataset(const RunStore& store, const DataRecipe& recipe);

/// The dry run's text: runs, trajectories read and skipped, strata (available and kept), pairs.
std::string describe_plan(const DataRecipe& recipe, const DatasetPlan& plan);

struct BuildOptions {
  /// The teacher; nullptr: make_model_client(*recipe.teacher) when the recipe names one.
  ModelClient* teacher = nullptr;
  /// Told of progress ("reasoning 12/40"); may be empty.
  std::function<void(const std::string&)> progress;
};

struct BuildResult {
  DatasetPlan plan;
  int64_t records = 0, train = 0, eval = 0;
  int64_t reasoning_rejected = 0;  ///< items dropped: the teacher's every answer was refused
  int64_t teacher_calls = 0;       ///< made by this build (0 on a rebuild from the cache)
  int64_t cache_hits = 0;
  ordered_json manifest;
};

/// Builds the dataset folder `out_dir` (created when absent; the files above are replaced, the
/// reasoning cache kept). A teacher call that fails for good propagates; what the teacher answered
/// before stays in the cache for the next run.
BuildResult build_dataset(const RunStore& store, const DataRecipe& recipe, const fs::path& out_dir,
                          const BuildOptions& options = {});

/// `ptxbench data show`: the manifest's summary, and whether each data file still has its hash.
std::string describe_dataset(const fs::path& dir);

}  // namespace ptxbench

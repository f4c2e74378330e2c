// What `ptxbench report` shows, read from a run store: the runs, every trajectory with its turns
// (for the drill-down), the groups (run × model × definition × GPU) with their metrics and the
// provenance of their verdicts (fake backend, evaluation options off their defaults), and the
// token comparisons between runs. All outputs (terminal, CSV, JSON, HTML) render this one struct.
#pragma once

#include <string>
#include <vector>

#include "runs/run_store.h"
#include "report/bootstrap.h"
#include "report/intervals.h"
#include "report/metrics.h"
#include "report/provenance.h"

namespace ptxbench::report {

inline constexpr const char* kPooledDefinition = "(all)";
inline constexpr const char* kUnknownGpu = "-";

struct TrajectoryDetail {
  TrajectoryInfo info;
  std::string model;                 ///< the run's model (or built-in policy name)
  std::string gpu;                   ///< from the verdicts' environment.gpu.name (see metric_definitions "groups")
  std::vector<TurnRecord> records;   ///< every stored turn, as far as it got
  std::vector<TurnLabel> labels;     ///< per record; meaningful for judged records only
  std::vector<bool> judged;          ///< per record: verdict or extraction error stored
  TrajectoryObs obs;                 ///< the reduced form the metrics read
  Provenance provenance;             ///< of its stored verdicts
};

/// The language a run's candidates are written in: its config's `language` ("cuda", "triton";
/// agent/run_config.h), or "cuda" for runs stored without the field (before the Triton track,
/// imported runs).
std::string run_language(const ordered_json& config);
inline constexpr const char* kCudaLanguage = "cuda";

struct RunSummary {
  RunInfo info;
  std::string language = kCudaLanguage;  ///< run_language(info.config)
  int64_t num_turns = 0;  ///< the config's num_turns, else the most turns any trajectory took
  /// The run's condition beyond model and task (run_condition): "-", or e.g. "repair seeds;
  /// notes+kernel (k 3)", so runs of the notes ablation read apart.
  std::string condition;
  std::vector<std::size_t> trajectories;  ///< indexes into Report::trajectories (those the filters keep)
  /// Why the run has no '(all)' row though it spans several definitions ("" otherwise): an imported
  /// run with several experiments of one definition, which a pooled row would mix.
  std::string no_pooled_row;
};

/// What a group's rows are split by beside run x model x GPU.
enum class GroupBy {
  definition,  ///< one row per definition, and an '(all)' row per run x model x GPU (the default)
  tag,         ///< one row per definition x prompt tag, and an '(all)' row per tag (`--by tag`: Table 4)
};
std::string to_string(GroupBy by);

/// What a run's config changes in what the model is shown, beyond the task: trajectories started from
/// repair seeds (`repair_from`) and the retrieved repair notes' mode (`repair_notes`); "-" for none.
std::string run_condition(const ordered_json& config);

struct Group {
  std::string run_id, model, definition, gpu;
  std::string language = kCudaLanguage;  ///< the run's; a language group's key

  std::string tag;                     ///< the prompt tag with GroupBy::tag, else ""
  /// An imported run's experiment (its trajectories' prompt tag: the release's experiment folder),
  /// "" for measured runs and pooled rows: groups of imported runs are split by it (metrics "groups").
  std::string experiment;
  bool pooled = false;                 ///< definition == kPooledDefinition
  std::vector<std::size_t> members;    ///< indexes into Report::trajectories
  GroupMetrics metrics;
  std::vector<BudgetIntervals> intervals;  ///< per metrics.budgets entry: the bootstrap intervals
  Provenance provenance;               ///< of its members' verdicts
};

struct Comparison {
  std::string reference_run, run;
  std::string definition;  ///< or kPooledDefinition
  TokenSummary reference, other;
  TokenRatio ratio;        ///< reference / other
};

/// Which trajectories a report keeps (`report --model/--definition/--tag`): each list, when not
/// empty, keeps the trajectories whose value is on it (exact names). The others are left out of
/// every group, table and the drill-down, as if the runs had not run them.
struct ReportFilters {
  std::vector<std::string> models, definitions, tags;
  [[nodiscard]] bool any() const { return !models.empty() || !definitions.empty() || !tags.empty(); }
  /// "--model a,b --definition c" ("" when none).
  [[nodiscard]] std::string describe() const;
};

/// What fake-backend verdicts do to build_report.
enum class FakeVerdicts {
  refuse,  ///< InputError naming the runs and how many (the default)
  allow,   ///< report them; every output marks them (`ptxbench report --allow-fake`)
};

/// Everything build_report is asked, with the command line's defaults.
struct ReportOptions {
  std::vector<int> budgets = {1, 4, 8};
  FakeVerdicts fake = FakeVerdicts::refuse;
  GroupBy by = GroupBy::definition;
  MissingTurns missing = MissingTurns::not_correct;  ///< the paper's rule unless --carry-forward
  ReportFilters filters;
  BootstrapOptions bootstrap;                        ///< the intervals (intervals.h)
  std::vector<int> pass_k = {1, 4};                  ///< pass@k at these k (each >= 1; k above a group's n: n/a)
};

struct Report {
  std::string store;
  GroupBy by = GroupBy::definition;
  MissingTurns missing = MissingTurns::not_correct;
  ReportFilters filters;
  BootstrapOptions bootstrap;
  std::vector<int> pass_k;
  std::string generated_at;  ///< ISO 8601 UTC
  std::vector<int> budgets;
  std::vector<RunSummary> runs;  ///< in the order asked
  std::vector<TrajectoryDetail> trajectories;
  std::vector<Group> groups;
  /// CUDA-PTX beside Triton: the trajectories of ALL reported runs of one language pooled, per
  /// language x model x definition x GPU, and an '(all)' row per language x model x GPU when that
  /// pools several definitions (run_id ""). The reports show their Fast_p side by side.
  std::vector<Group> language_groups;
  std::vector<Comparison> comparisons;
  Provenance provenance;  ///< of every verdict reported

  /// The reported runs' languages span more than one: the group tables then get a Language column.
  [[nodiscard]] bool several_languages() const;
};

/// The GPU a verdict names (environment.gpu.name), or "".
std::string verdict_gpu(const Verdict& verdict);
/// The tokens of a turn's stored model call (all 0 without one).
TokenCounts tokens_of(const TurnRecord& record);

/// Reads the runs (exact ids or unique prefixes; InputError naming the known ids otherwise), keeps
/// the trajectories the filters name (InputError when a filter value matches none, naming those
/// that exist) and computes every group's metrics and intervals at `options.budgets` (each >= 1).
/// Runs with fake-backend verdicts are an InputError unless `options.fake` is allow.
Report build_report(const RunStore& store, const std::vector<std::string>& runs, const ReportOptions& options);
/// The same with the defaults of ReportOptions but these.
Report build_report(const RunStore& store, const std::vector<std::string>& runs, const std::vector<int>& budgets,
                    FakeVerdicts fake = FakeVerdicts::refuse, GroupBy by = GroupBy::definition);

}  // namespace ptxbench::report

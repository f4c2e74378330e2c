// What `ptxbench report` shows, read from a run store: the runs, every trajectory with its turns
// (for the drill-down), the groups (run × model × definition × GPU) with their metrics, and the
// token comparisons between runs. All outputs (terminal, CSV, JSON, HTML) render this one struct.
#pragma once

#include <string>
#include <vector>

#include "agent/run_store.h"
#include "report/metrics.h"

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
};

struct RunSummary {
  RunInfo info;
  int64_t num_turns = 0;  ///< the config's num_turns, else the most turns any trajectory took
  std::vector<std::size_t> trajectories;  ///< indexes into Report::trajectories
};

struct Group {
  std::string run_id, model, definition, gpu;
  bool pooled = false;                 ///< definition == kPooledDefinition
  std::vector<std::size_t> members;    ///< indexes into Report::trajectories
  GroupMetrics metrics;
};

struct Comparison {
  std::string reference_run, run;
  std::string definition;  ///< or kPooledDefinition
  TokenSummary reference, other;
  TokenRatio ratio;        ///< reference / other
};

struct Report {
  std::string store;
  std::string generated_at;  ///< ISO 8601 UTC
  std::vector<int> budgets;
  std::vector<RunSummary> runs;  ///< in the order asked
  std::vector<TrajectoryDetail> trajectories;
  std::vector<Group> groups;
  std::vector<Comparison> comparisons;
};

/// The GPU a verdict names (environment.gpu.name), or "".
std::string verdict_gpu(const Verdict& verdict);

/// Reads the runs (exact ids or unique prefixes; InputError naming the known ids otherwise) and
/// computes every group's metrics at `budgets` (each >= 1).
Report build_report(const RunStore& store, const std::vector<std::string>& runs, const std::vector<int>& budgets);

}  // namespace ptxbench::report

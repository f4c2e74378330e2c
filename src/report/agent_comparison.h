// An external coding agent's run against our refinement run (issue 20, docs/design.md §10): the paper's
// Table 3 / Table 8 layout (per definition and pooled, the median of per-trajectory best
// instruction-qualified speedups after N evaluation requests, and the ratio of median cumulative
// tokens) and its Figure 14 (the median best speedup reached within a shared per-trajectory token
// budget, with pointwise bootstrap bands), after checking that the two runs can be compared.
// The computation is pure over ComparedTrajectory (tested against hand-computed fixtures);
// compare_agent_runs fills it from a run store through build_report (agent_comparison_checks.h
// says when two runs compare). Every output (agent_comparison_text.h, _export.h, _html.h) states
// the definitions of agent_comparison_definitions().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runs/run_store.h"
#include "common/json_check.h"
#include "report/bootstrap.h"
#include "report/metrics.h"
#include "report/report_data.h"
// The outputs, for the callers that include this header alone (the HTML page is agent_comparison_html.h).
#include "report/agent_comparison_export.h"
#include "report/agent_comparison_text.h"

namespace ptxbench::report {

/// The run config's "policy" of runs an external agent made through `ptxbench mcp` (the value of
/// mcp::kMcpPolicy; report/ does not include mcp/).
inline constexpr const char* kAgentPolicy = "mcp-agent";

inline constexpr const char* kAgentComparisonSchema = "ptxbench.agent_comparison";
inline constexpr int kAgentComparisonSchemaVersion = 1;

/// The instruction rules in the order every per-rule array below keeps them.
inline constexpr std::array<InstructionRule, 3> kComparisonRules = {InstructionRule::paper, InstructionRule::strict,
                                                                    InstructionRule::unrestricted};
std::string rule_key(InstructionRule rule);  ///< "paper", "strict", "unrestricted"

/// A run config's "policy" ("" without one): kAgentPolicy for runs of `ptxbench mcp`.
std::string run_policy(const RunInfo& run);

/// One trajectory reduced to its first N evaluation requests.
struct ComparedTrajectory {
  int64_t id = 0;
  std::string definition;
  /// Its judged turns with turn number <= N; turn_budget = the run's num_turns; tokens: every
  /// stored model call of turns 1..N (in-flight turns' calls included).
  TrajectoryObs obs;
  /// Per obs.turns[i]: the total (prompt + completion) tokens of every model call of turns
  /// 1..obs.turns[i].turn: what the trajectory had spent when that candidate was evaluated.
  std::vector<int64_t> cumulative_tokens;
};

/// Best speedups of one rule over one run's counted trajectories within N requests.
struct RuleBests {
  /// Per counted trajectory (input order): its best qualified speedup, 0 when it has none (the
  /// paper's Table 3 convention: a trajectory with no qualified turn counts as speedup 0).
  std::vector<double> bests;
  std::optional<double> median;   ///< median of `bests`, zeros included; absent with no counted trajectory
  std::optional<Interval> band;   ///< its bootstrap percentile interval (trajectories resampled)
  int64_t with_qualified = 0;     ///< counted trajectories with a qualified timed turn
  /// Median over those with one (Table 1's statistic, printed [n=K]) and the max.
  std::optional<double> median_with_qualified, max;
};

/// One run's side of a row.
struct ComparisonSide {
  int64_t trajectories = 0;  ///< all, counted or not (the token medians run over these)
  int64_t counted = 0;       ///< with a judged non-INFRA turn within N (the speedup medians run over these)
  int64_t incomplete = 0;    ///< counted, failed or running short of N (their best is over the turns run)
  int64_t strict_unknown_turns = 0;  ///< correct turns within N without a strict verdict (strict values: lower bounds)
  std::array<RuleBests, kComparisonRules.size()> rules;  ///< in kComparisonRules order
  TokenSummary tokens;  ///< cumulative tokens through request N, over all trajectories
  [[nodiscard]] const RuleBests& rule(InstructionRule r) const;
};

/// A Table 3 row: one definition (or kPooledDefinition) of both runs.
struct ComparisonRow {
  std::string definition;
  bool pooled = false;
  ComparisonSide agent, refinement;
  TokenRatio ratio;  ///< agent / refinement, ratio of medians of cumulative tokens through N
};

/// One run's Figure 14 curve on the shared grid.
struct CurveSide {
  int64_t trajectories = 0;         ///< counted trajectories it is the median over
  std::vector<double> median;       ///< per grid point
  std::vector<Interval> band;       ///< per grid point: pointwise percentile bootstrap interval
};

/// Figure 14 for one definition (or pooled): y(x) = the median over counted trajectories of the
/// best paper-rule qualified speedup among their turns whose cumulative tokens are <= x (0 when
/// none), a step function of x that changes only at the cumulative token counts of turns.
struct TokenCurve {
  std::string definition;
  bool pooled = false;
  /// The shared grid: every distinct positive cumulative token count of a judged turn of either
  /// run's counted trajectories within N, ascending; y is exact there and constant up to the next.
  std::vector<double> tokens;
  /// The value left of the grid (turns with 0 tokens: an agent run whose calls were not counted).
  double agent_at_zero = 0.0, refinement_at_zero = 0.0;
  CurveSide agent, refinement;
};

/// A run as compared.
struct ComparedRun {
  RunInfo info;
  int64_t num_turns = 0;  ///< its config's num_turns (the agent's request budget), else the most turns stored
  std::vector<std::string> definitions;  ///< in the order first seen
  std::vector<std::string> gpus, tags;   ///< as the verdicts and trajectory keys name them
  Provenance provenance;
  std::vector<ComparedTrajectory> trajectories;  ///< of the compared definitions
};

struct AgentComparisonOptions {
  /// N, evaluation requests per trajectory; absent: the agent run's num_turns (its budget).
  std::optional<int> requests;
  BootstrapOptions bootstrap;
  FakeVerdicts fake = FakeVerdicts::refuse;
};

struct AgentComparison {
  std::string store, generated_at;
  ComparedRun agent, refinement;
  int requests = 0;  ///< N
  BootstrapOptions bootstrap;
  std::vector<std::string> definitions;  ///< compared: those both runs ran, in the agent run's order
  /// What makes the comparison less than like for like (budgets, models, definitions left out,
  /// GPUs, tags, evaluation options, missing token counts); every output prints them.
  std::vector<std::string> warnings;
  std::vector<ComparisonRow> rows;    ///< per definition, then the pooled row when several
  std::vector<TokenCurve> curves;     ///< the same order
  Provenance provenance;              ///< both runs'
  [[nodiscard]] bool fake() const { return provenance.fake(); }
};

/// The Table 3 row of the given trajectories of both runs (already cut to N requests).
ComparisonRow comparison_row(const std::string& definition, const std::vector<ComparedTrajectory>& agent,
                             const std::vector<ComparedTrajectory>& refinement, int requests, const BootstrapOptions& options);

/// The best qualified speedup of a trajectory among its turns with cumulative tokens <= x; 0 when none.
double best_within_tokens(const ComparedTrajectory& t, double x, InstructionRule rule = InstructionRule::paper);

/// Figure 14 of the given trajectories of both runs (counted ones only; others are skipped).
TokenCurve token_curve(const std::string& definition, const std::vector<ComparedTrajectory>& agent,
                       const std::vector<ComparedTrajectory>& refinement, const BootstrapOptions& options);

/// A trajectory of a report cut to its first N requests.
ComparedTrajectory compared_trajectory(const TrajectoryDetail& t, int requests);

/// Reads both runs (ids or unique prefixes) and compares them. InputError, saying why, when they
/// cannot be: the same run twice, no definition in common, N < 1, N above either run's num_turns
/// (not measured), a bad bootstrap option, fake-backend verdicts without FakeVerdicts::allow.
/// Differences that leave them comparable (budgets above N that differ, definitions only one ran,
/// model labels, GPUs, prompt tags, evaluation options, a run without token counts) are warnings.
AgentComparison compare_agent_runs(const RunStore& store, const std::string& agent_run, const std::string& refinement_run,
                                   const AgentComparisonOptions& options = {});

/// Why a row rests on fewer trajectories than it holds: "agent: 1 not counted (...); refinement:
/// 2 incomplete (...)", or "" when nothing is left out or short.
std::string comparison_notes(const ComparisonRow& row);

/// The fake-backend banner of a comparison with fake verdicts, "" without them.
std::string fake_mark(const AgentComparison& c);

/// The definitions every output states (key, name, text), N, B, the seed and c filled in.
std::vector<MetricDefinition> agent_comparison_definitions(const AgentComparison& c);

}  // namespace ptxbench::report

// The paper's metrics (docs/design.md §7) over trajectories reduced to what they need: per turn a label,
// the correct and target-instruction flags (the paper's rule and the strict one), the speedup and
// the tokens. Pure functions, so they are
// tested against hand-computed fixtures; report_data.h fills the inputs from a run store.
// Every choice made here is stated in metric_definitions() (metric_definitions.h), which every
// output prints.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json_check.h"
#include "report/metric_definitions.h"
#include "verdict/verdict.h"

namespace ptxbench::report {

/// The paper's turn labels, plus our INFRA_ERROR, which is no label of the model's: it is excluded
/// from every rate (numerator and denominator) and counted on its own.
enum class TurnLabel {
  correct,
  numerical_error,
  compilation_error,
  runtime_error,
  sanitize_timeout,
  kernel_timeout,
  service_timeout,
  extraction_error,
  other,
  infra_error,
};
inline constexpr int kLabelCount = 10;
inline constexpr std::array<TurnLabel, kLabelCount> kAllLabels = {
    TurnLabel::correct,          TurnLabel::numerical_error, TurnLabel::compilation_error, TurnLabel::runtime_error,
    TurnLabel::sanitize_timeout, TurnLabel::kernel_timeout,  TurnLabel::service_timeout,   TurnLabel::extraction_error,
    TurnLabel::other,            TurnLabel::infra_error};

std::string label_name(TurnLabel l);  ///< "Correct", "Kernel execution timeout", ..., "Infra error (excluded)"
std::string label_key(TurnLabel l);   ///< "correct", "kernel_timeout", ... (CSV / JSON)
std::string label_short(TurnLabel l); ///< "Correct", "Kernel TO", ... (narrow table headers, chart axes)
[[nodiscard]] inline int label_index(TurnLabel l) { return static_cast<int>(l); }

/// The label of a turn from its stored status (a verdict status or EXTRACTION_ERROR) and, for
/// TIMEOUT, the verdict (which stage timed out). Unknown statuses are Other.
TurnLabel label_for(const std::string& status, const Verdict* verdict = nullptr);

/// Status -> label, with the reason, as stated in every report.
struct LabelRule {
  std::string status;
  std::string label;
  std::string note;
};
std::vector<LabelRule> label_mapping();

struct TokenCounts {
  int64_t prompt = 0, completion = 0, reasoning = 0, cached = 0;
  /// prompt + completion: reasoning ⊆ completion and cached ⊆ prompt (docs/agent.md).
  [[nodiscard]] int64_t total() const { return prompt + completion; }
  TokenCounts& operator+=(const TokenCounts& o) {
    prompt += o.prompt, completion += o.completion, reasoning += o.reasoning, cached += o.cached;
    return *this;
  }
};

/// Which correct turns a metric counts: all of them, those target-instruction correct by the
/// paper's rule (target_instruction.correct: an executed wgmma/TMA/tcgen05 count > 0), or by the
/// strict rule (target_instruction.strict_correct: tensor-core FLOP coverage >= kStrictCoverage).
enum class InstructionRule { unrestricted, paper, strict };

/// One judged turn: a verdict was stored, or no candidate could be extracted.
struct TurnObs {
  int64_t turn = 0;
  TurnLabel label = TurnLabel::other;
  bool correct = false;  ///< PASSED
  bool target = false;   ///< PASSED and the verdict affirms target_instruction.correct (missing data: false)
  std::optional<double> speedup;  ///< only read when correct
  /// The strict rule's target_instruction.strict_correct; unset when the verdict lacks it (stored
  /// before the field existed, or coverage not measured): "strict unknown", never strict correct.
  /// Only read when correct.
  std::optional<bool> strict;

  /// Correct and target-instruction correct by `rule` (an unknown strict verdict is not).
  [[nodiscard]] bool qualifies(InstructionRule rule) const;
  /// Correct with no strict verdict stored.
  [[nodiscard]] bool strict_unknown() const { return correct && !strict; }
};

struct TrajectoryObs {
  std::vector<TurnObs> turns;  ///< judged turns, by turn number (1, 2, ...)
  int64_t turn_budget = 0;     ///< the run's num_turns: budgets above it were not measured
  bool incomplete = false;     ///< ended short of its budget other than by the stop rule (failed, running)
  TokenCounts tokens;          ///< every stored model call of the trajectory
  /// Per turn (index turn - 1) that has a stored model answer: that call's tokens. Turns without
  /// one (the call in flight) are absent (nullopt), so a mean never counts them as 0.
  std::vector<std::optional<TokenCounts>> turn_tokens;
};

/// How a turn budget counts the slots after a trajectory's last judged turn (an early stop at the
/// speedup target, a failed or still running trajectory, a short trajectory of an imported release).
enum class MissingTurns {
  not_correct,    ///< the paper's rule (the default): in the denominator, never correct
  carry_forward,  ///< `report --carry-forward`: the last judged turn's verdict fills them
};
std::string to_string(MissingTurns rule);  ///< "not_correct", "carry_forward" (JSON, CSV)
/// The rule in words, for table captions: "missing turns count as not correct (the paper's rule)".
std::string describe(MissingTurns rule);

/// The unbiased pass@k estimator (Chen et al. 2021): 1 - C(n - c, k) / C(n, k), the chance that at
/// least one of k trajectories drawn without replacement from n, c of which pass, passes. Absent
/// when k < 1 or k > n.
std::optional<double> pass_at_k(int64_t n, int64_t c, int64_t k);

/// Counted trajectories have at least one judged turn that is not INFRA_ERROR; the others are
/// left out of every rate and speedup metric (and of the Fast_p denominator).
bool counted(const TrajectoryObs& t);

/// The metrics of a set of trajectories at one turn budget T.
struct BudgetMetrics {
  int budget = 0;
  bool measured = false;            ///< false: T exceeds some trajectory's num_turns; values are absent
  int64_t trajectories = 0;         ///< counted trajectories
  int64_t slots = 0;                ///< denominator: counted trajectories × T, less INFRA_ERROR slots
  int64_t infra_slots = 0;          ///< slots excluded as INFRA_ERROR
  MissingTurns missing_rule = MissingTurns::not_correct;
  int64_t missing_slots = 0;        ///< slots after a trajectory's last judged turn (either rule)
  int64_t carried_slots = 0;        ///< of those, filled by carry-forward (0 under the paper's rule)
  int64_t correct_slots = 0, target_slots = 0;
  std::optional<double> correctness_rate, target_rate;  ///< fractions in [0, 1]; absent when slots == 0
  /// Per counted trajectory (input order): its best correct (target-instruction-correct) speedup
  /// within the first T turns; absent when it has none.
  std::vector<std::optional<double>> best, best_target;
  std::optional<double> max_best, max_best_target;        ///< max over trajectories
  std::optional<double> median_best, median_best_target;  ///< median over trajectories that have a best
  int64_t with_best = 0, with_best_target = 0;            ///< how many have one
  /// The same under the strict rule. Correct slots without a strict verdict are counted as not
  /// strict correct (the strict values are then lower bounds) and counted in strict_unknown_slots.
  int64_t strict_slots = 0, strict_unknown_slots = 0;
  std::optional<double> strict_rate;
  std::vector<std::optional<double>> best_strict;
  std::optional<double> max_best_strict, median_best_strict;
  int64_t with_best_strict = 0;
  /// Per counted trajectory (input order): its slots (denominator share) and qualifying slots per
  /// rule within T, so a resample of trajectories can recompute the rates (intervals.h).
  struct Slots {
    int64_t slots = 0, correct = 0, target = 0, strict = 0;
  };
  std::vector<Slots> per_trajectory;
  /// Counted trajectories with at least one qualifying turn within T (turns actually run): the c of
  /// pass@k, per rule.
  int64_t passed = 0, passed_target = 0, passed_strict = 0;

  /// The fields above by rule (unrestricted: correctness_rate, best, ...).
  [[nodiscard]] const std::optional<double>& rate(InstructionRule rule) const;
  [[nodiscard]] const std::vector<std::optional<double>>& bests(InstructionRule rule) const;
  [[nodiscard]] const std::optional<double>& max_of_bests(InstructionRule rule) const;
  [[nodiscard]] const std::optional<double>& median_of_bests(InstructionRule rule) const;
  [[nodiscard]] int64_t with_best_of(InstructionRule rule) const;
  [[nodiscard]] int64_t passed_of(InstructionRule rule) const;
  /// pass@k over the counted trajectories under `rule`; absent when k exceeds them.
  [[nodiscard]] std::optional<double> pass_at(int64_t k, InstructionRule rule) const;
  /// The strict rule's values are unknown, not merely lower bounds: correct slots exist within T
  /// and none of them has a strict verdict (e.g. every turn of an imported run). Shown as n/a.
  [[nodiscard]] bool strict_unknown_only() const { return correct_slots > 0 && strict_unknown_slots == correct_slots; }
};

BudgetMetrics budget_metrics(const std::vector<TrajectoryObs>& trajectories, int budget,
                             MissingTurns missing = MissingTurns::not_correct);

/// Fast_p: the share of ALL given trajectories whose best is strictly greater than p (a trajectory
/// without a best counts in the denominator only). 0 for an empty set.
double fast_p(const std::vector<std::optional<double>>& bests, double p);
/// The p values at which the reports list Fast_p (the curves are drawn exactly from the bests).
const std::vector<double>& fast_p_grid();

struct LabelCounts {
  std::array<int64_t, kLabelCount> total{};
  std::vector<std::array<int64_t, kLabelCount>> per_turn;  ///< [turn - 1]: judged turns only, no carry-forward
};
LabelCounts label_counts(const std::vector<TrajectoryObs>& trajectories);

/// counts[from][to]: consecutive judged turns n -> n+1 of the same trajectory (INFRA_ERROR included
/// as its own state; no carry-forward).
struct Transitions {
  std::array<std::array<int64_t, kLabelCount>, kLabelCount> counts{};
  [[nodiscard]] int64_t total() const;
};
Transitions transitions(const std::vector<TrajectoryObs>& trajectories);

struct TokenSummary {
  int64_t trajectories = 0;  ///< all trajectories given (counted or not: their calls cost tokens)
  TokenCounts total;
  /// Per-trajectory means (total / trajectories); absent with no trajectories.
  std::optional<double> mean_prompt, mean_completion, mean_reasoning, mean_cached, mean_total;
  /// Medians of the per-trajectory cumulative counts (the paper's statistic); absent with none.
  std::optional<double> median_prompt, median_completion, median_reasoning, median_cached, median_total;
};
TokenSummary token_summary(const std::vector<TrajectoryObs>& trajectories);

/// Reasoning tokens of the model call of one turn number, over the trajectories that have that
/// call stored (the paper's Figure 7: reasoning effort by turn).
struct TurnReasoning {
  int64_t turn = 0;
  int64_t calls = 0;  ///< trajectories with a stored answer at this turn
  double median = 0.0, mean = 0.0;
  int64_t min = 0, max = 0;
};
std::vector<TurnReasoning> reasoning_by_turn(const std::vector<TrajectoryObs>& trajectories);

/// Everything the reports show about one group (model × definition × GPU of a run).
struct GroupMetrics {
  int64_t trajectories = 0;  ///< all
  int64_t counted = 0;       ///< with at least one judged non-INFRA turn
  int64_t incomplete = 0;    ///< counted but failed / still running short of the budget
  int64_t short_trajectories = 0;  ///< counted, with fewer judged turns than their run's num_turns (any reason)
  int64_t correct_turns = 0;         ///< PASSED turns actually run (no carry-forward)
  int64_t strict_unknown_turns = 0;  ///< of which the verdict holds no strict rule verdict
  std::vector<BudgetMetrics> budgets;
  LabelCounts labels;
  Transitions transitions;
  TokenSummary tokens;
  std::vector<TurnReasoning> reasoning;  ///< by turn, turns with at least one stored call
};
GroupMetrics group_metrics(const std::vector<TrajectoryObs>& trajectories, const std::vector<int>& budgets,
                           MissingTurns missing = MissingTurns::not_correct);

/// Token ratio a / b of two token summaries: the ratio of the MEDIANS of per-trajectory cumulative
/// tokens (the paper's Tables 3 and 8), for each kind.
struct TokenRatio {
  std::optional<double> prompt, completion, reasoning, cached, total;
};
TokenRatio token_ratio(const TokenSummary& a, const TokenSummary& b);

}  // namespace ptxbench::report

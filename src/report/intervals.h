// Percentile-bootstrap intervals of one turn budget's metrics — the turn correctness rates (the
// paper's Table 1), the max of the per-trajectory best speedups (Table 9) and Fast_p on the
// report's p grid, under each target-instruction rule — resampling a group's counted trajectories
// with the seeded generator of bootstrap.h, so the same seed gives the same intervals everywhere.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include "report/bootstrap.h"
#include "report/metrics.h"

namespace ptxbench::report {

inline constexpr std::size_t kRuleCount = 3;
/// unrestricted 0, paper 1, strict 2: the index of a rule in the arrays below.
[[nodiscard]] constexpr std::size_t rule_index(InstructionRule rule) { return static_cast<std::size_t>(rule); }

struct BudgetIntervals {
  std::array<std::optional<Interval>, kRuleCount> rate, max_best;
  /// Per rule, one per fast_p_grid() point (empty when there is nothing to resample).
  std::array<std::vector<std::optional<Interval>>, kRuleCount> fast;

  [[nodiscard]] const std::optional<Interval>& rate_of(InstructionRule rule) const { return rate[rule_index(rule)]; }
  [[nodiscard]] const std::optional<Interval>& max_best_of(InstructionRule rule) const { return max_best[rule_index(rule)]; }
  /// The interval of Fast_p at p (a point of fast_p_grid()); none off the grid.
  [[nodiscard]] std::optional<Interval> fast_of(InstructionRule rule, double p) const;
};

/// The intervals of `m` (a measured budget with counted trajectories; otherwise every interval is
/// absent). `stream` names the statistic's random stream (stream_seed), e.g. "run/model/def/T8".
/// A value the metrics leave absent (no rate over no slots, no best at all, a strict value that is
/// unknown: BudgetMetrics::strict_unknown_only) gets no interval.
BudgetIntervals budget_intervals(const BudgetMetrics& m, const BootstrapOptions& options, std::string_view stream);

}  // namespace ptxbench::report

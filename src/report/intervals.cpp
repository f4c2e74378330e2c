#include "report/intervals.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ptxbench::report {
namespace {

constexpr std::array<InstructionRule, kRuleCount> kRules = {InstructionRule::unrestricted, InstructionRule::paper,
                                                            InstructionRule::strict};

// What one counted trajectory contributes to a resample, per rule.
struct Unit {
  int64_t slots = 0;
  std::array<int64_t, kRuleCount> qualifying{};
  std::array<double, kRuleCount> best{};  // 0 without one (the max's convention in a resample)
  /// How many grid points its best lies strictly above: the grid ascends, so those are a prefix.
  std::array<std::size_t, kRuleCount> above{};
};

std::optional<Interval> interval_of(const std::vector<std::vector<double>>& rows, std::size_t column, double confidence) {
  std::vector<double> values;
  values.reserve(rows.size());
  for (const auto& row : rows)
    if (!std::isnan(row[column])) values.push_back(row[column]);
  if (values.empty()) return std::nullopt;
  return percentile_interval(std::move(values), confidence);
}

}  // namespace

std::optional<Interval> BudgetIntervals::fast_of(InstructionRule rule, double p) const {
  const auto& grid = fast_p_grid();
  const auto& v = fast[rule_index(rule)];
  for (std::size_t j = 0; j < grid.size() && j < v.size(); ++j)
    if (grid[j] == p) return v[j];
  return std::nullopt;
}

BudgetIntervals budget_intervals(const BudgetMetrics& m, const BootstrapOptions& options, std::string_view stream) {
  BudgetIntervals out;
  const std::size_t n = m.per_trajectory.size();
  if (!m.measured || n == 0) return out;
  const auto& grid = fast_p_grid();
  const std::size_t g = grid.size();

  std::vector<Unit> units(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& s = m.per_trajectory[i];
    Unit& u = units[i];
    u.slots = s.slots;
    u.qualifying = {s.correct, s.target, s.strict};
    for (auto rule : kRules) {
      const auto& b = m.bests(rule)[i];
      const std::size_t r = rule_index(rule);
      u.best[r] = b.value_or(0.0);
      u.above[r] = b ? static_cast<std::size_t>(std::count_if(grid.begin(), grid.end(), [&](double p) { return *b > p; })) : 0;
    }
  }
  // Columns: rate per rule, max per rule, then Fast_p per rule over the grid.
  const std::size_t k = 2 * kRuleCount + kRuleCount * g;
  auto statistic = [&](const std::vector<std::size_t>& draw, std::vector<double>& row) {
    int64_t slots = 0;
    std::array<int64_t, kRuleCount> qualifying{};
    std::array<double, kRuleCount> max{};
    std::array<std::vector<int64_t>, kRuleCount> at;  // at[r][a]: drawn units above exactly a grid points
    for (auto& a : at) a.assign(g + 1, 0);
    for (auto i : draw) {
      const Unit& u = units[i];
      slots += u.slots;
      for (std::size_t r = 0; r < kRuleCount; ++r) {
        qualifying[r] += u.qualifying[r];
        max[r] = std::max(max[r], u.best[r]);
        ++at[r][u.above[r]];
      }
    }
    const double drawn = static_cast<double>(draw.size());
    for (std::size_t r = 0; r < kRuleCount; ++r) {
      row[r] = slots > 0 ? static_cast<double>(qualifying[r]) / static_cast<double>(slots) : std::numeric_limits<double>::quiet_NaN();
      row[kRuleCount + r] = max[r];
      // Fast at grid point j: units above more than j points.
      int64_t above = 0;
      for (std::size_t j = g; j-- > 0;) {
        above += at[r][j + 1];
        row[2 * kRuleCount + r * g + j] = static_cast<double>(above) / drawn;
      }
    }
  };
  auto rows = bootstrap_distribution(n, k, statistic, options.resamples, stream_seed(options.seed, stream));
  for (auto rule : kRules) {
    const std::size_t r = rule_index(rule);
    const bool unknown = rule == InstructionRule::strict && m.strict_unknown_only();
    if (unknown) continue;
    if (m.rate(rule)) out.rate[r] = interval_of(rows, r, options.confidence);
    if (m.max_of_bests(rule)) out.max_best[r] = interval_of(rows, kRuleCount + r, options.confidence);
    out.fast[r].resize(g);
    for (std::size_t j = 0; j < g; ++j) out.fast[r][j] = interval_of(rows, 2 * kRuleCount + r * g + j, options.confidence);
  }
  return out;
}

}  // namespace ptxbench::report

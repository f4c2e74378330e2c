// The bootstrap intervals of a budget's metrics (report/intervals.h): on two trajectories the
// resample distribution is known by hand (each of the 4 ordered resamples equally likely), so the
// 95% interval's ends are too; identical trajectories give a point; absent values get no interval;
// the same seed gives the same intervals and another seed may not.
#include <gtest/gtest.h>

#include "report/intervals.h"
#include "report/report_format.h"

using namespace ptxbench;
using namespace ptxbench::report;

namespace {

TurnObs turn(int64_t n, TurnLabel label, std::optional<double> speedup = std::nullopt, bool target = false,
             std::optional<bool> strict = std::nullopt) {
  return {n, label, label == TurnLabel::correct, label == TurnLabel::correct && target, speedup, strict};
}

TrajectoryObs trajectory(std::vector<TurnObs> turns, int64_t budget) {
  TrajectoryObs t;
  t.turns = std::move(turns);
  t.turn_budget = budget;
  return t;
}

}  // namespace

TEST(ReportIntervals, TwoTrajectoriesGiveTheHandCountedEnds) {
  // A: correct, target, 1.5x. B: a compilation error. Resamples {A,A} {A,B} {B,A} {B,B}: the rate is
  // 1, 0.5, 0.5, 0 and the max 1.5, 1.5, 1.5, 0 (no best counts 0). With B = 1000 draws the 25th
  // smallest is 0 and the 975th is the top value, unless fewer than 25 (or 26) of 1000 draws were
  // {B,B} (or {A,A}): a chance below 1e-4 each, and the fixed seed makes it reproducible anyway.
  std::vector<TrajectoryObs> ts = {trajectory({turn(1, TurnLabel::correct, 1.5, true)}, 1),
                                   trajectory({turn(1, TurnLabel::compilation_error)}, 1)};
  BudgetMetrics m = budget_metrics(ts, 1);
  BudgetIntervals iv = budget_intervals(m, BootstrapOptions{}, "test/two");
  for (auto rule : {InstructionRule::unrestricted, InstructionRule::paper}) {
    ASSERT_TRUE(iv.rate_of(rule)) << rule_label(rule);
    EXPECT_DOUBLE_EQ(iv.rate_of(rule)->lower, 0.0);
    EXPECT_DOUBLE_EQ(iv.rate_of(rule)->upper, 1.0);
    ASSERT_TRUE(iv.max_best_of(rule));
    EXPECT_DOUBLE_EQ(iv.max_best_of(rule)->lower, 0.0);
    EXPECT_DOUBLE_EQ(iv.max_best_of(rule)->upper, 1.5);
    // Fast_1: 1, 0.5, 0.5, 0 as the rate; Fast_2: 0 in every resample.
    ASSERT_TRUE(iv.fast_of(rule, 1.0));
    EXPECT_DOUBLE_EQ(iv.fast_of(rule, 1.0)->lower, 0.0);
    EXPECT_DOUBLE_EQ(iv.fast_of(rule, 1.0)->upper, 1.0);
    EXPECT_DOUBLE_EQ(iv.fast_of(rule, 2.0)->upper, 0.0);
  }
  EXPECT_FALSE(iv.fast_of(InstructionRule::paper, 1.7)) << "off the grid";
  // A's strict verdict is unknown and it is the only correct turn: no strict interval (n/a).
  EXPECT_TRUE(m.strict_unknown_only());
  EXPECT_FALSE(iv.rate_of(InstructionRule::strict));
  EXPECT_FALSE(iv.max_best_of(InstructionRule::strict));
  EXPECT_FALSE(iv.fast_of(InstructionRule::strict, 1.0));
}

TEST(ReportIntervals, IdenticalTrajectoriesGiveAPointAndAbsentValuesNone) {
  std::vector<TrajectoryObs> same(4, trajectory({turn(1, TurnLabel::numerical_error), turn(2, TurnLabel::correct, 0.8, false, true)}, 2));
  BudgetMetrics m = budget_metrics(same, 2);
  BudgetIntervals iv = budget_intervals(m, BootstrapOptions{}, "test/same");
  EXPECT_DOUBLE_EQ(iv.rate_of(InstructionRule::unrestricted)->lower, 0.5);
  EXPECT_DOUBLE_EQ(iv.rate_of(InstructionRule::unrestricted)->upper, 0.5);
  EXPECT_DOUBLE_EQ(iv.rate_of(InstructionRule::paper)->upper, 0.0) << "a rate of 0 is known: interval [0, 0]";
  EXPECT_FALSE(iv.max_best_of(InstructionRule::paper)) << "no target-instruction best: no value, no interval";
  EXPECT_DOUBLE_EQ(iv.max_best_of(InstructionRule::strict)->lower, 0.8);
  EXPECT_DOUBLE_EQ(iv.fast_of(InstructionRule::strict, 0.75)->lower, 1.0);
  EXPECT_DOUBLE_EQ(iv.fast_of(InstructionRule::strict, 0.8)->upper, 0.0) << "strict >";
  // Not measured (T above the budget) or nothing counted: nothing to resample.
  EXPECT_FALSE(budget_intervals(budget_metrics(same, 3), BootstrapOptions{}, "x").rate_of(InstructionRule::paper));
  EXPECT_FALSE(budget_intervals(budget_metrics({}, 1), BootstrapOptions{}, "x").rate_of(InstructionRule::paper));
}

TEST(ReportIntervals, TheSeedAndTheStreamFixTheIntervals) {
  // Twelve trajectories of mixed outcomes, like one definition of the paper's protocol.
  std::vector<TrajectoryObs> ts;
  for (int i = 0; i < 12; ++i) {
    std::vector<TurnObs> turns;
    for (int n = 1; n <= 4; ++n)
      turns.push_back((i * 7 + n * 3) % 5 < 2 ? turn(n, TurnLabel::correct, 0.4 + 0.1 * ((i + n) % 9), (i + n) % 3 != 0)
                                              : turn(n, TurnLabel::runtime_error));
    ts.push_back(trajectory(turns, 4));
  }
  BudgetMetrics m = budget_metrics(ts, 4);
  BootstrapOptions o;
  BudgetIntervals a = budget_intervals(m, o, "group/T4"), b = budget_intervals(m, o, "group/T4");
  const auto& ra = *a.rate_of(InstructionRule::paper);
  const auto& rb = *b.rate_of(InstructionRule::paper);
  EXPECT_EQ(ra.lower, rb.lower);
  EXPECT_EQ(ra.upper, rb.upper);
  EXPECT_LE(ra.lower, *m.target_rate);
  EXPECT_GE(ra.upper, *m.target_rate);
  EXPECT_LT(ra.lower, ra.upper) << "twelve different trajectories: a real interval";
  // The interval of a 95% bootstrap is narrower at 50%.
  o.confidence = 0.5;
  BudgetIntervals narrow = budget_intervals(m, o, "group/T4");
  EXPECT_GE(narrow.rate_of(InstructionRule::paper)->lower, ra.lower);
  EXPECT_LE(narrow.rate_of(InstructionRule::paper)->upper, ra.upper);
  // Another seed draws other resamples: over the 42 statistics some end moves.
  o.confidence = 0.95;
  o.seed = 7;
  o.resamples = 200;
  BudgetIntervals c = budget_intervals(m, o, "group/T4"), d = budget_intervals(m, o, "group/T8");
  bool differs = false;
  for (double p : fast_p_grid())
    for (auto rule : {InstructionRule::unrestricted, InstructionRule::paper}) {
      auto x = c.fast_of(rule, p), y = d.fast_of(rule, p);
      differs |= x && y && (x->lower != y->lower || x->upper != y->upper);
    }
  differs |= c.rate_of(InstructionRule::paper)->lower != d.rate_of(InstructionRule::paper)->lower ||
             c.rate_of(InstructionRule::paper)->upper != d.rate_of(InstructionRule::paper)->upper;
  EXPECT_TRUE(differs) << "another stream name draws other resamples";
}

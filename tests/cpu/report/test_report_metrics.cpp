// The report's metric functions against hand-computed fixtures (docs/design.md §7): no correct turn,
// missing turns under the paper's rule (not correct) and under --carry-forward, INFRA_ERROR
// exclusion, missing SASS data, budgets above the turns run, strict > at p equal to a speedup, the
// strict target-instruction rule beside the paper's (turns without a strict verdict: a lower bound,
// or n/a when none has one), pass@k, label mapping, transitions and tokens.
#include <gtest/gtest.h>

#include "report/metrics.h"
#include "report/report_format.h"

using namespace ptxbench;
using namespace ptxbench::report;

namespace {

TurnObs turn(int64_t n, TurnLabel label, std::optional<double> speedup = std::nullopt, bool target = false,
             std::optional<bool> strict = std::nullopt) {
  return {n, label, label == TurnLabel::correct, label == TurnLabel::correct && target, speedup, strict};
}

TrajectoryObs trajectory(std::vector<TurnObs> turns, int64_t budget, bool incomplete = false) {
  TrajectoryObs t;
  t.turns = std::move(turns);
  t.turn_budget = budget;
  t.incomplete = incomplete;
  return t;
}

constexpr auto C = TurnLabel::correct;
constexpr auto N = TurnLabel::numerical_error;
constexpr auto X = TurnLabel::compilation_error;
constexpr auto R = TurnLabel::runtime_error;
constexpr auto E = TurnLabel::extraction_error;
constexpr auto I = TurnLabel::infra_error;

}  // namespace

TEST(ReportMetrics, NoCorrectTurnGivesZeroRatesAndNoSpeedups) {
  std::vector<TrajectoryObs> ts = {trajectory({turn(1, X), turn(2, N), turn(3, R), turn(4, E)}, 4)};
  BudgetMetrics m = budget_metrics(ts, 4);
  ASSERT_TRUE(m.measured);
  EXPECT_EQ(m.slots, 4);
  EXPECT_EQ(m.correct_slots, 0);
  EXPECT_DOUBLE_EQ(*m.correctness_rate, 0.0);
  EXPECT_DOUBLE_EQ(*m.target_rate, 0.0);
  EXPECT_FALSE(m.max_best);
  EXPECT_FALSE(m.median_best);
  EXPECT_EQ(m.with_best, 0);
  ASSERT_EQ(m.best.size(), 1u);
  EXPECT_FALSE(m.best[0]);
  EXPECT_DOUBLE_EQ(fast_p(m.best, 0.0), 0.0) << "counted in the denominator, never above p";
}

TEST(ReportMetrics, MissingTurnsAreNotCorrectByThePapersRule) {
  // A stops early at turn 2 (correct, target, 1.5x). B runs all 8 turns.
  std::vector<TrajectoryObs> ts = {
      trajectory({turn(1, X), turn(2, C, 1.5, true)}, 8),
      trajectory({turn(1, X), turn(2, N), turn(3, C, 0.9), turn(4, C, 1.1, true), turn(5, R), turn(6, N), turn(7, C, 1.3), turn(8, X)}, 8),
  };
  BudgetMetrics t4 = budget_metrics(ts, 4), t8 = budget_metrics(ts, 8);
  EXPECT_EQ(t4.missing_rule, MissingTurns::not_correct) << "the default";
  // T=4: A = X C _ _ (1 correct, 1 target), B = X N C C (2, 1): 3/8 and 2/8, the denominator trajectories x T.
  EXPECT_EQ(t4.slots, 8);
  EXPECT_EQ(t4.missing_slots, 2);
  EXPECT_EQ(t4.carried_slots, 0);
  EXPECT_DOUBLE_EQ(*t4.correctness_rate, 3.0 / 8.0);
  EXPECT_DOUBLE_EQ(*t4.target_rate, 2.0 / 8.0);
  // T=8: A 1 (6 missing), B 3 correct, 1 target: 4/16 and 2/16.
  EXPECT_EQ(t8.slots, 16);
  EXPECT_EQ(t8.missing_slots, 6);
  EXPECT_DOUBLE_EQ(*t8.correctness_rate, 4.0 / 16.0);
  EXPECT_DOUBLE_EQ(*t8.target_rate, 2.0 / 16.0);
  // Bests use the turns run, under either rule.
  EXPECT_DOUBLE_EQ(*t8.max_best, 1.5);
  EXPECT_DOUBLE_EQ(*t8.median_best, (1.5 + 1.3) / 2);
  EXPECT_EQ(t8.best, budget_metrics(ts, 8, MissingTurns::carry_forward).best);
  // The per-trajectory slots a resample adds up (intervals.h).
  ASSERT_EQ(t8.per_trajectory.size(), 2u);
  EXPECT_EQ(t8.per_trajectory[0].slots, 8);
  EXPECT_EQ(t8.per_trajectory[0].correct, 1);
  EXPECT_EQ(t8.per_trajectory[1].correct, 3);
  EXPECT_EQ(t8.per_trajectory[1].target, 1);
}

TEST(ReportMetrics, CarryForwardFillsMissingTurnsWithTheLastVerdict) {
  // A stops early at turn 2 (correct, target, 1.5x). B runs all 8 turns.
  std::vector<TrajectoryObs> ts = {
      trajectory({turn(1, X), turn(2, C, 1.5, true)}, 8),
      trajectory({turn(1, X), turn(2, N), turn(3, C, 0.9), turn(4, C, 1.1, true), turn(5, R), turn(6, N), turn(7, C, 1.3), turn(8, X)}, 8),
  };
  const auto carry = MissingTurns::carry_forward;
  BudgetMetrics t1 = budget_metrics(ts, 1, carry), t4 = budget_metrics(ts, 4, carry), t8 = budget_metrics(ts, 8, carry);
  EXPECT_EQ(t1.slots, 2);
  EXPECT_DOUBLE_EQ(*t1.correctness_rate, 0.0);
  EXPECT_EQ(t1.with_best, 0);
  // T=4: A = X C C* C* (3 correct, 3 target), B = X N C C (2 correct, 1 target): 5/8 and 4/8.
  EXPECT_EQ(t4.slots, 8);
  EXPECT_EQ(t4.carried_slots, 2);
  EXPECT_EQ(t4.missing_slots, 2);
  EXPECT_DOUBLE_EQ(*t4.correctness_rate, 5.0 / 8.0);
  EXPECT_DOUBLE_EQ(*t4.target_rate, 4.0 / 8.0);
  EXPECT_DOUBLE_EQ(*t4.max_best, 1.5);
  EXPECT_DOUBLE_EQ(*t4.median_best, (1.5 + 1.1) / 2);
  EXPECT_DOUBLE_EQ(*t4.median_best_target, (1.5 + 1.1) / 2);
  // T=8: A = 7 correct (6 carried), B = 3 correct, 1 target: 10/16 and 8/16.
  EXPECT_EQ(t8.slots, 16);
  EXPECT_EQ(t8.carried_slots, 6);
  EXPECT_DOUBLE_EQ(*t8.correctness_rate, 10.0 / 16.0);
  EXPECT_DOUBLE_EQ(*t8.target_rate, 8.0 / 16.0);
  EXPECT_DOUBLE_EQ(*t8.max_best, 1.5);
  EXPECT_DOUBLE_EQ(*t8.median_best, (1.5 + 1.3) / 2) << "B's best within 8 is its non-target 1.3";
  EXPECT_DOUBLE_EQ(*t8.max_best_target, 1.5);
  EXPECT_DOUBLE_EQ(*t8.median_best_target, (1.5 + 1.1) / 2);
}

TEST(ReportMetrics, FastPIsStrictlyGreaterAndOverAllTrajectories) {
  std::vector<TrajectoryObs> ts = {
      trajectory({turn(1, C, 1.3)}, 1),
      trajectory({turn(1, C, 1.5, true)}, 1),
      trajectory({turn(1, N)}, 1),
      trajectory({turn(1, C)}, 1),  // PASSED without a measured speedup: correct, but no best
  };
  BudgetMetrics m = budget_metrics(ts, 1);
  EXPECT_DOUBLE_EQ(*m.correctness_rate, 3.0 / 4.0);
  EXPECT_EQ(m.with_best, 2);
  EXPECT_DOUBLE_EQ(fast_p(m.best, 1.3), 1.0 / 4.0) << "1.3 is not > 1.3";
  EXPECT_DOUBLE_EQ(fast_p(m.best, 1.2999), 2.0 / 4.0);
  EXPECT_DOUBLE_EQ(fast_p(m.best, 1.5), 0.0);
  EXPECT_DOUBLE_EQ(fast_p(m.best, 0.0), 2.0 / 4.0);
  EXPECT_DOUBLE_EQ(fast_p(m.best_target, 1.0), 1.0 / 4.0);
  EXPECT_DOUBLE_EQ(fast_p(m.best_target, 1.5), 0.0);
  EXPECT_DOUBLE_EQ(fast_p({}, 0.0), 0.0);
}

TEST(ReportMetrics, InfraErrorTurnsLeaveNumeratorAndDenominator) {
  std::vector<TrajectoryObs> ts = {
      trajectory({turn(1, I), turn(2, X), turn(3, C, 1.2, true), turn(4, I)}, 4),
      trajectory({turn(1, I), turn(2, I)}, 4, true),  // nothing but INFRA_ERROR: not counted at all
  };
  EXPECT_TRUE(counted(ts[0]));
  EXPECT_FALSE(counted(ts[1]));
  BudgetMetrics m = budget_metrics(ts, 4);
  EXPECT_EQ(m.trajectories, 1);
  EXPECT_EQ(m.slots, 2);
  EXPECT_EQ(m.infra_slots, 2);
  EXPECT_DOUBLE_EQ(*m.correctness_rate, 0.5);
  EXPECT_DOUBLE_EQ(fast_p(m.best, 1.0), 1.0) << "the all-INFRA trajectory is not in the denominator";
  BudgetMetrics m1 = budget_metrics(ts, 1);
  EXPECT_EQ(m1.slots, 0);
  EXPECT_FALSE(m1.correctness_rate) << "no slot left: no rate rather than 0";

  GroupMetrics g = group_metrics(ts, {1, 4});
  EXPECT_EQ(g.trajectories, 2);
  EXPECT_EQ(g.counted, 1);
  EXPECT_EQ(g.labels.total[label_index(I)], 4);
  EXPECT_EQ(g.labels.total[label_index(C)], 1);
  ASSERT_EQ(g.labels.per_turn.size(), 4u);
  EXPECT_EQ(g.labels.per_turn[0][label_index(I)], 2);
  EXPECT_EQ(g.transitions.counts[label_index(I)][label_index(X)], 1);
  EXPECT_EQ(g.transitions.counts[label_index(X)][label_index(C)], 1);
  EXPECT_EQ(g.transitions.counts[label_index(C)][label_index(I)], 1);
  EXPECT_EQ(g.transitions.counts[label_index(I)][label_index(I)], 1);
  EXPECT_EQ(g.transitions.total(), 4);
}

TEST(ReportMetrics, MissingSassDataIsNotTargetInstructionCorrect) {
  // Correct turns whose verdicts could not affirm the target instructions (target = false).
  std::vector<TrajectoryObs> ts = {trajectory({turn(1, C, 1.4, false), turn(2, C, 1.6, false)}, 2)};
  BudgetMetrics m = budget_metrics(ts, 2);
  EXPECT_DOUBLE_EQ(*m.correctness_rate, 1.0);
  EXPECT_DOUBLE_EQ(*m.target_rate, 0.0);
  EXPECT_DOUBLE_EQ(*m.max_best, 1.6);
  EXPECT_FALSE(m.max_best_target);
  EXPECT_DOUBLE_EQ(fast_p(m.best_target, 0.0), 0.0);
  // A target flag on an incorrect turn is ignored.
  TurnObs odd{1, N, false, true, 2.0, {}};
  BudgetMetrics o = budget_metrics({trajectory({odd}, 1)}, 1);
  EXPECT_EQ(o.target_slots, 0);
  EXPECT_FALSE(o.max_best);
}

TEST(ReportMetrics, StrictRuleQualifiesFewerTurnsAndUnknownIsNotStrict) {
  // A: the paper's rule holds on both turns, the strict one only on turn 2 (the slower one).
  // B: paper rule, no strict verdict stored (an old verdict); its second slot carried forward.
  // C: never correct.
  std::vector<TrajectoryObs> ts = {
      trajectory({turn(1, C, 1.5, true, false), turn(2, C, 1.3, true, true)}, 2),
      trajectory({turn(1, C, 2.0, true)}, 2),
      trajectory({turn(1, X), turn(2, N)}, 2),
  };
  const auto carry = MissingTurns::carry_forward;
  BudgetMetrics m = budget_metrics(ts, 2, carry);
  EXPECT_EQ(m.slots, 6);
  EXPECT_EQ(m.target_slots, 4) << "B's carried slot counts under the paper's rule";
  EXPECT_EQ(m.strict_slots, 1);
  EXPECT_EQ(m.strict_unknown_slots, 2) << "B's turn and its carried slot";
  EXPECT_DOUBLE_EQ(*m.target_rate, 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(*m.strict_rate, 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(*m.rate(InstructionRule::strict), 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(*m.rate(InstructionRule::paper), 4.0 / 6.0);
  ASSERT_EQ(m.best_strict.size(), 3u);
  EXPECT_DOUBLE_EQ(*m.best_target[0], 1.5);
  EXPECT_DOUBLE_EQ(*m.best_strict[0], 1.3) << "turn 1 is not strict correct";
  EXPECT_FALSE(m.best_strict[1]) << "unknown is not strict correct";
  EXPECT_DOUBLE_EQ(*m.max_best_strict, 1.3);
  EXPECT_EQ(m.with_best_strict, 1);
  EXPECT_DOUBLE_EQ(*m.max_best_target, 2.0);
  // Fast^Inst_1.4: the paper's rule counts A (1.5) and B (2.0); the strict one none.
  EXPECT_DOUBLE_EQ(fast_p(m.bests(InstructionRule::paper), 1.4), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(fast_p(m.bests(InstructionRule::strict), 1.4), 0.0);
  EXPECT_DOUBLE_EQ(fast_p(m.bests(InstructionRule::strict), 1.2), 1.0 / 3.0);

  GroupMetrics g = group_metrics(ts, {1, 2}, carry);
  EXPECT_EQ(g.correct_turns, 3);
  EXPECT_EQ(g.strict_unknown_turns, 1);
  // Turn correctness: paper 2/3 at T=1 and 4/6 at T=2; strict 0/3 and 1/6, lower bounds (*).
  EXPECT_EQ(budget_cell(g, budget_tables()[0]), "66.7 / 66.7 (66.7 / 66.7)") << "the paper's cell is unchanged";
  EXPECT_EQ(budget_values(g, budget_tables()[0], InstructionRule::strict), "0.0* / 16.7*");
  EXPECT_EQ(budget_values(g, budget_tables()[3], InstructionRule::strict), "0.0* / 33.3*") << "Fast_1 (strict)";
  EXPECT_EQ(budget_values(g, budget_tables()[3], InstructionRule::paper), "66.7 / 66.7");

  // Every strict verdict known: no lower-bound mark.
  GroupMetrics known = group_metrics({trajectory({turn(1, C, 1.5, true, true)}, 1)}, {1});
  EXPECT_EQ(budget_values(known, budget_tables()[0], InstructionRule::strict), "100.0");
  EXPECT_EQ(known.strict_unknown_turns, 0);
  // No correct turn has a strict verdict (an imported run): the strict values are unknown, n/a,
  // not 0.0*; the paper's stay. No correct turn at all: 0.0, known.
  GroupMetrics none_known = group_metrics({trajectory({turn(1, C, 1.5, true)}, 1), trajectory({turn(1, X)}, 1)}, {1});
  EXPECT_TRUE(none_known.budgets[0].strict_unknown_only());
  EXPECT_EQ(budget_values(none_known, budget_tables()[0], InstructionRule::strict), "n/a");
  EXPECT_EQ(budget_values(none_known, budget_tables()[1], InstructionRule::strict), "n/a");
  EXPECT_EQ(budget_values(none_known, budget_tables()[0], InstructionRule::paper), "50.0");
  EXPECT_EQ(pass_values(none_known, 1, InstructionRule::strict), "n/a");
  GroupMetrics nothing = group_metrics({trajectory({turn(1, X)}, 1)}, {1});
  EXPECT_FALSE(nothing.budgets[0].strict_unknown_only());
  EXPECT_EQ(budget_values(nothing, budget_tables()[0], InstructionRule::strict), "0.0");
  // A strict flag on an incorrect turn is ignored, as the paper's is.
  TurnObs odd{1, N, false, true, 2.0, true};
  EXPECT_FALSE(odd.qualifies(InstructionRule::strict));
  EXPECT_FALSE(odd.strict_unknown());
}

TEST(ReportMetrics, BudgetAboveTheTurnsRunIsNotMeasured) {
  std::vector<TrajectoryObs> ts = {trajectory({turn(1, X), turn(2, C, 1.1)}, 2)};
  BudgetMetrics m = budget_metrics(ts, 4);
  EXPECT_FALSE(m.measured);
  EXPECT_FALSE(m.correctness_rate);
  EXPECT_FALSE(m.max_best);
  EXPECT_TRUE(m.best.empty());
  GroupMetrics g = group_metrics(ts, {1, 2, 4});
  EXPECT_EQ(budget_cell(g, budget_tables()[0]), "0.0 / 0.0 / n/a (0.0 / 50.0 / n/a)") << "target first, unrestricted in parentheses";
  // Stopped early well inside its budget: T=8 is measured; its 7 missing turns are not correct
  // (the paper's rule), or carry the correct verdict forward.
  std::vector<TrajectoryObs> early = {trajectory({turn(1, C, 1.5, true)}, 8)};
  BudgetMetrics e8 = budget_metrics(early, 8);
  EXPECT_TRUE(e8.measured);
  EXPECT_DOUBLE_EQ(*e8.correctness_rate, 1.0 / 8.0);
  EXPECT_EQ(e8.missing_slots, 7);
  EXPECT_EQ(e8.carried_slots, 0);
  BudgetMetrics c8 = budget_metrics(early, 8, MissingTurns::carry_forward);
  EXPECT_DOUBLE_EQ(*c8.correctness_rate, 1.0);
  EXPECT_EQ(c8.carried_slots, 7);
}

TEST(ReportMetrics, IncompleteTrajectoryHasMissingTurnsToo) {
  // Failed after 2 of 4 turns, the last one correct: 1 of 4 slots by the paper's rule, 3 carried.
  std::vector<TrajectoryObs> ts = {trajectory({turn(1, X), turn(2, C, 0.5, true)}, 4, true)};
  BudgetMetrics m = budget_metrics(ts, 4);
  EXPECT_EQ(m.slots, 4);
  EXPECT_EQ(m.missing_slots, 2);
  EXPECT_DOUBLE_EQ(*m.correctness_rate, 0.25);
  BudgetMetrics c = budget_metrics(ts, 4, MissingTurns::carry_forward);
  EXPECT_EQ(c.carried_slots, 2);
  EXPECT_DOUBLE_EQ(*c.correctness_rate, 0.75);
  // A missing slot after INFRA_ERROR: excluded when carried, not correct by the paper's rule.
  std::vector<TrajectoryObs> infra = {trajectory({turn(1, X), turn(2, I)}, 4, true)};
  EXPECT_EQ(budget_metrics(infra, 4).slots, 3);
  EXPECT_EQ(budget_metrics(infra, 4, MissingTurns::carry_forward).slots, 1);
  GroupMetrics g = group_metrics(ts, {4});
  EXPECT_EQ(g.incomplete, 1);
  EXPECT_EQ(g.short_trajectories, 1);
  EXPECT_EQ(to_string(MissingTurns::not_correct), "not_correct");
  EXPECT_NE(describe(MissingTurns::not_correct).find("the paper's rule"), std::string::npos);
  EXPECT_NE(describe(MissingTurns::carry_forward).find("--carry-forward"), std::string::npos);
}

TEST(ReportMetrics, PassAtKIsTheUnbiasedEstimator) {
  // 1 - C(n-c, k) / C(n, k), by hand.
  EXPECT_DOUBLE_EQ(*pass_at_k(5, 2, 1), 2.0 / 5.0);
  EXPECT_NEAR(*pass_at_k(5, 2, 2), 1.0 - 3.0 / 10.0, 1e-12);          // C(3,2) = 3, C(5,2) = 10
  EXPECT_NEAR(*pass_at_k(12, 3, 4), 1.0 - 126.0 / 495.0, 1e-12);      // C(9,4) = 126, C(12,4) = 495
  EXPECT_DOUBLE_EQ(*pass_at_k(5, 2, 4), 1.0) << "n - c < k: any 4 of 5 hold a pass";
  EXPECT_DOUBLE_EQ(*pass_at_k(5, 0, 3), 0.0);
  EXPECT_DOUBLE_EQ(*pass_at_k(5, 5, 5), 1.0);
  EXPECT_FALSE(pass_at_k(5, 2, 6)) << "k above n is not estimated";
  EXPECT_FALSE(pass_at_k(5, 2, 0));
  EXPECT_FALSE(pass_at_k(0, 0, 1));
  // From trajectories: passes are over the turns run; a PASSED turn without a speedup passes.
  std::vector<TrajectoryObs> ts = {
      trajectory({turn(1, X), turn(2, C, 1.2, true)}, 2),
      trajectory({turn(1, C), turn(2, N)}, 2),  // correct, untimed, not target
      trajectory({turn(1, X), turn(2, X)}, 2),
      trajectory({turn(1, I), turn(2, C, 0.7, false, true)}, 2),
  };
  BudgetMetrics t1 = budget_metrics(ts, 1), t2 = budget_metrics(ts, 2);
  EXPECT_EQ(t1.passed, 1);
  EXPECT_EQ(t2.passed, 3);
  EXPECT_EQ(t2.passed_target, 1);
  EXPECT_EQ(t2.passed_strict, 1);
  EXPECT_DOUBLE_EQ(*t2.pass_at(1, InstructionRule::unrestricted), 3.0 / 4.0);
  EXPECT_NEAR(*t2.pass_at(2, InstructionRule::paper), 1.0 - 3.0 / 6.0, 1e-12);  // C(3,2) / C(4,2)
  EXPECT_FALSE(t2.pass_at(5, InstructionRule::paper));
  GroupMetrics g = group_metrics(ts, {1, 2});
  EXPECT_EQ(pass_values(g, 1, InstructionRule::unrestricted), "25.0 / 75.0");
  EXPECT_EQ(pass_values(g, 5, InstructionRule::unrestricted), "n/a / n/a");
}

TEST(ReportMetrics, StatusesMapToThePaperLabels) {
  EXPECT_EQ(label_for("PASSED"), TurnLabel::correct);
  EXPECT_EQ(label_for("INCORRECT_NUMERICAL"), TurnLabel::numerical_error);
  EXPECT_EQ(label_for("COMPILE_ERROR"), TurnLabel::compilation_error);
  EXPECT_EQ(label_for("ABI_ERROR"), TurnLabel::compilation_error);
  EXPECT_EQ(label_for("RUNTIME_ERROR"), TurnLabel::runtime_error);
  EXPECT_EQ(label_for("SANITIZER_ERROR"), TurnLabel::runtime_error);
  EXPECT_EQ(label_for("BANNED_API"), TurnLabel::other);
  EXPECT_EQ(label_for("TIMING_ANOMALY"), TurnLabel::other);
  EXPECT_EQ(label_for("SOMETHING_NEW"), TurnLabel::other);
  EXPECT_EQ(label_for("EXTRACTION_ERROR"), TurnLabel::extraction_error);
  EXPECT_EQ(label_for("INFRA_ERROR"), TurnLabel::infra_error);
  EXPECT_EQ(label_for("SERVICE_TIMEOUT"), TurnLabel::service_timeout);
  EXPECT_EQ(label_for("TIMEOUT"), TurnLabel::kernel_timeout);
  Verdict sanitize = Verdict::from_json(
      {{"status", "TIMEOUT"}, {"stages", {{"sanitize", {{"runs", {{{"timed_out", true}}}}}}}}});
  EXPECT_EQ(label_for("TIMEOUT", &sanitize), TurnLabel::sanitize_timeout);
  Verdict call = Verdict::from_json({{"status", "TIMEOUT"},
                                     {"message", "a call did not finish within 10 s; the runner was killed"},
                                     {"stages", {{"sanitize", {{"runs", {{{"timed_out", false}}}}, {"passed", true}}}}}});
  EXPECT_EQ(label_for("TIMEOUT", &call), TurnLabel::kernel_timeout);
  for (auto l : kAllLabels) EXPECT_FALSE(label_name(l).empty());
  // Every mapping row names a label that exists.
  for (const auto& rule : label_mapping()) {
    bool known = false;
    for (auto l : kAllLabels) known |= label_name(l) == rule.label;
    EXPECT_TRUE(known) << rule.label;
  }
}

TEST(ReportMetrics, TokensSumPerTrajectoryAndRatiosCompareMedians) {
  TrajectoryObs a = trajectory({turn(1, X)}, 1), b = a, c = a, d = a;
  a.tokens = {1000, 300, 100, 200};
  b.tokens = {3000, 500, 0, 1000};
  c.tokens = {500, 100, 0, 0};
  d.tokens = {100, 50, 0, 0};
  TokenSummary abd = token_summary({a, b, d}), cs = token_summary({c});
  EXPECT_EQ(abd.total.prompt, 4100);
  EXPECT_EQ(abd.total.total(), 4950);
  EXPECT_DOUBLE_EQ(*abd.mean_total, 1650.0);
  EXPECT_DOUBLE_EQ(*abd.mean_cached, 400.0);
  EXPECT_DOUBLE_EQ(*abd.median_total, 1300.0) << "totals 1300, 3500, 150";
  EXPECT_DOUBLE_EQ(*abd.median_prompt, 1000.0);
  TokenRatio r = token_ratio(abd, cs);
  EXPECT_DOUBLE_EQ(*r.prompt, 1000.0 / 500.0) << "a ratio of medians, not of means (1366.7 / 500)";
  EXPECT_DOUBLE_EQ(*r.total, 1300.0 / 600.0);
  EXPECT_FALSE(r.reasoning) << "no ratio over a zero";
  EXPECT_FALSE(token_summary({}).mean_total);
  EXPECT_FALSE(token_summary({}).median_total);
}

TEST(ReportMetrics, ReasoningByTurnCountsOnlyStoredCalls) {
  TrajectoryObs a = trajectory({turn(1, X)}, 3), b = a, c = a;
  a.turn_tokens = {TokenCounts{0, 0, 100, 0}, TokenCounts{0, 0, 300, 0}, TokenCounts{0, 0, 700, 0}};
  b.turn_tokens = {TokenCounts{0, 0, 200, 0}};                    // stopped early after turn 1
  c.turn_tokens = {TokenCounts{0, 0, 900, 0}, std::nullopt, TokenCounts{0, 0, 50, 0}};  // turn 2 in flight
  auto by_turn = reasoning_by_turn({a, b, c});
  ASSERT_EQ(by_turn.size(), 3u);
  EXPECT_EQ(by_turn[0].calls, 3);
  EXPECT_DOUBLE_EQ(by_turn[0].median, 200.0);
  EXPECT_DOUBLE_EQ(by_turn[0].mean, 400.0);
  EXPECT_EQ(by_turn[0].max, 900);
  EXPECT_EQ(by_turn[1].calls, 1) << "neither the early stop nor the call in flight counts as 0";
  EXPECT_DOUBLE_EQ(by_turn[1].median, 300.0);
  EXPECT_EQ(by_turn[2].turn, 3);
  EXPECT_DOUBLE_EQ(by_turn[2].median, 375.0);
  EXPECT_EQ(by_turn[2].min, 50);
}

TEST(ReportMetrics, EveryRuleIsStated) {
  std::string all;
  for (const auto& d : metric_definitions()) all += d.text + "\n";
  for (const char* needle : {"count as NOT correct", "--carry-forward", "the paper's rule", "strictly greater than p", "INFRA_ERROR",
                             "Missing SASS data", "not measured", "ALL counted trajectories", "median", "strict_correct",
                             "strict unknown", "n/a", "--allow-fake", "defaults", "1 - C(n-c, k) / C(n, k)", "percentile bootstrap",
                             "split by experiment"})
    EXPECT_NE(all.find(needle), std::string::npos) << needle;
}

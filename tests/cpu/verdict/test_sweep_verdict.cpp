// A workload sweep's aggregate, from constructed verdicts (no GPU): PASSED only when PASSED at every
// workload, with the geometric-mean and worst speedups; otherwise the first failure in sweep order
// names its workload, and an INFRA_ERROR anywhere makes the sweep INFRA_ERROR; the
// target-instruction claims are the conjunction; the stop rule; the JSON round trip; the one
// Verdict a run's turn stores, and the feedback rendered from it.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "definitions/catalog.h"
#include "verdict/feedback.h"
#include "verdict/sweep_verdict.h"

using namespace ptxbench;

namespace {

const std::string kGemm = "gemm_n7168_k5120";

const Catalog& catalog() {
  static const Catalog c = Catalog::load(PTXBENCH_SOURCE_DIR);
  return c;
}

Verdict verdict(const std::string& label, Status status, std::optional<double> speedup = std::nullopt, bool target = true) {
  Verdict v;
  v.status = status;
  v.definition = kGemm;
  v.workload_uuid = kGemm + "-" + label;
  v.workload_label = label;
  v.arch = "sm_90a";
  v.message = status == Status::PASSED ? "correct on every trial" : "output C differs from the reference in 7 of 100 elements";
  if (status == Status::PASSED) {
    v.runtime_mechanisms = Mechanisms{target, target, false, false};
    v.target_instruction_correct = target;
    v.tensor_core_coverage = target ? 0.95 : 0.0;
    v.target_instruction_strict = target;
  }
  v.speedup = speedup;
  if (speedup) {
    v.baseline_us = 100.0;
    v.candidate_us = 100.0 / *speedup;
  }
  v.started_at = "2026-12-05T10:00:00Z";
  v.wall_seconds = 2.0;
  return v;
}

SweepEntry entry(const std::string& label, std::optional<Verdict> v) {
  return {kGemm + "-" + label, label, {{"M", std::stoll(label.substr(2))}}, std::move(v)};
}

bool has(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

}  // namespace

TEST(SweepVerdict, AllPassedGivesTheGeometricMeanAndTheWorstSpeedup) {
  SweepVerdict s = aggregate_sweep(kGemm, {entry("M=8192", verdict("M=8192", Status::PASSED, 2.0)),
                                           entry("M=70", verdict("M=70", Status::PASSED, 0.5)),
                                           entry("M=232", verdict("M=232", Status::PASSED, 1.0))});
  EXPECT_EQ(s.status, Status::PASSED);
  EXPECT_TRUE(s.all_correct());
  EXPECT_EQ(s.passed, 3u);
  ASSERT_TRUE(s.geomean_speedup && s.worst_speedup && s.worst);
  EXPECT_NEAR(*s.geomean_speedup, 1.0, 1e-12);  // (2 · 0.5 · 1)^(1/3): a 2x and a 0.5x cancel
  EXPECT_DOUBLE_EQ(*s.worst_speedup, 0.5);
  EXPECT_EQ(*s.worst, 1u);
  EXPECT_FALSE(s.deciding);
  EXPECT_TRUE(s.target_instruction_correct);
  EXPECT_TRUE(s.target_instruction_strict);
  ASSERT_TRUE(s.tensor_core_coverage);
  EXPECT_DOUBLE_EQ(*s.tensor_core_coverage, 0.95);
  EXPECT_TRUE(has(s.message, "PASSED at every workload (3 of 3)")) << s.message;
  EXPECT_TRUE(has(s.message, "worst 0.500x at M=70")) << s.message;
  EXPECT_EQ(s.representative(), &s.entries[1]) << "all passed: the slowest one speaks for the sweep";
}

TEST(SweepVerdict, TheFirstFailureInSweepOrderDecidesAndIsNamed) {
  SweepVerdict s = aggregate_sweep(kGemm, {entry("M=8192", verdict("M=8192", Status::PASSED, 1.3)),
                                           entry("M=70", verdict("M=70", Status::INCORRECT_NUMERICAL)),
                                           entry("M=232", verdict("M=232", Status::RUNTIME_ERROR)),
                                           entry("M=972", verdict("M=972", Status::PASSED, 1.1))});
  EXPECT_EQ(s.status, Status::INCORRECT_NUMERICAL);
  EXPECT_FALSE(s.all_correct());
  ASSERT_TRUE(s.deciding);
  EXPECT_EQ(*s.deciding, 1u);
  EXPECT_TRUE(has(s.message, "INCORRECT_NUMERICAL at workload M=70 (2 of 4)")) << s.message;
  EXPECT_TRUE(has(s.message, "differs from the reference")) << "the workload's own message follows: " << s.message;
  EXPECT_TRUE(has(s.message, "2 of 4 workloads PASSED")) << s.message;
  EXPECT_FALSE(s.geomean_speedup) << "no speedup is claimed for a kernel that is wrong somewhere";
  EXPECT_FALSE(s.worst_speedup);
  EXPECT_FALSE(s.target_instruction_correct);
  EXPECT_EQ(s.representative(), &s.entries[1]);
  EXPECT_TRUE(has(sweep_summary(s), "all correct: no (INCORRECT_NUMERICAL at M=70")) << sweep_summary(s);
}

// An INFRA_ERROR is ours: the sweep is incomplete, so it is re-run and never counted against the
// kernel, even when another workload failed.
TEST(SweepVerdict, AnInfraErrorAnywhereMakesTheSweepInfraError) {
  SweepVerdict s = aggregate_sweep(kGemm, {entry("M=8192", verdict("M=8192", Status::PASSED, 1.3)),
                                           entry("M=70", verdict("M=70", Status::COMPILE_ERROR)),
                                           entry("M=232", verdict("M=232", Status::INFRA_ERROR))});
  EXPECT_EQ(s.status, Status::INFRA_ERROR);
  ASSERT_TRUE(s.deciding);
  EXPECT_EQ(*s.deciding, 2u);
  EXPECT_TRUE(has(s.message, "INFRA_ERROR at workload M=232 (3 of 3)")) << s.message;
}

TEST(SweepVerdict, TargetInstructionsMustExecuteAtEveryWorkload) {
  SweepVerdict s = aggregate_sweep(kGemm, {entry("M=8192", verdict("M=8192", Status::PASSED, 1.3)),
                                           entry("M=70", verdict("M=70", Status::PASSED, 0.9, /*target=*/false))});
  EXPECT_EQ(s.status, Status::PASSED);
  EXPECT_FALSE(s.target_instruction_correct) << "M=70 ran without wgmma or TMA";
  EXPECT_FALSE(s.target_instruction_strict);
  Verdict v = s.aggregate_verdict();
  ASSERT_TRUE(v.runtime_mechanisms);
  EXPECT_FALSE(v.runtime_mechanisms->c_gen4);
  EXPECT_FALSE(v.target_instruction_correct);
}

TEST(SweepVerdict, WithoutTimingThereIsNoSpeedupToAggregate) {
  SweepVerdict s = aggregate_sweep(kGemm, {entry("M=8192", verdict("M=8192", Status::PASSED, 1.3)),
                                           entry("M=70", verdict("M=70", Status::PASSED))});
  EXPECT_EQ(s.status, Status::PASSED);
  EXPECT_FALSE(s.geomean_speedup);
  EXPECT_FALSE(s.worst);
  EXPECT_TRUE(has(sweep_summary(s), "geomean speedup -")) << sweep_summary(s);
}

TEST(SweepVerdict, RunSweepEvaluatesEveryWorkloadUnlessToldToStop) {
  const Definition& def = catalog().definition(kGemm);
  std::vector<const Workload*> workloads;
  for (const auto& w : catalog().workloads(kGemm)) workloads.push_back(&w);
  ASSERT_GE(workloads.size(), 4u);
  std::vector<std::string> seen;
  auto evaluate = [&](const Workload& w) {
    seen.push_back(w.uuid);
    // The second workload fails; the third is ours (INFRA_ERROR), the others pass.
    Status st = seen.size() == 2 ? Status::RUNTIME_ERROR : seen.size() == 3 ? Status::INFRA_ERROR : Status::PASSED;
    return verdict(w.label(def), st, 1.0);
  };
  std::vector<std::string> rows;
  SweepOptions keep_going;
  keep_going.on_entry = [&](const SweepEntry& e) { rows.push_back(e.workload_label); };
  SweepVerdict all = run_sweep(def, workloads, evaluate, keep_going);
  EXPECT_EQ(seen.size(), workloads.size()) << "by default every workload is evaluated";
  EXPECT_EQ(rows.size(), workloads.size());
  EXPECT_EQ(all.evaluated, workloads.size());
  EXPECT_EQ(all.status, Status::INFRA_ERROR);
  for (std::size_t i = 0; i < workloads.size(); ++i) EXPECT_EQ(all.entries[i].workload_uuid, workloads[i]->uuid);

  seen.clear();
  SweepOptions stop;
  stop.stop_at_failure = true;
  SweepVerdict stopped = run_sweep(def, workloads, evaluate, stop);
  EXPECT_EQ(seen.size(), 2u) << "stops after the kernel's first failure";
  EXPECT_EQ(stopped.evaluated, 2u);
  EXPECT_EQ(stopped.status, Status::RUNTIME_ERROR);
  EXPECT_FALSE(stopped.entries[2].verdict);
  EXPECT_TRUE(has(stopped.message, std::to_string(workloads.size() - 2) + " not evaluated")) << stopped.message;
  EXPECT_TRUE(has(sweep_table(stopped), "not evaluated"));

  // An INFRA_ERROR is not the kernel's failure: it does not stop the sweep.
  seen.clear();
  auto infra_first = [&](const Workload& w) {
    seen.push_back(w.uuid);
    return verdict(w.label(def), seen.size() == 1 ? Status::INFRA_ERROR : Status::PASSED, 1.0);
  };
  (void)run_sweep(def, workloads, infra_first, stop);
  EXPECT_EQ(seen.size(), workloads.size());
}

TEST(SweepVerdict, JsonRoundTripsAndRecomputesTheAggregate) {
  SweepVerdict s = aggregate_sweep(kGemm, {entry("M=8192", verdict("M=8192", Status::PASSED, 1.3)),
                                           entry("M=70", verdict("M=70", Status::INCORRECT_NUMERICAL)),
                                           entry("M=232", std::nullopt)});
  ordered_json j = s.to_json();
  EXPECT_EQ(j["schema"], kSweepSchema);
  EXPECT_EQ(j["status"], "INCORRECT_NUMERICAL");
  EXPECT_EQ(j["deciding_workload"], kGemm + "-M=70");
  EXPECT_EQ(j["all_correct"], false);
  EXPECT_TRUE(j["workloads"][2]["verdict"].is_null());
  EXPECT_EQ(j["workloads"][0]["axes"]["M"], 8192);
  SweepVerdict back = SweepVerdict::from_json(j);
  EXPECT_EQ(back.to_json(), j);
  EXPECT_EQ(back.status, s.status);
  EXPECT_EQ(back.entries.size(), 3u);
  EXPECT_EQ(back.entries[0].verdict->speedup, 1.3);

  // The aggregate is derived: a stored one that disagrees with the verdicts is recomputed.
  ordered_json edited = j;
  edited["status"] = "PASSED";
  EXPECT_EQ(SweepVerdict::from_json(edited).status, Status::INCORRECT_NUMERICAL);

  ordered_json wrong = j;
  wrong["schema"] = "ptxbench.verdict";
  EXPECT_THROW((void)SweepVerdict::from_json(wrong), InputError);
  wrong = j;
  wrong["workloads"][1]["verdict"]["status"] = "SOMETIMES";
  try {
    (void)SweepVerdict::from_json(wrong);
    ADD_FAILURE() << "an unknown status was read";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "workloads[1].verdict")) << e.what();
  }
}

// A run's turn stores one Verdict: the aggregate status, the geometric mean as its speedup, the
// sweep beside it; the stored document reads back to the same sweep and renders its feedback.
TEST(SweepVerdict, TheTurnVerdictCarriesTheSweepAndItsFeedback) {
  SweepVerdict passed = aggregate_sweep(kGemm, {entry("M=8192", verdict("M=8192", Status::PASSED, 2.0)),
                                                entry("M=70", verdict("M=70", Status::PASSED, 0.5))});
  Verdict v = passed.aggregate_verdict();
  EXPECT_EQ(v.status, Status::PASSED);
  ASSERT_TRUE(v.speedup);
  EXPECT_NEAR(*v.speedup, 1.0, 1e-12);
  EXPECT_FALSE(v.candidate_us) << "no single time stands for several workloads";
  EXPECT_DOUBLE_EQ(v.wall_seconds, 4.0);
  EXPECT_TRUE(v.target_instruction_correct);
  EXPECT_TRUE(has(v.workload_label, "M=8192, M=70")) << v.workload_label;

  Verdict stored = Verdict::from_json(ordered_json::parse(v.to_json().dump()));
  std::optional<SweepVerdict> back = sweep_of(stored);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->to_json(), passed.to_json());
  EXPECT_FALSE(sweep_of(verdict("M=70", Status::PASSED, 1.0))) << "a plain verdict carries no sweep";

  SweepVerdict failed = aggregate_sweep(kGemm, {entry("M=8192", verdict("M=8192", Status::PASSED, 2.0)),
                                                entry("M=70", verdict("M=70", Status::INCORRECT_NUMERICAL))});
  std::string text = render_turn_feedback(Verdict::from_json(failed.aggregate_verdict().to_json()));
  EXPECT_TRUE(has(text, "Verdict over 2 workloads of " + kGemm)) << text;
  EXPECT_TRUE(has(text, "INCORRECT_NUMERICAL at workload M=70")) << text;
  EXPECT_TRUE(has(text, sweep_table_header())) << text;
  EXPECT_TRUE(has(text, "Details of workload M=70")) << text;
  EXPECT_TRUE(has(text, "workload M=70, sm_90a")) << "the failing workload's own feedback follows: " << text;
  EXPECT_EQ(render_turn_feedback(verdict("M=70", Status::PASSED, 1.0)), render_feedback(verdict("M=70", Status::PASSED, 1.0)));
}

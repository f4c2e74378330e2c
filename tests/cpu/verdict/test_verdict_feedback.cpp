// The verdict document and the feedback text rendered from it, for each kind of outcome.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "verdict/feedback.h"
#include "verdict/verdict.h"

using namespace ptxbench;

namespace {
Verdict base(Status s) {
  Verdict v;
  v.status = s;
  v.definition = "gemm_n7168_k5120";
  v.workload_uuid = "gemm_n7168_k5120-m8192";
  v.workload_label = "M=8192";
  v.arch = "sm_90a";
  CompileSection& c = v.stages.compile.emplace();
  c.status = CompileStatus::ok;
  c.build.emplace().ptxas.kernels.push_back({"_Z1kv", 168, 0, 1024, 0, 0, 0});
  return v;
}

ordered_json load(const std::string& name) {
  return ordered_json::parse(read_file(std::string(PTXBENCH_TEST_DATA) + "/data/" + name));
}
}  // namespace

TEST(Verdict, DocumentHasSchemaAndSummary) {
  Verdict v = base(Status::PASSED);
  v.runtime_mechanisms = Mechanisms{true, false, false, false};
  v.target_instruction_correct = true;
  v.speedup = 0.93;
  ordered_json j = v.to_json();
  EXPECT_EQ(j["schema"], "ptxbench.verdict");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["status"], "PASSED");
  EXPECT_EQ(j["workload"]["label"], "M=8192");
  EXPECT_EQ(j["target_instruction"]["runtime_mechanisms"]["c_gen4"], true);
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), 0.93);
  EXPECT_TRUE(j["candidate_us"].is_null());
  EXPECT_EQ(parse_status("TIMING_ANOMALY"), Status::TIMING_ANOMALY);
  EXPECT_FALSE(parse_status("PASS").has_value());
}

TEST(Verdict, TargetInstructionRules) {
  EXPECT_TRUE(target_instruction_met("sm_90a", {false, true, false, false}));
  EXPECT_TRUE(target_instruction_met("sm_90a", {true, false, false, false}));
  EXPECT_FALSE(target_instruction_met("sm_90a", {false, false, true, true}));
  EXPECT_TRUE(target_instruction_met("sm_100a", {false, false, true, false}));
  EXPECT_FALSE(target_instruction_met("sm_100a", {true, true, false, true}));
}

TEST(Feedback, CompileErrorShowsTheLog) {
  Verdict v = base(Status::COMPILE_ERROR);
  v.message = "the candidate did not compile";
  CompileSection& c = v.stages.compile.emplace();
  c.status = CompileStatus::compile_error;
  c.build.emplace().log = "candidate.cu(12): error: identifier \"x\" is undefined";
  std::string text = render_feedback(v);
  EXPECT_NE(text.find("Verdict: COMPILE_ERROR (gemm_n7168_k5120, workload M=8192, sm_90a)"), std::string::npos);
  EXPECT_NE(text.find("identifier \"x\" is undefined"), std::string::npos);
}

TEST(Feedback, NumericalErrorNamesTrialTensorAndIndices) {
  Verdict v = base(Status::INCORRECT_NUMERICAL);
  v.message = "output C differs";
  CorrectnessSection& c = v.stages.correctness.emplace();
  c.trials_planned = 3;
  c.trials.push_back({1, TrialPhase::correctness, 11, true, std::vector<TensorComparison>{}, std::nullopt});
  TensorComparison t{"C", 100, 7, 1, 3.5, 0.75, {{{0, 3}, std::numeric_limits<double>::quiet_NaN(), 1.25}}, false};
  c.trials.push_back({2, TrialPhase::correctness, 12, false, std::vector<TensorComparison>{t}, std::nullopt});
  std::string text = render_feedback(v);
  EXPECT_NE(text.find("trial 2 of 3 (correctness) failed"), std::string::npos);
  EXPECT_NE(text.find("C: 7 of 100 elements mismatched (1 NaN/Inf)"), std::string::npos);
  EXPECT_NE(text.find("C[0, 3] = nan (expected 1.25)"), std::string::npos);
}

// A call that failed has no tensors to compare: the feedback names the error alone.
TEST(Feedback, FailedCallNamesItsError) {
  Verdict v = base(Status::RUNTIME_ERROR);
  CorrectnessSection& c = v.stages.correctness.emplace();
  c.trials_planned = 3;
  c.trials.push_back({1, TrialPhase::correctness, 11, false, std::nullopt, "cudaErrorIllegalAddress"});
  EXPECT_NE(render_feedback(v).find("Correctness: trial 1 of 3 (correctness) failed: cudaErrorIllegalAddress.\n"),
            std::string::npos);
}

TEST(Feedback, PassedShowsMechanismsAndSpeedup) {
  Verdict v = base(Status::PASSED);
  v.baseline_name = "cuBLASLt";
  v.target_instruction_correct = true;
  v.runtime_mechanisms = Mechanisms{true, true, false, false};
  RuntimeSassSection& r = v.stages.runtime_sass.emplace();
  r.available = true;
  r.counts.gmma = 1000;
  r.counts.tma = 20;
  r.mechanisms = *v.runtime_mechanisms;
  TimingSection& t = v.stages.timing.emplace();
  TimingPolicyRecord& policy = t.policy.emplace();
  policy.warmup_calls = 10;
  policy.timed_calls = 50;
  policy.trials = 3;
  policy.interleave_calls = 1;
  policy.l2_flush_factor = 2.0;
  TimingResult& result = t.result.emplace();
  result.candidate.mean_us = 812.5;
  result.candidate.spread = 0.004;
  result.baseline.mean_us = 750.0;
  result.baseline.spread = 0.01;
  result.speedup = 0.923;
  result.speedup_spread = 0.008;
  std::string text = render_feedback(v);
  EXPECT_NE(text.find("C_Gen4 (wgmma) yes, D_TMA (bulk tensor copy) yes"), std::string::npos);
  EXPECT_NE(text.find("Target-instruction correct: yes"), std::string::npos);
  EXPECT_NE(text.find("your kernel 812.5 us"), std::string::npos);
  EXPECT_NE(text.find("cuBLASLt 750.0 us; speedup 0.923x"), std::string::npos);
}

TEST(Feedback, LongOutputIsCut) {
  Verdict v = base(Status::RUNTIME_ERROR);
  v.message = std::string(20000, 'x');
  std::string text = render_feedback(v, 3000);
  EXPECT_LT(text.size(), 3200u);
  EXPECT_NE(text.find("more characters cut"), std::string::npos);
}

// A verdict the service gave before any evaluation began has only a status and a message.
TEST(Feedback, ServiceInfraVerdictRenders) {
  Verdict v = Verdict::from_json({{"schema", "ptxbench.verdict"},
                                  {"schema_version", 1},
                                  {"status", "INFRA_ERROR"},
                                  {"message", "worker failed: boom"}});
  EXPECT_EQ(render_feedback(v), "Verdict: INFRA_ERROR\nworker failed: boom\n");
}

// Verdicts recorded on the H200 (results/gemm_fixture_verdicts.md) re-render offline from their
// JSON alone, to the very text the JSON-reading renderer gave before the verdict was typed.
TEST(Feedback, RecordedH200VerdictsRenderUnchanged) {
  for (const char* name : {"h200_wgmma_tma_gemm", "h200_wrong_result"}) {
    SCOPED_TRACE(name);
    ordered_json doc = load(std::string(name) + ".verdict.json");
    EXPECT_EQ(doc["schema_version"], kVerdictSchemaVersion);
    std::string expected = read_file(std::string(PTXBENCH_TEST_DATA) + "/data/" + name + ".feedback.txt");
    EXPECT_EQ(render_feedback(Verdict::from_json(doc)), expected);
  }
  std::string text = render_feedback(Verdict::from_json(load("h200_wgmma_tma_gemm.verdict.json")));
  EXPECT_NE(text.find("C_Gen4 (wgmma) yes, D_TMA (bulk tensor copy) yes"), std::string::npos) << text;
  EXPECT_NE(text.find("speedup 0.76"), std::string::npos) << text;
  std::string w = render_feedback(Verdict::from_json(load("h200_wrong_result.verdict.json")));
  EXPECT_NE(w.find("first mismatches: C["), std::string::npos) << w;
}

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
  v.stages["compile"] = {{"status", "ok"},
                         {"ptxas", {{"kernels", {{{"name", "_Z1kv"}, {"registers", 168}, {"smem_bytes", 1024}}}},
                                    {"warnings", ordered_json::array()}}}};
  return v;
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
  v.stages["compile"] = {{"status", "compile_error"}, {"log", "candidate.cu(12): error: identifier \"x\" is undefined"}};
  std::string text = render_feedback(v.to_json());
  EXPECT_NE(text.find("Verdict: COMPILE_ERROR (gemm_n7168_k5120, workload M=8192, sm_90a)"), std::string::npos);
  EXPECT_NE(text.find("identifier \"x\" is undefined"), std::string::npos);
}

TEST(Feedback, NumericalErrorNamesTrialTensorAndIndices) {
  Verdict v = base(Status::INCORRECT_NUMERICAL);
  v.message = "output C differs";
  v.stages["correctness"] = {
      {"trials_planned", 3},
      {"trials",
       {{{"trial", 1}, {"phase", "correctness"}, {"passed", true}, {"tensors", ordered_json::array()}},
        {{"trial", 2},
         {"phase", "correctness"},
         {"passed", false},
         {"tensors",
          {{{"name", "C"}, {"passed", false}, {"elements", 100}, {"mismatches", 7}, {"non_finite", 1},
            {"max_abs_error", 3.5}, {"max_rel_error", 0.75},
            {"first_mismatches", {{{"index", {0, 3}}, {"got", "nan"}, {"expected", 1.25}}}}}}}}}}};
  std::string text = render_feedback(v.to_json());
  EXPECT_NE(text.find("trial 2 of 3 (correctness) failed"), std::string::npos);
  EXPECT_NE(text.find("C: 7 of 100 elements mismatched (1 NaN/Inf)"), std::string::npos);
  EXPECT_NE(text.find("C[0, 3] = nan (expected 1.25)"), std::string::npos);
}

TEST(Feedback, PassedShowsMechanismsAndSpeedup) {
  Verdict v = base(Status::PASSED);
  v.baseline_name = "cuBLASLt";
  v.target_instruction_correct = true;
  v.runtime_mechanisms = Mechanisms{true, true, false, false};
  v.stages["runtime_sass"] = {{"available", true}, {"gmma", 1000}, {"tma", 20}, {"tcgen05", 0},
                              {"mechanisms", to_json(*v.runtime_mechanisms)}};
  v.stages["timing"] = {{"policy", {{"trials", 3}, {"timed_calls", 50}, {"warmup_calls", 10}}},
                        {"candidate", {{"mean_us", 812.5}, {"spread", 0.004}}},
                        {"baseline", {{"mean_us", 750.0}, {"spread", 0.01}}},
                        {"speedup", 0.923},
                        {"speedup_spread", 0.008}};
  std::string text = render_feedback(v.to_json());
  EXPECT_NE(text.find("C_Gen4 (wgmma) yes, D_TMA (bulk tensor copy) yes"), std::string::npos);
  EXPECT_NE(text.find("Target-instruction correct: yes"), std::string::npos);
  EXPECT_NE(text.find("your kernel 812.5 us"), std::string::npos);
  EXPECT_NE(text.find("cuBLASLt 750.0 us; speedup 0.923x"), std::string::npos);
}

TEST(Feedback, LongOutputIsCut) {
  Verdict v = base(Status::RUNTIME_ERROR);
  v.message = std::string(20000, 'x');
  std::string text = render_feedback(v.to_json(), 3000);
  EXPECT_LT(text.size(), 3200u);
  EXPECT_NE(text.find("more characters cut"), std::string::npos);
}

// Verdicts recorded on the H200 (results/h200.md) re-render offline from their JSON alone.
TEST(Feedback, RecordedH200VerdictsRender) {
  auto load = [](const char* name) {
    return ordered_json::parse(read_file(std::string(PTXBENCH_TEST_DATA) + "/data/" + name));
  };
  ordered_json passed = load("h200_wgmma_tma_gemm.verdict.json");
  EXPECT_EQ(passed["schema_version"], kVerdictSchemaVersion);
  std::string text = render_feedback(passed);
  EXPECT_NE(text.find("Verdict: PASSED (gemm_n7168_k5120, workload M=8192, sm_90a)"), std::string::npos) << text;
  EXPECT_NE(text.find("C_Gen4 (wgmma) yes, D_TMA (bulk tensor copy) yes"), std::string::npos) << text;
  EXPECT_NE(text.find("speedup 0.76"), std::string::npos) << text;
  ordered_json wrong = load("h200_wrong_result.verdict.json");
  std::string w = render_feedback(wrong);
  EXPECT_NE(w.find("Verdict: INCORRECT_NUMERICAL"), std::string::npos);
  EXPECT_NE(w.find("first mismatches: C["), std::string::npos) << w;
}

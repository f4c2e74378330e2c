// The typed verdict: every section reads back what it writes; the stored schema-1 verdicts load and
// write again unchanged; the stages' conversions give the documents the stages wrote before the
// verdict was typed; a missing stage stays missing; bad names and types are refused naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/error.h"
#include "common/fs.h"
#include "evaluator/eval_options.h"
#include "verdict/feedback.h"
#include "verdict/verdict.h"

using namespace ptxbench;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

ordered_json load(const std::string& name) {
  return ordered_json::parse(read_file(std::string(PTXBENCH_TEST_DATA) + "/data/" + name));
}

template <class T>
void expect_round_trip(const T& value) {
  ordered_json first = value;
  T back = first.template get<T>();
  EXPECT_EQ(ordered_json(back), first) << first.dump(2);
}

// The InputError message of reading `doc` as a verdict ("" when it reads).
std::string verdict_error(const ordered_json& doc) {
  try {
    (void)Verdict::from_json(doc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TensorComparison failing_tensor() {
  return {"C", 100, 7, 2, 3.5, 0.75, {{{0, 3}, kNaN, 1.25}, {{1, 2}, kInf, -kInf}, {{1, 4}, -180.0, -181.5}}, false};
}

CompileSection full_compile() {
  CompileSection c;
  c.status = CompileStatus::banned_api;
  c.message = "uses cuBLAS";
  CompileBuild& b = c.build.emplace();
  b.arch = "sm_90a";
  b.key = "93f6";
  b.cache_hit = true;
  b.seconds = 1.5;
  b.kernels = {"_Z1kv"};
  b.ptx = {298, {{"wgmma.mma_async", 4}, {"mbarrier", 6}}};
  b.ptxas = {{{"_Z1kv", 90, 1, 32, 0, 8, 4}}, {"ptxas warning : setmaxnreg ignored"}};
  b.banned = {{"cublas", 12, "#include <cublas_v2.h>", std::nullopt, "cuBLAS is the baseline"},
              {"dynamic-loading", std::nullopt, "", "dlopen", "no dynamic loading"}};
  b.log = "ptxas info : 0 bytes gmem";
  c.wall_s = 2.25;
  return c;
}

SanitizeSection failed_sanitize() {
  SanitizeSection s;
  s.tool = "compute-sanitizer --tool memcheck";
  s.runs = {{18446744073709551557ull, "exited with code 86", false, 0.5}, {7, "killed by signal 9", true, 30.0}};
  s.passed = false;
  s.report = "========= Invalid __global__ write";
  s.wall_s = 31.0;
  s.gpu_lock_wait_s = 0.25;
  return s;
}

CorrectnessSection failed_correctness() {
  CorrectnessSection c;
  c.tolerance = {1e-2, 1e-2, 0.99};
  c.trials_planned = 3;
  c.passed = false;
  c.trials = {{1, TrialPhase::correctness, 11, true, std::vector<TensorComparison>{{"C", 100, 0, 0, 0.5, 0.01, {}, true}},
               std::nullopt},
              {2, TrialPhase::correctness, 12, false, std::vector<TensorComparison>{failing_tensor()},
               "wrote out of bounds of output C, guard after byte 12"},
              {3, TrialPhase::correctness, 13, false, std::nullopt, "cudaErrorIllegalAddress"},
              {1, TrialPhase::timing, 14, false, std::vector<TensorComparison>{failing_tensor()}, std::nullopt}};
  c.wall_s = 4.0;
  return c;
}

RuntimeSassSection measured_runtime_sass() {
  RuntimeSassSection r;
  r.available = true;
  r.source = "ncu sass__thread_inst_executed_true_per_opcode";
  r.kernels_profiled = 2;
  r.counts.gmma = 100;
  r.counts.tma = 4;
  r.mechanisms = {true, true, false, false};
  r.thread_true_opcodes = {{"HGMMA", 100}, {"UTMALDG", 4}};
  r.warp_executed_opcodes = {{"HGMMA", 4}};
  r.foreign_kernels = {"cutlass_kernel"};
  r.wall_s = 3.0;
  return r;
}

TimingSection full_timing() {
  TimingSection t;
  t.policy = policy_record(TimingPolicy{});
  t.baseline_name = "cuBLASLt";
  t.baseline_check = TrialRecord{1, TrialPhase::baseline, 5, true,
                                 std::vector<TensorComparison>{{"C", 10, 0, 0, 0.1, 0.2, {}, true}}, std::nullopt};
  t.kernels = std::vector<std::string>{"_Z1kv"};
  TimingResult& r = t.result.emplace();
  r.candidate = {998.5, 997.5, 0.003, {1000.5, 997.5, 997.5}, {{977.9, 1000.5}, {997.5}, {997.5}}};
  r.baseline = {763.1, 762.6, 0.0036, {764.7, 762.6, 762.0}, {{764.5}, {762.6}, {762.0}}};
  r.paired_ratios = {0.76, 0.765, 0.764};
  r.speedup = 0.764;
  r.speedup_spread = 0.001;
  r.floor_us = 607.7;
  r.flops = 6.0e11;
  r.min_bytes = 2.7e8;
  r.candidate_tflops = 602.2;
  r.baseline_tflops = 787.9;
  t.wall_s = 9.0;
  t.gpu_lock_wait_s = 1.0;
  return t;
}

Environment full_environment() {
  EvalOptions o;
  o.gpu_lock = "/tmp/gpu0.lock";
  o.sass_tool = SassTool::cupti;
  return {{0, "NVIDIA H200", "9.0", 132, 62914560, 150109880320, 13000, 13000}, "0.1.0", "nvcc: 13.0", o.record()};
}

}  // namespace

TEST(VerdictSections, EverySectionReadsBackWhatItWrites) {
  expect_round_trip(full_compile());
  CompileSection trusted;
  trusted.status = CompileStatus::ok;
  trusted.message = "trusted prebuilt library /x/libptxb_builtin_cublaslt.so";
  expect_round_trip(trusted);
  EXPECT_EQ(ordered_json(trusted).dump(), R"({"status":"ok","message":"trusted prebuilt library /x/libptxb_builtin_cublaslt.so"})");

  StaticSassSection static_sass;
  static_sass.available = true;
  static_sass.counts.gmma = 4;
  static_sass.mechanisms = {true, false, false, false};
  static_sass.opcodes = {{"HGMMA", 4}, {"BRA", 14}};
  static_sass.wall_s = 0.1;
  expect_round_trip(static_sass);
  StaticSassSection no_tool;
  no_tool.note = "cuobjdump not found";
  expect_round_trip(no_tool);

  expect_round_trip(failed_sanitize());
  SanitizeSection skipped;
  skipped.tool = "compute-sanitizer --tool memcheck";
  skipped.skipped = "disabled by option";
  expect_round_trip(skipped);
  SanitizeSection retried = failed_sanitize();
  retried.gpu_alone_after_shared_timeout =
      SharedTimeoutAttempt<SanitizeSection>{"timed out", std::make_shared<const SanitizeSection>(failed_sanitize()), "out"};
  expect_round_trip(retried);

  expect_round_trip(failed_correctness());

  expect_round_trip(measured_runtime_sass());
  RuntimeSassSection disabled;
  disabled.available = false;
  disabled.note = "disabled by option";
  expect_round_trip(disabled);
  RuntimeSassSection only_retry;  // timed out twice under ncu before measuring anything
  only_retry.gpu_alone_after_shared_timeout = SharedTimeoutAttempt<RuntimeSassSection>{"ncu timed out", nullptr, std::nullopt};
  expect_round_trip(only_retry);
  EXPECT_EQ(ordered_json(only_retry).dump(), R"({"gpu_alone_after_shared_timeout":{"message":"ncu timed out"}})");

  expect_round_trip(full_timing());
  TimingSection failed = full_timing();
  failed.result.reset();
  failed.kernels.reset();
  expect_round_trip(failed);
  EXPECT_EQ(ordered_json(failed)["baseline"], "cuBLASLt") << "the name, until the times replace it";
  TimingSection timing_skipped;
  timing_skipped.skipped = "disabled by option";
  expect_round_trip(timing_skipped);

  expect_round_trip(full_environment());
  Environment triton = full_environment();  // a Triton candidate's runtime is recorded beside the GPU
  triton.language = "triton";
  triton.python = "3.12.3";
  triton.torch = "2.11.0+cu130";
  triton.triton = "3.6.0";
  expect_round_trip(triton);
  EXPECT_EQ(ordered_json(triton)["triton"], "3.6.0");
  EXPECT_FALSE(ordered_json(full_environment()).contains("language")) << "absent for verdicts that never had it";

  Verdict v;
  v.status = Status::TIMING_ANOMALY;
  v.message = "below the floor";
  v.definition = "gemm_n7168_k5120";
  v.workload_uuid = "gemm_n7168_k5120-m8192";
  v.workload_label = "M=8192";
  v.arch = "sm_100a";
  v.runtime_mechanisms = Mechanisms{false, false, true, true};
  v.candidate_us = 1.5;
  v.baseline_us = 2.5;
  v.baseline_name = "cuBLASLt";
  v.seed = 20261129;
  v.started_at = "2026-11-29T12:39:32Z";
  v.wall_seconds = 7.25;
  v.stages = {full_compile(), static_sass, retried, failed_correctness(), measured_runtime_sass(), full_timing(), "out"};
  v.environment = full_environment();
  v.extra = {{"service", {{"task", "t1"}, {"worker", "gpu0.1"}, {"attempt", 2}}}};
  ordered_json doc = v.to_json();
  EXPECT_EQ(Verdict::from_json(doc).to_json(), doc) << doc.dump(2);
  EXPECT_EQ(doc["target_instruction"]["rule"], target_instruction_rule("sm_100a"));
}

// What the evaluator writes through the typed sections is the document the stages wrote before:
// the same keys, in the same order, with the same values.
TEST(VerdictSections, StageConversionsWriteTheDocumentsOfTheStages) {
  CompileResult r;
  r.status = CompileStatus::ok;
  r.message = "compiled";
  r.arch = "sm_90a";
  r.key = "abc";
  r.seconds = 3.5;
  r.kernels = {"_Z1kv"};
  r.ptx.instructions = 10;
  r.ptx.families = {{"wgmma.mma_async", 4}};
  r.ptxas.kernels = {{"_Z1kv", 90, 1, 32, 64, 8, 16, 24}};
  r.ptxas.warnings = {"w"};
  r.source_findings = {{"cublas", "cuBLAS is the baseline", 3, "cublasLtMatmul("}};
  r.binary.banned = {{"dynamic-loading", "no dlopen", "dlopen"}};
  r.log = std::string(20000, 'l');
  // `ptxbench compile --json` writes this document too.
  const ordered_json c = compile_section(r);
  EXPECT_EQ(c["status"], "ok");
  EXPECT_EQ(c["arch"], "sm_90a");
  EXPECT_EQ(c["key"], "abc");
  EXPECT_EQ(c["kernels"], ordered_json::array({"_Z1kv"}));
  EXPECT_EQ(c["ptx"]["families"]["wgmma.mma_async"], 4);
  EXPECT_EQ(c["ptxas"]["kernels"][0]["registers"], 90);
  EXPECT_EQ(c["ptxas"]["kernels"][0].count("cmem0_bytes"), 0u);
  EXPECT_EQ(c["banned"][0], (ordered_json{{"rule", "cublas"}, {"line", 3}, {"text", "cublasLtMatmul("}, {"reason", "cuBLAS is the baseline"}}));
  EXPECT_EQ(c["banned"][1], (ordered_json{{"rule", "dynamic-loading"}, {"symbol", "dlopen"}, {"reason", "no dlopen"}}));
  EXPECT_EQ(c["log"].get<std::string>().size(), kCompileLogLimit + std::string("\n[... truncated ...]").size());

  StaticSass s;
  s.available = true;
  s.total = {{"HGMMA", 4}, {"UTMALDG", 2}, {"UTCHMMA", 1}, {"LDTM", 1}};
  s.mechanisms = mechanisms_from(s.total);
  EXPECT_EQ(ordered_json(static_sass_section(s)), to_json(s));
  StaticSass missing;
  missing.note = "cuobjdump not found";
  EXPECT_EQ(ordered_json(static_sass_section(missing)), to_json(missing));

  RuntimeSass rs;
  rs.available = true;
  rs.source = "ncu";
  rs.kernels_profiled = 1;
  rs.thread_true = {{"HGMMA", 40}, {"UTMASTG", 3}};
  rs.warp_executed = {{"HGMMA", 2}};
  rs.mechanisms = mechanisms_from(rs.thread_true);
  rs.foreign_kernels = {"k2"};
  EXPECT_EQ(ordered_json(runtime_sass_section(rs)), to_json(rs));
  RuntimeSass none;
  none.note = "disabled";
  EXPECT_EQ(ordered_json(runtime_sass_section(none)), to_json(none));

  // The timing section as the stage built it: policy and baseline name, the baseline check, the
  // kernels, then the summary's keys (its "baseline" times replacing the name), then the FLOPs.
  TimingPolicy policy;
  TimingSummary summary = summarize_timing({{10, 11, 12}, {11, 12}}, {{20, 21}, {22, 23}}, 5.0);
  OutputCheck check{{TensorComparison{"C", 4, 0, 0, 0.1, 0.2, {}, true}}, {}};
  ordered_json old = {{"policy", policy.to_json()}, {"baseline", "cuBLASLt"}};
  old["baseline_check"] = trial_record(1, TrialPhase::baseline, 9, check);
  old["kernels"] = std::vector<std::string>{"_Z1kv"};
  ordered_json body = to_json(summary);
  for (auto it = body.begin(); it != body.end(); ++it) old[it.key()] = it.value();
  old["flops"] = 1e9;
  old["min_bytes"] = 1e6;
  old["candidate_tflops"] = 1e9 / (summary.candidate.mean_us * 1e-6) * 1e-12;
  old["baseline_tflops"] = 1e9 / (summary.baseline.mean_us * 1e-6) * 1e-12;
  TimingSection t;
  t.policy = policy_record(policy);
  t.baseline_name = "cuBLASLt";
  t.baseline_check = trial_record(1, TrialPhase::baseline, 9, check);
  t.kernels = std::vector<std::string>{"_Z1kv"};
  t.result = timing_result(summary, 1e9, 1e6);
  EXPECT_EQ(ordered_json(t), old);

  // environment.options keeps the keys and order of EvalOptions' record.
  std::vector<std::string> keys;
  ordered_json options = EvalOptions{}.record();
  for (const auto& [k, value] : options.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"device", "correctness_trials", "tolerance", "timing", "sanitize", "sanitize_runs",
                                            "sanitize_timeout_s", "profile", "sass_tool", "profile_always",
                                            "profile_timeout_s", "measure_time", "call_timeout_s", "trial_timeout_s",
                                            "compile_timeout_s", "shared_gpu", "state_budget_fraction", "compare_threads"}));
}

TEST(VerdictSections, OutputProblemsHaveKindsAndTheTrialJoinsTheirMessages) {
  OutputCheck check{{TensorComparison{"C", 4, 0, 0, 0, 0, {}, true}},
                    {{OutputProblemKind::input_modified, "input A was modified (inputs are read-only)"},
                     {OutputProblemKind::guard_written, "wrote out of bounds of output C, guard after byte 8"}}};
  EXPECT_FALSE(check.passed());
  EXPECT_TRUE(check.has(OutputProblemKind::guard_written));
  TrialRecord t = trial_record(2, TrialPhase::timing, 5, check);
  EXPECT_FALSE(t.passed);
  EXPECT_EQ(t.error, "input A was modified (inputs are read-only); wrote out of bounds of output C, guard after byte 8");
  EXPECT_EQ(to_string(OutputProblemKind::input_modified), "input_modified");
  EXPECT_EQ(parse_output_problem_kind("guard_written"), OutputProblemKind::guard_written);
}

// The verdicts recorded on the H200 (schema version 1) load, and write again to the same document.
TEST(VerdictSections, StoredSchemaOneVerdictsLoadAndWriteTheSameDocument) {
  for (const char* name : {"h200_wgmma_tma_gemm.verdict.json", "h200_wrong_result.verdict.json"}) {
    SCOPED_TRACE(name);
    ordered_json doc = load(name);
    ASSERT_EQ(doc["schema_version"], 1);
    Verdict v = Verdict::from_json(doc);
    EXPECT_EQ(v.to_json(), doc);
    ASSERT_TRUE(v.environment.has_value());
    EXPECT_EQ(v.environment->gpu.name, "NVIDIA H200");
    EXPECT_FALSE(v.environment->options.sass_tool.has_value()) << "recorded before the option existed";
    ASSERT_TRUE(v.stages.compile && v.stages.compile->build);
    EXPECT_FALSE(v.stages.compile->wall_s.has_value()) << "recorded before stages kept their wall time";
  }
  Verdict passed = Verdict::from_json(load("h200_wgmma_tma_gemm.verdict.json"));
  ASSERT_TRUE(passed.stages.timing && passed.stages.timing->result);
  EXPECT_DOUBLE_EQ(passed.stages.timing->result->baseline.mean_us, 763.1111666666667);
  EXPECT_EQ(passed.stages.correctness->trials.size(), 6u);
  EXPECT_EQ(passed.stages.correctness->trials[3].phase, TrialPhase::timing);
  ASSERT_TRUE(passed.stages.timing->baseline_check.has_value());
  EXPECT_EQ(passed.stages.timing->baseline_check->phase, TrialPhase::baseline);
}

TEST(VerdictSections, StagesNotReachedStayAbsent) {
  Verdict wrong = Verdict::from_json(load("h200_wrong_result.verdict.json"));
  EXPECT_EQ(wrong.status, Status::INCORRECT_NUMERICAL);
  EXPECT_TRUE(wrong.stages.correctness.has_value());
  EXPECT_FALSE(wrong.stages.runtime_sass.has_value());
  EXPECT_FALSE(wrong.stages.timing.has_value());
  EXPECT_FALSE(wrong.speedup.has_value());
  ordered_json doc = wrong.to_json();
  EXPECT_FALSE(doc["stages"].contains("runtime_sass"));
  EXPECT_FALSE(doc["stages"].contains("timing"));
  const auto& first = wrong.stages.correctness->trials.at(0).tensors.value().at(0).first_mismatches.at(0);
  EXPECT_EQ(first.index, (std::vector<int64_t>{0, 0}));
  EXPECT_DOUBLE_EQ(first.got, -180.0);

  // The service's own INFRA_ERROR: a status and a message, its task stamp kept as it came.
  ordered_json infra = {{"schema", "ptxbench.verdict"},
                        {"schema_version", 1},
                        {"status", "INFRA_ERROR"},
                        {"message", "worker failed: x"},
                        {"service", {{"task", "t1"}, {"worker", "gpu0.1"}, {"attempt", 3}}}};
  Verdict v = Verdict::from_json(infra);
  EXPECT_EQ(v.status, Status::INFRA_ERROR);
  EXPECT_FALSE(v.stages.compile || v.stages.static_sass || v.stages.sanitize || v.stages.correctness ||
               v.stages.runtime_sass || v.stages.timing || v.stages.runner_output);
  EXPECT_FALSE(v.environment.has_value());
  EXPECT_EQ(v.to_json()["service"], infra["service"]);
  EXPECT_EQ(v.to_json()["environment"], ordered_json::object());
  EXPECT_TRUE(stage_timings(v.stages).empty());
}

TEST(VerdictSections, DiagnosticTimingOptionsAreWrittenOnlyWhenOffTheirDefault) {
  // Stored verdicts keep their bytes: the defaults write no key; a diagnostic run writes its key.
  ordered_json plain = policy_record(TimingPolicy{});
  EXPECT_FALSE(plain.contains("fresh_inputs"));
  EXPECT_FALSE(plain.contains("runner_l2_flush"));
  EXPECT_TRUE(plain.get<TimingPolicyRecord>().fresh_inputs) << "an older verdict had fresh inputs on";
  TimingPolicy diag;
  diag.fresh_inputs = false;
  diag.runner_l2_flush = true;
  ordered_json j = policy_record(diag);
  EXPECT_EQ(j.at("fresh_inputs"), false);
  EXPECT_EQ(j.at("runner_l2_flush"), true);
  TimingPolicyRecord back = j.get<TimingPolicyRecord>();
  EXPECT_FALSE(back.fresh_inputs);
  EXPECT_TRUE(back.runner_l2_flush);
  EXPECT_EQ(ordered_json(back), j);
}

TEST(VerdictSections, StageTimingsNameEachStageThatRan) {
  Verdict v;
  v.stages.compile = full_compile();
  SanitizeSection s = failed_sanitize();
  s.gpu_alone_after_shared_timeout = SharedTimeoutAttempt<SanitizeSection>{"timed out", nullptr, std::nullopt};
  v.stages.sanitize = s;
  v.stages.runner_output = "x";
  auto t = stage_timings(v.stages);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].stage, "compile");
  EXPECT_EQ(t[0].wall_s, 2.25);
  EXPECT_FALSE(t[0].retried_alone);
  EXPECT_EQ(t[1].stage, "sanitize");
  EXPECT_EQ(t[1].gpu_lock_wait_s, 0.25);
  EXPECT_TRUE(t[1].retried_alone);
}

TEST(VerdictSections, BadNamesAndTypesNameTheField) {
  ordered_json doc = load("h200_wgmma_tma_gemm.verdict.json");
  auto with = [&](const ordered_json::json_pointer& at, const ordered_json& value) {
    ordered_json d = doc;
    d[at] = value;
    return verdict_error(d);
  };
  using ptr = ordered_json::json_pointer;
  EXPECT_EQ(with(ptr("/status"), "PASS"),
            "verdict: status: unknown verdict status 'PASS' (expected PASSED, COMPILE_ERROR, BANNED_API, ABI_ERROR, "
            "SANITIZER_ERROR, TIMEOUT, INCORRECT_NUMERICAL, RUNTIME_ERROR, TIMING_ANOMALY or INFRA_ERROR)");
  EXPECT_EQ(with(ptr("/stages/correctness/trials/1/phase"), "warmup"),
            "verdict: stages.correctness.trials[1].phase: unknown trial phase 'warmup' (expected correctness, timing, "
            "baseline or spot_check)");
  EXPECT_EQ(with(ptr("/stages/compile/status"), "exploded"),
            "verdict: stages.compile.status: unknown compile status 'exploded' (expected ok, compile_error, banned_api, "
            "abi_error or timeout)");
  EXPECT_EQ(with(ptr("/environment/options/sass_tool"), "nvprof"),
            "verdict: environment.options.sass_tool: unknown SASS tool 'nvprof' (expected ncu or cupti)");
  EXPECT_EQ(with(ptr("/stages/timing/candidate/mean_us"), "fast"),
            "verdict: stages.timing.candidate.mean_us: type must be number, but is string");
  EXPECT_EQ(with(ptr("/stages/correctness/trials/0/tensors/0/first_mismatches"),
                 ordered_json::array({{{"index", {0}}, {"got", "lots"}, {"expected", 1}}})),
            "verdict: stages.correctness.trials[0].tensors[0].first_mismatches[0].got: expected a number, \"nan\", "
            "\"inf\" or \"-inf\", got \"lots\"");
  EXPECT_EQ(with(ptr("/target_instruction/runtime_mechanisms/c_gen4"), 1),
            "verdict: target_instruction.runtime_mechanisms.c_gen4: type must be boolean, but is number");
  EXPECT_EQ(with(ptr("/schema_version"), 2), "verdict: schema_version: 2 is not a version this ptxbench reads (1 to 1)");
  EXPECT_EQ(with(ptr("/schema"), "ptxbench.task"), "verdict: schema: 'ptxbench.task' is not a verdict (ptxbench.verdict)");
  EXPECT_EQ(verdict_error({{"message", "no status"}}), "verdict: status: missing");
  EXPECT_EQ(verdict_error(ordered_json::array()), "verdict: (top level): expected an object, got array");
}

TEST(VerdictSections, EnumNamesRoundTripAndBadNamesListTheGoodOnes) {
  for (auto t : {SassTool::ncu, SassTool::cupti}) EXPECT_EQ(parse_sass_tool(to_string(t)), t);
  for (auto p : {TrialPhase::correctness, TrialPhase::timing, TrialPhase::baseline}) EXPECT_EQ(parse_trial_phase(to_string(p)), p);
  for (auto k : {OutputProblemKind::guard_written, OutputProblemKind::input_modified})
    EXPECT_EQ(parse_output_problem_kind(to_string(k)), k);
  for (auto s : {CompileStatus::ok, CompileStatus::compile_error, CompileStatus::banned_api, CompileStatus::abi_error,
                 CompileStatus::timeout})
    EXPECT_EQ(parse_compile_status(to_string(s)), s);
  EXPECT_EQ(status_from_name("TIMEOUT"), Status::TIMEOUT);
  EXPECT_EQ(error_of([] { (void)parse_sass_tool("NCU"); }), "SASS tool: unknown SASS tool 'NCU' (expected ncu or cupti)");
  EXPECT_EQ(error_of([] { (void)parse_output_problem_kind("oob"); }),
            "output problem kind: unknown output problem kind 'oob' (expected guard_written or input_modified)");
  EXPECT_EQ(error_of([] { (void)parse_trial_phase(""); }),
            "trial phase: unknown trial phase '' (expected correctness, timing, baseline or spot_check)");
}

// The fake backend's mark is a typed field (reports refuse such verdicts unless asked): written
// as the top-level "fake" it always was, read back from old and new documents alike, never left
// in `extra` where a reader would have to look it up by name.
TEST(VerdictSections, TheFakeBackendsMarkIsTyped) {
  Verdict v;
  v.status = Status::PASSED;
  v.fake_backend = true;
  v.extra["service"] = {{"task", 7}};
  ordered_json doc = v.to_json();
  EXPECT_EQ(doc.at("fake"), true);
  Verdict back = Verdict::from_json(doc);
  EXPECT_TRUE(back.fake_backend);
  EXPECT_FALSE(back.extra.contains("fake"));
  EXPECT_EQ(back.extra.at("service").at("task"), 7);
  EXPECT_FALSE(Verdict{}.to_json().contains("fake")) << "a real verdict's document is unchanged";
  EXPECT_FALSE(Verdict::from_json({{"status", "PASSED"}}).fake_backend);
  EXPECT_THROW(Verdict::from_json({{"status", "PASSED"}, {"fake", "yes"}}), InputError);
}

// The profile held against the timed calls (docs/verdict.md): its record reads back, older verdicts
// without it still read, and a void profile is told to the model with its reason.
TEST(VerdictSections, TheProfileCheckRecordRoundTripsAndAVoidProfileIsToldInTheFeedback) {
  TimingSection t = full_timing();
  IntegrityRecord& in = t.integrity.emplace();
  in.profile_check = ProfileCheckRecord{false,
                                        {"the timed calls took 30000.0 us (median) against the profiled call's 960.0 us of "
                                         "device time: more than 1.5 times, so the profiled call did not run what was timed"},
                                        {"the hardware count of TMA was not collected: its claim rests on the time alone"},
                                        960.0,
                                        30000.0,
                                        31.25,
                                        4000000,
                                        300000,
                                        4000000.0,
                                        std::nullopt};
  expect_round_trip(t);
  EXPECT_FALSE(ordered_json(*t.integrity)["profile_check"].contains("hw_tma")) << "not collected stays absent";
  IntegrityRecord older = *t.integrity;
  older.profile_check.reset();
  expect_round_trip(older);
  EXPECT_FALSE(ordered_json(older).contains("profile_check"));

  Verdict v;
  v.status = Status::PASSED;
  v.arch = "sm_90a";
  v.definition = "gemm_n7168_k5120";
  v.runtime_mechanisms = Mechanisms{};
  RuntimeSassSection& rs = v.stages.runtime_sass.emplace(measured_runtime_sass());
  rs.mechanisms = Mechanisms{true, true, false, false};
  v.stages.timing = t;
  std::string text = render_feedback(v);
  EXPECT_NE(text.find("does not describe the timed calls"), std::string::npos) << text;
  EXPECT_NE(text.find("did not run what was timed"), std::string::npos) << text;
  EXPECT_NE(text.find("Target-instruction correct: no"), std::string::npos) << text;
  in.profile_check->holds = true;
  in.profile_check->reasons.clear();
  v.stages.timing = t;
  EXPECT_EQ(render_feedback(v).find("does not describe"), std::string::npos);
}

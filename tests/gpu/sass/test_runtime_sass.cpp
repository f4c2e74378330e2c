// Runtime SASS counts. ncu (the default) runs only when the cubin holds a mechanism opcode; a
// cubin without any gets all mechanisms false from its static listing. The experimental CUPTI
// path must fail safe: either its counts equal ncu's exactly, or the evaluation is INFRA_ERROR
// (on CUPTI 13.0 it records only the first kernel launched: results/runtime_sass_tools.md).
#include <fmt/format.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "definitions/catalog.h"
#include "gpu_test_support.h"
#include "sass/pc_counts.h"
#include "suite/candidate_suite.h"
#include "evaluator/evaluator.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

EvalOptions counting_only(const std::string& tool) {
  EvalOptions o;
  o.seed = 20261129;
  o.sanitize = false;
  o.measure_time = false;
  o.correctness_trials = 1;
  o.sass_tool = parse_sass_tool(tool);
  return o;
}

const SuiteCase& find_case(const CandidateSuite& suite, const std::string& name) {
  for (const auto& c : suite.cases)
    if (c.name == name) return c;
  throw Error("test", "no case " + name);
}

}  // namespace

class RuntimeSassTools : public GpuTest {};

TEST_F(RuntimeSassTools, RunnerListsTheMetricsWeCount) {
  ProcessSpec spec;
  spec.argv = {(executable_dir() / "ptxbench-runner").string(), "sass-metrics"};
  ProcessResult r = run_process(spec, 60);
  ASSERT_TRUE(r.status.success()) << r.err.text;
  EXPECT_NE(r.out.text.find(std::string(kCuptiWarpMetric) + ":"), std::string::npos) << r.out.text;
  EXPECT_NE(r.out.text.find(std::string(kCuptiThreadTrueMetric) + ":"), std::string::npos) << r.out.text;
}

TEST_F(RuntimeSassTools, NcuRunsOnlyWhenTheCubinHasMechanismOpcodes) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  CandidateSuite suite = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures/gemm/suite.json");
  Evaluator ncu(catalog, counting_only("ncu"));
  Verdict simt = ncu.evaluate_source(suite.definition, "", find_case(suite, "simt_tiled_gemm").source);
  ASSERT_EQ(simt.status, Status::PASSED) << simt.message;
  ASSERT_TRUE(simt.stages.runtime_sass.has_value());
  EXPECT_EQ(simt.stages.runtime_sass->source.rfind("static SASS", 0), 0u);
  ASSERT_TRUE(simt.runtime_mechanisms.has_value());
  EXPECT_FALSE(simt.runtime_mechanisms->c_gen4);
  Verdict never = ncu.evaluate_source(suite.definition, "", find_case(suite, "wgmma_never_taken").source);
  ASSERT_EQ(never.status, Status::PASSED) << never.message;
  ASSERT_TRUE(never.stages.runtime_sass.has_value());
  EXPECT_EQ(never.stages.runtime_sass->source.rfind("ncu", 0), 0u);
  EXPECT_FALSE(never.runtime_mechanisms->c_gen4) << "compiled in, never executed";
}

// Includes a three-kernel candidate (the SIMT attention backward), profiled although it has no
// mechanism opcode, to see whether CUPTI counts every kernel of a module.
TEST_F(RuntimeSassTools, ExperimentalCuptiCountsEqualNcuOrFailSafe) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  CandidateSuite gemm = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures/gemm/suite.json");
  CandidateSuite bwd = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures/attention/mha_bwd_suite.json");
  EvalOptions a_options = counting_only("ncu"), b_options = counting_only("cupti");
  a_options.profile_always = b_options.profile_always = true;
  Evaluator ncu(catalog, a_options);
  Evaluator cupti(catalog, b_options);
  struct Case {
    const CandidateSuite& suite;
    const char* name;
    const char* workload;
  };
  for (const Case& k : {Case{gemm, "wgmma_tma_gemm", ""}, Case{gemm, "wgmma_never_taken", ""},
                        Case{bwd, "simt_flash_bwd", "S=1024"}}) {
    SCOPED_TRACE(k.name);
    const SuiteCase& c = find_case(k.suite, k.name);
    Verdict a = ncu.evaluate_source(k.suite.definition, k.workload, c.source);
    Verdict b = cupti.evaluate_source(k.suite.definition, k.workload, c.source);
    ASSERT_EQ(a.status, Status::PASSED) << a.message;
    ASSERT_TRUE(a.stages.runtime_sass.has_value());
    const RuntimeSassSection& sa = *a.stages.runtime_sass;
    fmt::print("[runtime_sass] {:<18} ncu {:.2f} s gmma {} tma {} kernels {} | cupti {} {:.2f} s {}\n", k.name,
               sa.wall_s.value_or(0.0), sa.counts.gmma, sa.counts.tma, sa.kernels_profiled, to_string(b.status),
               b.stages.runtime_sass ? b.stages.runtime_sass->wall_s.value_or(0.0) : 0.0,
               b.status == Status::PASSED ? "" : b.message.substr(0, 300));
    if (b.status == Status::INFRA_ERROR) continue;  // fail-safe: never counted against a model
    ASSERT_EQ(b.status, Status::PASSED) << b.message;
    ASSERT_TRUE(b.stages.runtime_sass.has_value());
    const RuntimeSassSection& sb = *b.stages.runtime_sass;
    EXPECT_EQ(sa.thread_true_opcodes, sb.thread_true_opcodes);
    EXPECT_EQ(to_json(sa.mechanisms), to_json(sb.mechanisms));
  }
}

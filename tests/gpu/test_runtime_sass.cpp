// Runtime SASS counts: CUPTI SASS metrics inside the runner (the default) against Nsight Compute,
// on the same kernels and inputs. Both count predicate-true thread executions per opcode; they
// must agree exactly, including on the fixture whose wgmma is compiled in but never taken.
#include <fmt/format.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "definitions/catalog.h"
#include "gpu_test_support.h"
#include "sass/pc_counts.h"
#include "suite/candidate_suite.h"
#include "worker/evaluator.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

EvalOptions counting_only(const std::string& tool) {
  EvalOptions o;
  o.seed = 20261129;
  o.sanitize = false;
  o.measure_time = false;
  o.correctness_trials = 1;
  o.sass_tool = tool;
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

TEST_F(RuntimeSassTools, CuptiCountsEqualNcuCounts) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  CandidateSuite suite = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures/gemm/suite.json");
  Evaluator ncu(catalog, counting_only("ncu"));
  Evaluator cupti(catalog, counting_only("cupti"));
  for (const char* name : {"wgmma_tma_gemm", "wgmma_never_taken", "simt_tiled_gemm"}) {
    SCOPED_TRACE(name);
    const SuiteCase& c = find_case(suite, name);
    Verdict a = ncu.evaluate_source(suite.definition, "", c.source);
    Verdict b = cupti.evaluate_source(suite.definition, "", c.source);
    ASSERT_EQ(a.status, Status::PASSED) << a.message;
    ASSERT_EQ(b.status, Status::PASSED) << b.message;
    const auto& sa = a.stages.at("runtime_sass");
    const auto& sb = b.stages.at("runtime_sass");
    fmt::print("[runtime_sass] {:<18} ncu {:.2f} s gmma {} tma {} | cupti {:.2f} s gmma {} tma {}\n", name,
               sa.value("wall_s", 0.0), sa.value("gmma", -1), sa.value("tma", -1), sb.value("wall_s", 0.0),
               sb.value("gmma", -1), sb.value("tma", -1));
    EXPECT_EQ(sb.at("source").get<std::string>().rfind("CUPTI", 0), 0u);
    EXPECT_EQ(sa.at("thread_true_opcodes"), sb.at("thread_true_opcodes"));
    EXPECT_EQ(sa.at("warp_executed_opcodes"), sb.at("warp_executed_opcodes"));
    EXPECT_EQ(sa.at("mechanisms"), sb.at("mechanisms"));
  }
}

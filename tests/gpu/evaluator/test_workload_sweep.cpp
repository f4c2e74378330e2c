// The Hopper pack's expert GEMM over the whole GEMM sweep of gemm_n7168_k5120 (M = 8192, 70, 232,
// 972, 2379) through one Evaluator: PASSED with wgmma/TMA executed at every workload, compiled once
// (the later workloads hit the compile cache), and the table with the geometric-mean and worst
// speedups printed. Without the sanitizer, to keep its device time to a few minutes; the sanitizer's
// verdict on the same kernel is FixtureVerdicts.ExpertKernelsPassWithTheirMechanisms'.
#include <cstdlib>
#include <fmt/format.h>

#include "common/fs.h"
#include "definitions/catalog.h"
#include "definitions/workload_selection.h"
#include "evaluator/workload_sweep.h"
#include "gpu_test_support.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

class WorkloadSweep : public GpuTest {};

TEST_F(WorkloadSweep, TheExpertGemmPassesAtEveryWorkloadOfItsSweep) {
  const std::string definition = "gemm_n7168_k5120";
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  EvalOptions o;
  o.seed = 20261205;
  o.sanitize = false;
  o.call_timeout_s = 20;
  Evaluator evaluator(catalog, o);
  std::vector<const Workload*> workloads = select_workloads(catalog, definition, parse_workload_selection("all"));
  ASSERT_EQ(workloads.size(), 5u);
  SweepCandidate candidate{read_file(fs::path(PTXBENCH_SOURCE_DIR) / "knowledge/hopper/experts" / (definition + ".cu")),
                           CandidateLanguage::cuda, {}};
  fmt::print("[sweep] {}", sweep_table_header());
  SweepOptions options;
  options.on_entry = [](const SweepEntry& e) {
    fmt::print("[sweep] {}", sweep_table_row(e));
    std::fflush(stdout);
  };
  SweepVerdict s = evaluate_sweep(evaluator, catalog.definition(definition), workloads, candidate, options);
  fmt::print("[sweep] {}\n", sweep_summary(s));
  if (const char* out = std::getenv("PTXBENCH_TEST_OUT"); out && *out)
    write_file_atomic(fs::path(out) / "expert_gemm.sweep.json", s.to_json().dump(2));

  EXPECT_EQ(s.status, Status::PASSED) << s.message;
  EXPECT_EQ(s.passed, workloads.size());
  EXPECT_TRUE(s.target_instruction_correct) << "wgmma or TMA executed at every M";
  ASSERT_TRUE(s.geomean_speedup && s.worst_speedup);
  EXPECT_GT(*s.worst_speedup, 0.0);
  EXPECT_LE(*s.worst_speedup, *s.geomean_speedup);
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    SCOPED_TRACE(s.entries[i].workload_label);
    ASSERT_TRUE(s.entries[i].verdict);
    const Verdict& v = *s.entries[i].verdict;
    EXPECT_EQ(v.workload_uuid, workloads[i]->uuid);
    ASSERT_TRUE(v.stages.compile && v.stages.compile->build);
    // Compiled once: every workload after the first takes the first one's build from the cache.
    if (i > 0) {
      EXPECT_TRUE(v.stages.compile->build->cache_hit);
      EXPECT_EQ(v.stages.compile->build->key, s.entries[0].verdict->stages.compile->build->key);
    }
  }
}

// The evaluator against its fixture suites (tests/fixtures/gemm/suite.json, tests/fixtures/attention/):
// every case gets its expected verdict, and the evaluator itself survives the hang, the crash and the
// out-of-bounds write (this process goes on to evaluate a good kernel afterwards).
#include <cstdlib>
#include <fmt/format.h>

#include "common/fs.h"
#include "definitions/catalog.h"
#include "gpu_test_support.h"
#include "suite/candidate_suite.h"
#include "evaluator/evaluator.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

EvalOptions test_options() {
  EvalOptions o;
  o.seed = 20261129;
  o.sanitize_timeout_s = 30;  // hang fixtures cost seconds, not minutes, of device time
  o.call_timeout_s = 10;
  return o;
}

void keep_verdict(const std::string& name, const Verdict& v) {
  const char* out = std::getenv("PTXBENCH_TEST_OUT");
  if (out && *out) write_file_atomic(fs::path(out) / (name + ".verdict.json"), v.to_json().dump(2));
}

// Evaluates every case (on `workload`, default: the definition's default) and checks it against its
// expectation; returns the first PASSED case.
const SuiteCase* expect_suite(Evaluator& evaluator, const CandidateSuite& suite, const std::string& workload = "") {
  const SuiteCase* good = nullptr;
  for (const auto& c : suite.cases) {
    SCOPED_TRACE(c.name);
    Verdict v = evaluator.evaluate_source(suite.definition, workload, c.source);
    keep_verdict(c.name, v);
    ordered_json doc = v.to_json();
    EXPECT_EQ(Verdict::from_json(doc).to_json(), doc) << "the typed verdict reads back what the evaluator wrote";
    fmt::print("[fixture] {:<28} {:<20} {}\n", c.name, to_string(v.status), v.message.substr(0, 160));
    for (const auto& problem : expectation_mismatches(c.expect, v)) ADD_FAILURE() << problem << ": " << v.message;
    if (v.status == Status::PASSED) {
      EXPECT_TRUE(v.runtime_mechanisms.has_value());
      if (v.runtime_mechanisms) {
        EXPECT_EQ(v.target_instruction_correct, target_instruction_met("sm_90a", *v.runtime_mechanisms));
      }
      EXPECT_GT(v.speedup.value_or(0.0), 0.0);
      if (!good) good = &c;
    }
  }
  return good;
}

}  // namespace

class FixtureVerdicts : public GpuTest {};

TEST_F(FixtureVerdicts, EveryFixtureGetsItsExpectedVerdict) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  CandidateSuite suite = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures/gemm/suite.json");
  ASSERT_GE(suite.cases.size(), 10u);
  Evaluator evaluator(catalog, test_options());
  const SuiteCase* good = expect_suite(evaluator, suite);
  // Still alive after the hang, crash and out-of-bounds fixtures: a good kernel still passes.
  ASSERT_NE(good, nullptr);
  Verdict after = evaluator.evaluate_source(suite.definition, "", good->source);
  EXPECT_EQ(after.status, Status::PASSED) << after.message;
}

// The adversarial suite (issues 15 and 16): each case plays one trick, to fake a correct answer,
// a time or the target-instruction claim, or to reach outside the sandbox; its expected verdict is
// the one that shows the trick failed. Printed with the coverage and the messages for the results.
TEST_F(FixtureVerdicts, AdversarialCandidatesGetTheVerdictsThatShowTheirTrickFailed) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  CandidateSuite suite = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures/gemm/adversarial_suite.json");
  ASSERT_GE(suite.cases.size(), 10u);
  Evaluator evaluator(catalog, test_options());
  for (const auto& c : suite.cases) {
    SCOPED_TRACE(c.name);
    Verdict v = evaluator.evaluate_source(suite.definition, "", c.source);
    keep_verdict("adversarial_" + c.name, v);
    fmt::print("[adversarial] {:<40} {:<20} speedup {:.4f} coverage {:.4f} strict {} {}\n", c.name, to_string(v.status),
               v.speedup.value_or(0.0), v.tensor_core_coverage.value_or(-1.0), v.target_instruction_strict,
               v.message.substr(0, 240));
    for (const auto& problem : expectation_mismatches(c.expect, v)) ADD_FAILURE() << problem << ": " << v.message;
  }
  // The evaluator survives them all: a good kernel still passes afterwards.
  CandidateSuite fixtures = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures/gemm/suite.json");
  for (const auto& c : fixtures.cases)
    if (c.name == "wgmma_tma_gemm") {
      Verdict after = evaluator.evaluate_source(fixtures.definition, "", c.source);
      EXPECT_EQ(after.status, Status::PASSED) << after.message;
    }
}

// A time-out seen while other workers share the GPU is not a verdict yet: the stage runs again
// with the GPU alone, and a hang hangs there too. Both attempts are in the verdict.
TEST_F(FixtureVerdicts, ATimeoutOnASharedGpuIsConfirmedWithTheGpuAlone) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  CandidateSuite suite = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures/gemm/suite.json");
  TempDir dir("ptxbench-lock-test");
  EvalOptions o = test_options();
  o.sanitize_timeout_s = 3;
  o.gpu_lock = (dir.path() / "gpu0.lock").string();
  Evaluator evaluator(catalog, o);
  const SuiteCase* hang = nullptr;
  for (const auto& c : suite.cases)
    if (c.name == "infinite_loop") hang = &c;
  ASSERT_NE(hang, nullptr);
  Verdict v = evaluator.evaluate_source(suite.definition, "", hang->source);
  keep_verdict("infinite_loop_confirmed_alone", v);
  EXPECT_EQ(v.status, Status::TIMEOUT) << v.message;
  ASSERT_TRUE(v.stages.sanitize.has_value());
  const SanitizeSection& sanitize = *v.stages.sanitize;
  ASSERT_TRUE(sanitize.gpu_alone_after_shared_timeout.has_value()) << v.to_json()["stages"]["sanitize"].dump(2);
  const auto& first = *sanitize.gpu_alone_after_shared_timeout;
  EXPECT_NE(first.message.find("did not finish"), std::string::npos);
  ASSERT_NE(first.stage, nullptr);
  EXPECT_EQ(first.stage->passed, false);
  EXPECT_GE(sanitize.wall_s.value_or(0.0), 3.0);  // the second attempt ran to its own limit
}

// The pack's expert kernels (every knowledge/hopper/experts/*_suite.json) pass with their
// mechanisms executed (their speed goes to results/).
TEST_F(FixtureVerdicts, ExpertKernelsPassWithTheirMechanisms) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  Evaluator evaluator(catalog, test_options());
  std::vector<fs::path> suites;
  for (const auto& e : fs::directory_iterator(fs::path(PTXBENCH_SOURCE_DIR) / "knowledge/hopper/experts"))
    if (e.path().filename().string().ends_with("_suite.json")) suites.push_back(e.path());
  std::sort(suites.begin(), suites.end());
  ASSERT_GE(suites.size(), 4u);
  for (const auto& file : suites) {
    SCOPED_TRACE(file.filename().string());
    EXPECT_NE(expect_suite(evaluator, load_suite(file)), nullptr);
  }
}

// The attention suites (forward, backward, causal or not): the CUDA-core kernels pass, the broken
// ones are INCORRECT_NUMERICAL. At S = 1024 to spare device time; `ptxbench suite run
// tests/fixtures/attention/<suite>.json` checks the same at the default S = 4096.
TEST_F(FixtureVerdicts, AttentionFixturesGetTheirExpectedVerdicts) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  Evaluator evaluator(catalog, test_options());
  for (const char* file : {"mha_fwd_suite.json", "mha_fwd_causal_suite.json", "mha_bwd_suite.json",
                           "mha_bwd_causal_suite.json"}) {
    SCOPED_TRACE(file);
    CandidateSuite suite = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures/attention" / file);
    EXPECT_NE(expect_suite(evaluator, suite, "S=1024"), nullptr);
  }
}

// The GQA suites (paged decode, paged and ragged causal prefill): the CUDA-core kernels pass; a wrong
// head mapping, log base, page lookup or causal diagonal is INCORRECT_NUMERICAL; a read past an index
// or K/V array is SANITIZER_ERROR. On each definition's "-small" workload (sequences with fewer
// queries than keys) to spare device time; `ptxbench suite run tests/fixtures/gqa/<suite>.json`
// checks the same at the released workload.
TEST_F(FixtureVerdicts, GqaFixturesGetTheirExpectedVerdicts) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  Evaluator evaluator(catalog, test_options());
  for (const char* file :
       {"gqa_paged_decode_suite.json", "gqa_paged_prefill_suite.json", "gqa_ragged_prefill_suite.json"}) {
    SCOPED_TRACE(file);
    CandidateSuite suite = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures/gqa" / file);
    EXPECT_NE(expect_suite(evaluator, suite, suite.definition + "-small"), nullptr);
  }
}

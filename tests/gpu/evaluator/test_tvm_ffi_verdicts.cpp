// Kernels written the way the field writes them (tests/fixtures/tvm_ffi/): the TVM-FFI binding, a
// CUDA_CHECK that calls exit(1), cudaSetDevice to the tensors' device, a FlashInfer-Bench Solution.
// Through the evaluator each gets the verdict its kernel earns (the wgmma GEMM PASSED with C_Gen4,
// the exit one RUNTIME_ERROR naming the exit), and a Solution goes through a local service too.
#include <cstdlib>
#include <fmt/format.h>

#include "common/fs.h"
#include "compile/solution.h"
#include "definitions/catalog.h"
#include "evaluator/evaluator.h"
#include "gpu_test_support.h"
#include "service/local_service.h"
#include "service/service_client.h"
#include "suite/candidate_suite.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

EvalOptions test_options() {
  EvalOptions o;
  o.seed = 20261205;
  o.sanitize_timeout_s = 60;
  o.call_timeout_s = 20;
  return o;
}

fs::path fixtures() { return fs::path(PTXBENCH_TEST_DATA) / "fixtures/tvm_ffi"; }

void keep_verdict(const std::string& name, const Verdict& v) {
  const char* out = std::getenv("PTXBENCH_TEST_OUT");
  if (out && *out) write_file_atomic(fs::path(out) / (name + ".verdict.json"), v.to_json().dump(2));
}

void expect_case(Evaluator& evaluator, const CandidateSuite& suite, const SuiteCase& c) {
  SCOPED_TRACE(c.name);
  Verdict v = evaluator.evaluate_source(suite.definition, "", c.source, std::nullopt, c.language);
  keep_verdict(c.name, v);
  fmt::print("[tvm-ffi] {:<24} {:<20} {}\n", c.name, to_string(v.status), v.message.substr(0, 200));
  for (const auto& problem : expectation_mismatches(c.expect, v)) ADD_FAILURE() << problem << ": " << v.message;
  EXPECT_NE(v.status, Status::BANNED_API) << "the field's habits are not cheats";
  ASSERT_TRUE(v.stages.compile.has_value());
  EXPECT_EQ(v.stages.compile->binding, CandidateBinding::tvm_ffi);
  if (c.expect.status == Status::RUNTIME_ERROR && v.stages.runner_output)
    fmt::print("[tvm-ffi]   runner output: {}\n", v.stages.runner_output->substr(0, 300));
}

}  // namespace

class TvmFfiVerdicts : public GpuTest {};

TEST_F(TvmFfiVerdicts, TheFieldsGemmKernelsGetTheVerdictsTheyEarn) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  CandidateSuite suite = load_suite(fixtures() / "suite.json");
  ASSERT_GE(suite.cases.size(), 6u);
  Evaluator evaluator(catalog, test_options());
  for (const auto& c : suite.cases) expect_case(evaluator, suite, c);
}

TEST_F(TvmFfiVerdicts, TheFieldsAttentionBackwardPasses) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  CandidateSuite suite = load_suite(fixtures() / "mha_bwd_suite.json");
  EvalOptions o = test_options();
  o.call_timeout_s = 120;  // the CUDA-core backward takes seconds a call at S = 4096
  o.sanitize_timeout_s = 600;
  Evaluator evaluator(catalog, o);
  for (const auto& c : suite.cases) expect_case(evaluator, suite, c);
}

// Exit and abort without the sanitizer first: the session runner's own answer (its failure reply)
// is what the verdict says, not the sanitize stage's.
TEST_F(TvmFfiVerdicts, ExitInACallIsTheSessionRunnersFailureReply) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  CandidateSuite suite = load_suite(fixtures() / "suite.json");
  EvalOptions o = test_options();
  o.sanitize = false;
  Evaluator evaluator(catalog, o);
  for (const auto& c : suite.cases) {
    if (c.name != "exit_in_cuda_check") continue;
    Verdict v = evaluator.evaluate_source(suite.definition, "", c.source, std::nullopt, c.language);
    keep_verdict(c.name + "_no_sanitizer", v);
    EXPECT_EQ(v.status, Status::RUNTIME_ERROR) << v.message;
    EXPECT_NE(v.message.find("the candidate's call failed: the candidate called exit(1) during a call"), std::string::npos)
        << v.message;
    ASSERT_TRUE(v.stages.runner_output.has_value());
    EXPECT_NE(v.stages.runner_output->find("CUDA error"), std::string::npos) << "the candidate's own stderr is kept";
  }
}

// A Solution through a local service: the request carries the Solution, the service makes the file.
TEST_F(TvmFfiVerdicts, ASolutionThroughALocalServicePasses) {
  TempDir dir("ptxbench-tvm-ffi-service");
  LocalService service(executable_dir() / "ptxbench", dir.path() / "service.db", {"--gpus", "1"}, "127.0.0.1:0",
                       {std::string("PTXBENCH_HOME=") + PTXBENCH_SOURCE_DIR}, 60);
  ServiceClient client(service.url());
  ordered_json solution = ordered_json::parse(read_file(fixtures() / "gemm_wgmma_solution.json"));
  std::string id = client.submit_body({{"solution", solution}, {"options", {{"seed", 7}}}});
  Verdict v = client.wait_done(id, 1800).verdict_or_bare();
  keep_verdict("gemm_wgmma_solution_service", v);
  EXPECT_EQ(v.status, Status::PASSED) << v.message << "\n" << service.log().substr(0, 2000);
  ASSERT_TRUE(v.runtime_mechanisms.has_value());
  EXPECT_TRUE(v.runtime_mechanisms->c_gen4);
  ASSERT_TRUE(v.stages.compile.has_value());
  EXPECT_EQ(v.stages.compile->binding, CandidateBinding::tvm_ffi);
}

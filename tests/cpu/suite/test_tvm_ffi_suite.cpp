// The suites of kernels written the way the field writes them (tests/fixtures/tvm_ffi/): they load,
// their kernels are edits of the project's fixtures, a Solution case stands for the file it makes,
// and every case passes the static checks with the real nvcc (their verdicts come from the GPU:
// tests/gpu/evaluator/test_tvm_ffi_verdicts.cpp).
#include <gtest/gtest.h>

#include "common/error.h"
#include "common/fs.h"
#include "compile/compiler.h"
#include "suite/candidate_suite.h"

using namespace ptxbench;

namespace {

fs::path fixtures() { return fs::path(PTXBENCH_TEST_DATA) / "fixtures"; }

// The part of a fixture between two markers: kernel code an edited case must hold unchanged.
std::string between(const std::string& text, const std::string& from, const std::string& to) {
  const auto a = text.find(from), b = text.find(to);
  if (a == std::string::npos || b == std::string::npos || b < a) throw std::runtime_error("no " + from + " ... " + to);
  return text.substr(a, b - a);
}

}  // namespace

TEST(TvmFfiSuite, SolutionCasesStandForTheFileTheyMake) {
  CandidateSuite s = load_suite(fixtures() / "tvm_ffi/suite.json");
  EXPECT_EQ(s.definition, "gemm_n7168_k5120");
  const SuiteCase& solution = s.case_named("gemm_wgmma_solution");
  EXPECT_EQ(solution.language, CandidateLanguage::cuda);
  EXPECT_NE(solution.source.find("TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, gemm_n7168_k5120_wgmma::run)"), std::string::npos);
  EXPECT_NE(solution.source.find("wgmma_tma_gemm"), std::string::npos);
  EXPECT_EQ(s.case_named("exit_in_cuda_check").expect.status, Status::RUNTIME_ERROR);
  CandidateSuite bwd = load_suite(fixtures() / "tvm_ffi/mha_bwd_suite.json");
  EXPECT_EQ(bwd.definition, "mha_bwd_d128");
}

// The field's kernels are the project's fixtures with another binding: edits of the GEMM and attention
// fixtures in the sibling folders, their kernels kept as they are, and the GEMM's variants edits of
// that case.
TEST(TvmFfiSuite, TheFieldsKernelsAreEditsOfTheProjectsFixtures) {
  CandidateSuite s = load_suite(fixtures() / "tvm_ffi/suite.json");
  const SuiteCase& gemm = s.case_named("gemm_wgmma_tvm_ffi");
  EXPECT_EQ(gemm.origin.rfind("../gemm/wgmma_tma_gemm.cu + ", 0), 0u) << gemm.origin;
  const std::string gemm_base = read_file(fixtures() / "gemm/wgmma_tma_gemm.cu");
  EXPECT_NE(gemm.source.find(between(gemm_base, "constexpr int BM", "bool make_map(")), std::string::npos);
  CandidateSuite bwd = load_suite(fixtures() / "tvm_ffi/mha_bwd_suite.json");
  const SuiteCase& attention = bwd.case_named("mha_bwd_simt_tvm_ffi");
  EXPECT_EQ(attention.origin.rfind("../attention/simt_flash_bwd.cu + ", 0), 0u) << attention.origin;
  const std::string bwd_base = read_file(fixtures() / "attention/simt_flash_bwd.cu");
  EXPECT_NE(attention.source.find(between(bwd_base, "constexpr bool kCausal", "bool is_bhsd(")), std::string::npos);
  for (const SuiteCase* c : {&gemm, &attention}) {
    EXPECT_EQ(c->source.find("ptxb_run"), std::string::npos) << c->name;
    EXPECT_EQ(c->source.find("ptxbench_abi.h"), std::string::npos) << c->name;
    EXPECT_NE(c->source.find("TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, "), std::string::npos) << c->name;
  }
  int variants = 0;
  for (const auto& c : s.cases) {
    if (c.origin.rfind("case gemm_wgmma_tvm_ffi + ", 0) != 0) continue;
    ++variants;
    EXPECT_NE(c.source.find("TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, gemm_n7168_k5120_wgmma::run)"), std::string::npos) << c.name;
    EXPECT_NE(c.source, gemm.source) << c.name;
  }
  EXPECT_EQ(variants, 4);
  EXPECT_NE(s.case_named("exit_in_cuda_check").source.find("cudaFuncAttributeMaxDynamicSharedMemorySize, 300 * 1024"),
            std::string::npos);
}

TEST(TvmFfiSuite, ASolutionForAnotherDefinitionIsRefusedNamingIt) {
  TempDir dir;
  fs::copy_file(fixtures() / "tvm_ffi/gemm_wgmma_solution.json", dir.path() / "s.json");
  write_file_atomic(dir.path() / "suite.json",
                    R"({"definition": "mha_bwd_d128", "cases": [{"name": "x", "file": "s.json", "expect": {"status": "PASSED"}}]})");
  try {
    (void)load_suite(dir.path() / "suite.json");
    FAIL() << "a GEMM solution was accepted for mha_bwd_d128";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gemm_n7168_k5120"), std::string::npos) << e.what();
  }
  write_file_atomic(dir.path() / "suite.json",
                    R"({"definition": "gemm_n7168_k5120", "cases": [{"name": "x", "base": "s.json",
                        "edits": [{"find": "a", "replace": "b"}], "expect": {"status": "PASSED"}}]})");
  EXPECT_THROW((void)load_suite(dir.path() / "suite.json"), InputError);
}

// None of the field's habits is BANNED_API: every case builds; a failing one fails at run time.
TEST(TvmFfiSuite, EveryCasePassesTheStaticChecks) {
  TempDir cache;
  CompileOptions o;
  o.cache_dir = cache.path();
  Compiler compiler(o);
  std::vector<SuiteCase> cases;
  for (const char* suite : {"tvm_ffi/suite.json", "tvm_ffi/mha_bwd_suite.json"})
    for (auto& c : load_suite(fixtures() / suite).cases) cases.push_back(c);
  cases.push_back(load_suite(fixtures() / "gemm/adversarial_suite.json").case_named("exit_zero_to_fake_success"));
  for (const auto& c : cases) {
    CompileResult r = compiler.compile(c.source);
    std::string banned;
    for (const auto& b : r.binary.banned) banned += " " + b.symbol;
    SCOPED_TRACE(c.name + ": " + r.message + banned);
    EXPECT_EQ(r.status, CompileStatus::ok) << r.log;
    const bool tvm = c.name != "exit_zero_to_fake_success";
    EXPECT_EQ(r.binding, tvm ? CandidateBinding::tvm_ffi : CandidateBinding::ptxb);
  }
}

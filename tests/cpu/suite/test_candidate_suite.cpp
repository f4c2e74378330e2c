// Candidate suites: loading, materializing edit variants, strict errors, the expectation check,
// and the compile-stage verdicts of the GEMM fixtures with the real nvcc.
#include <gtest/gtest.h>

#include "common/error.h"
#include "compile/compiler.h"
#include "suite/candidate_suite.h"

using namespace ptxbench;

namespace {

fs::path fixtures() { return fs::path(PTXBENCH_TEST_DATA) / "fixtures/gemm"; }

std::string load_error(const std::string& suite_text) {
  TempDir dir;
  write_file_atomic(dir.path() / "base.cu", "int a = 1;\nint b = 2;\nint b2 = 2;\n");
  write_file_atomic(dir.path() / "suite.json", suite_text);
  try {
    (void)load_suite(dir.path() / "suite.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(CandidateSuite, GemmFixturesLoadAndVariantsAreSelfContained) {
  CandidateSuite s = load_suite(fixtures() / "suite.json");
  EXPECT_EQ(s.definition, "gemm_n7168_k5120");
  ASSERT_GE(s.cases.size(), 12u);
  for (const auto& c : s.cases) {
    EXPECT_NE(c.source.find("ptxbench_abi.h"), std::string::npos) << c.name;
    EXPECT_FALSE(to_string(c.expect.status).empty()) << c.name;
  }
  auto find = [&](const std::string& n) -> const SuiteCase& {
    for (const auto& c : s.cases)
      if (c.name == n) return c;
    throw std::runtime_error("no case " + n);
  };
  EXPECT_NE(find("wrong_result").source.find("const int KT = (K - 1) / BK;"), std::string::npos);
  EXPECT_EQ(find("wrong_result").source.rfind("// ptxbench suite case wrong_result", 0), 0u);
  EXPECT_EQ(find("wrong_result").origin, "simt_tiled_gemm.cu + 1 edit");
  EXPECT_NE(find("wgmma_never_taken").source.find("wgmma.mma_async"), std::string::npos);
  EXPECT_EQ(find("simt_tiled_gemm").source.find("(K - 1) / BK"), std::string::npos);
}

TEST(CandidateSuite, MalformedSuitesNameTheCaseAndField) {
  const char* ok = R"({"definition": "d", "cases": [{"name": "v", "base": "base.cu", "edits": [{"find": "int a = 1;", "replace": "int a = 3;"}], "expect": {"status": "PASSED"}}]})";
  EXPECT_EQ(load_error(ok), "");
  EXPECT_NE(load_error(R"({"definition": "d", "cases": [{"name": "v", "base": "base.cu", "edits": [{"find": "int c", "replace": ""}], "expect": {"status": "PASSED"}}]})")
                .find("cases[0].edits[0].find: matches 0 times"), std::string::npos);
  EXPECT_NE(load_error(R"({"definition": "d", "cases": [{"name": "v", "base": "base.cu", "edits": [{"find": "int b", "replace": ""}], "expect": {"status": "PASSED"}}]})")
                .find("matches 2 times"), std::string::npos);
  EXPECT_NE(load_error(R"({"definition": "d", "cases": [{"name": "v", "file": "base.cu", "base": "base.cu", "expect": {"status": "PASSED"}}]})")
                .find("exactly one of"), std::string::npos);
  EXPECT_NE(load_error(R"({"definition": "d", "cases": [{"name": "v", "file": "base.cu", "expect": {"status": "PASSED", "c_gen5": true}}]})")
                .find("cases[0].expect.c_gen5: unknown field"), std::string::npos);
  EXPECT_NE(load_error(R"({"definition": "d", "cases": [{"name": "v", "file": "nope.cu", "expect": {"status": "PASSED"}}]})")
                .find("cannot read"), std::string::npos);
  EXPECT_NE(load_error(R"({"definition": "d", "cases": []})").find("non-empty"), std::string::npos);
}

TEST(CandidateSuite, ExpectationMismatchesAreSpecific) {
  SuiteExpectation want{Status::PASSED, true, true, false};
  Verdict v;
  v.status = Status::PASSED;
  v.runtime_mechanisms = Mechanisms{true, false, false, false};
  StaticSassSection& s = v.stages.static_sass.emplace();
  s.available = true;
  s.counts.gmma = 4;
  EXPECT_TRUE(expectation_mismatches(want, v).empty());
  v.runtime_mechanisms->c_gen4 = false;
  auto m = expectation_mismatches(want, v);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].find("C_Gen4 (wgmma) not executed"), std::string::npos);
  v.status = Status::TIMEOUT;
  EXPECT_NE(expectation_mismatches(want, v)[0].find("status TIMEOUT, expected PASSED"), std::string::npos);
  s.counts.gmma = 0;
  EXPECT_EQ(expectation_mismatches(want, v).size(), 2u);
  v.status = Status::PASSED;
  v.runtime_mechanisms.reset();
  EXPECT_NE(expectation_mismatches(want, v)[1].find("C_Gen4 (wgmma) not measured"), std::string::npos);
}

TEST(CandidateSuite, UnknownExpectedStatusIsRefusedWithTheKnownOnes) {
  std::string e = load_error(R"({"definition": "d", "cases": [{"name": "v", "file": "base.cu", "expect": {"status": "PASS"}}]})");
  EXPECT_NE(e.find("cases[0].expect.status: unknown verdict status 'PASS' (expected PASSED, COMPILE_ERROR"), std::string::npos) << e;
}

// The verdicts the compile stage alone decides, checked here without a GPU.
TEST(CandidateSuite, CompileStageVerdictsOfTheGemmFixtures) {
  CandidateSuite s = load_suite(fixtures() / "suite.json");
  TempDir cache;
  CompileOptions o;
  o.cache_dir = cache.path();
  Compiler compiler(o);
  for (const auto& c : s.cases) {
    CompileResult r = compiler.compile(c.source);
    SCOPED_TRACE(c.name + ": " + r.message);
    if (c.expect.status == Status::COMPILE_ERROR) EXPECT_EQ(r.status, CompileStatus::compile_error);
    else if (c.expect.status == Status::BANNED_API) EXPECT_EQ(r.status, CompileStatus::banned_api);
    else if (c.expect.status == Status::ABI_ERROR) EXPECT_EQ(r.status, CompileStatus::abi_error);
    else EXPECT_EQ(r.status, CompileStatus::ok);
    if (c.name == "wgmma_tma_gemm") {
      EXPECT_EQ(r.ptx.count("wgmma.mma_async"), 4);
      EXPECT_GT(r.ptx.count("cp.async.bulk.tensor:load"), 0);
      EXPECT_GT(r.ptx.count("mbarrier"), 0);
    }
  }
}

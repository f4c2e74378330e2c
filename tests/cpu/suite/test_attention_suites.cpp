// The attention fixture suites (tests/fixtures/attention/): they load, their edits apply, they name
// the evaluation definitions, and every case passes the compile stage with the real nvcc (CUDA
// cores only: no wgmma, no TMA, no spills).
#include <gtest/gtest.h>

#include "common/error.h"
#include "compile/compiler.h"
#include "definitions/catalog.h"
#include "suite/candidate_suite.h"

using namespace ptxbench;

namespace {

fs::path fixtures() { return fs::path(PTXBENCH_TEST_DATA) / "fixtures/attention"; }

struct SuiteFile {
  const char* file;
  const char* definition;
  const char* op_type;
};

const SuiteFile kSuites[] = {
    {"mha_fwd_suite.json", "mha_with_lse_d128", "mha_fwd"},
    {"mha_fwd_causal_suite.json", "mha_with_lse_d128_causal", "mha_fwd_causal"},
    {"mha_bwd_suite.json", "mha_bwd_d128", "mha_bwd"},
    {"mha_bwd_causal_suite.json", "mha_bwd_d128_causal", "mha_bwd_causal"},
};

const SuiteCase& find_case(const CandidateSuite& s, const std::string& name) {
  for (const auto& c : s.cases)
    if (c.name == name) return c;
  throw std::runtime_error("no case " + name);
}

}  // namespace

TEST(AttentionSuites, LoadNameTheirDefinitionsAndHaveGoodAndWrongCases) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  for (const auto& f : kSuites) {
    SCOPED_TRACE(f.file);
    CandidateSuite s = load_suite(fixtures() / f.file);
    EXPECT_EQ(s.definition, f.definition);
    EXPECT_EQ(catalog.definition(s.definition).op_type, f.op_type);
    int passed = 0, wrong = 0;
    for (const auto& c : s.cases) {
      EXPECT_NE(c.source.find("ptxbench_abi.h"), std::string::npos) << c.name;
      EXPECT_NE(c.source.find("PTXB_EXPORT int ptxb_run("), std::string::npos) << c.name;
      passed += c.expect.status == Status::PASSED;
      wrong += c.expect.status == Status::INCORRECT_NUMERICAL;
      if (c.expect.status == Status::PASSED) {  // CUDA-core kernels: no mechanism may be claimed
        EXPECT_EQ(c.expect.static_hgmma, std::optional<bool>(false)) << c.name;
        EXPECT_EQ(c.expect.c_gen4, std::optional<bool>(false)) << c.name;
        EXPECT_EQ(c.expect.d_tma, std::optional<bool>(false)) << c.name;
      }
    }
    EXPECT_EQ(passed, 1);
    EXPECT_GE(wrong, 1);
  }
}

TEST(AttentionSuites, CausalVariantsFlipOnlyTheCausalSwitch) {
  for (const char* pair : {"fwd", "bwd"}) {
    std::string kind = pair;
    CandidateSuite plain = load_suite(fixtures() / ("mha_" + kind + "_suite.json"));
    CandidateSuite causal = load_suite(fixtures() / ("mha_" + kind + "_causal_suite.json"));
    const SuiteCase& base = find_case(plain, "simt_flash_" + kind);
    const SuiteCase& on = find_case(causal, "simt_flash_" + kind + "_causal");
    const SuiteCase& off = find_case(causal, "causal_mask_dropped");
    EXPECT_EQ(on.origin, "simt_flash_" + kind + ".cu + 1 edit");
    EXPECT_NE(base.source.find("constexpr bool kCausal = false;"), std::string::npos);
    EXPECT_NE(on.source.find("constexpr bool kCausal = true;"), std::string::npos);
    EXPECT_EQ(on.source.find("constexpr bool kCausal = false;"), std::string::npos);
    EXPECT_EQ(off.source, base.source);  // the non-causal kernel, judged against the causal definition
  }
  CandidateSuite fwd = load_suite(fixtures() / "mha_fwd_suite.json");
  EXPECT_NE(find_case(fwd, "wrong_scale").source.find("1.4426950408889634f / (float)D;"), std::string::npos);
  EXPECT_NE(find_case(fwd, "lse_log2").source.find("= m[i] + log2f(l[i]);  // base 2"), std::string::npos);
  CandidateSuite bwd = load_suite(fixtures() / "mha_bwd_suite.json");
  EXPECT_NE(find_case(bwd, "dk_unscaled").source.find("const float ks = 1.0f;"), std::string::npos);
}

// Every attention case compiles, exports ptxb_run, uses neither wgmma nor TMA and does not spill
// (the fixtures run ~160 times per evaluation, plus under memcheck at full size).
TEST(AttentionSuites, CompileStageAcceptsEveryCase) {
  TempDir cache;
  CompileOptions o;
  o.cache_dir = cache.path();
  Compiler compiler(o);
  for (const auto& f : kSuites) {
    CandidateSuite s = load_suite(fixtures() / f.file);
    for (const auto& c : s.cases) {
      CompileResult r = compiler.compile(c.source);
      SCOPED_TRACE(std::string(f.file) + " " + c.name + ": " + r.message);
      ASSERT_EQ(r.status, CompileStatus::ok) << r.log;
      EXPECT_EQ(r.ptx.count("wgmma.mma_async"), 0);
      EXPECT_EQ(r.ptx.count("cp.async.bulk.tensor:load"), 0);
      EXPECT_FALSE(r.kernels.empty());
      for (const auto& k : r.ptxas.kernels) {
        EXPECT_EQ(k.spill_store_bytes, 0) << k.name;
        EXPECT_EQ(k.spill_load_bytes, 0) << k.name;
      }
    }
  }
}

// The GQA fixture suites (tests/fixtures/gqa/): they load, their edits apply, they name the held-out
// GQA definitions, each has one CUDA-core kernel expected to pass and broken variants of it, and every
// case passes the compile stage with the real nvcc (no wgmma, no TMA, no spills).
#include <gtest/gtest.h>

#include "common/error.h"
#include "compile/compiler.h"
#include "definitions/catalog.h"
#include "suite/candidate_suite.h"

using namespace ptxbench;

namespace {

fs::path fixtures() { return fs::path(PTXBENCH_TEST_DATA) / "fixtures/gqa"; }

struct SuiteFile {
  const char* file;
  const char* definition;
  const char* op_type;
  const char* base;  ///< the file every case is or edits
};

const SuiteFile kSuites[] = {
    {"gqa_paged_decode_suite.json", "gqa_paged_decode_h24_kv8_d128_ps1", "gqa_paged_decode", "simt_gqa_decode.cu"},
    {"gqa_paged_prefill_suite.json", "gqa_paged_prefill_causal_h24_kv8_d128_ps1", "gqa_paged_prefill_causal",
     "simt_gqa_prefill.cu"},
    {"gqa_ragged_prefill_suite.json", "gqa_ragged_prefill_causal_h32_kv4_d128", "gqa_ragged_prefill_causal",
     "simt_gqa_prefill.cu"},
};

const SuiteCase& find_case(const CandidateSuite& s, const std::string& name) {
  for (const auto& c : s.cases)
    if (c.name == name) return c;
  throw std::runtime_error("no case " + name);
}

}  // namespace

TEST(GqaSuites, NameTheirDefinitionsAndHaveOneGoodKernelAndItsBrokenEdits) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  for (const auto& f : kSuites) {
    SCOPED_TRACE(f.file);
    CandidateSuite s = load_suite(fixtures() / f.file);
    EXPECT_EQ(s.definition, f.definition);
    EXPECT_EQ(catalog.definition(s.definition).op_type, f.op_type);
    int passed = 0, wrong = 0, memory = 0;
    for (const auto& c : s.cases) {
      EXPECT_NE(c.source.find("PTXB_EXPORT int ptxb_run("), std::string::npos) << c.name;
      if (c.expect.status == Status::PASSED) {  // CUDA-core kernel: no mechanism may be claimed
        ++passed;
        EXPECT_EQ(c.origin, f.base) << c.name;
        EXPECT_EQ(c.expect.static_hgmma, std::optional<bool>(false)) << c.name;
        EXPECT_EQ(c.expect.c_gen4, std::optional<bool>(false)) << c.name;
        EXPECT_EQ(c.expect.d_tma, std::optional<bool>(false)) << c.name;
      } else {
        EXPECT_EQ(c.origin, std::string(f.base) + " + 1 edit") << c.name;  // one change each
      }
      wrong += c.expect.status == Status::INCORRECT_NUMERICAL;
      memory += c.expect.status == Status::SANITIZER_ERROR;
    }
    EXPECT_EQ(passed, 1);
    EXPECT_GE(wrong, 3);
    EXPECT_EQ(memory, 1);
  }
}

// The variants break what their names say, and the base has the semantics the definitions ask for.
TEST(GqaSuites, VariantsChangeTheMappingTheLogBaseTheIndicesTheMaskOrABound) {
  CandidateSuite decode = load_suite(fixtures() / "gqa_paged_decode_suite.json");
  const std::string& d = find_case(decode, "simt_gqa_decode").source;
  EXPECT_NE(d.find("return g * G + i;"), std::string::npos);  // qo heads of kv head g: g*G .. g*G+G-1
  EXPECT_NE(find_case(decode, "kv_head_modulo").source.find("return g + i * num_kv_heads;"), std::string::npos);
  EXPECT_NE(find_case(decode, "lse_natural_log").source.find("* 0.6931471805599453f"), std::string::npos);
  EXPECT_EQ(d.find("0.6931471805599453f"), std::string::npos);  // base 2: no conversion to ln
  EXPECT_EQ(find_case(decode, "kv_indices_ignored").source.find("__ldg(kv_indices"), std::string::npos);
  EXPECT_NE(find_case(decode, "one_sequence_too_many").source.find("const int batch = (int)args[3].shape[0];"),
            std::string::npos);

  CandidateSuite paged = load_suite(fixtures() / "gqa_paged_prefill_suite.json");
  CandidateSuite ragged = load_suite(fixtures() / "gqa_ragged_prefill_suite.json");
  const std::string& p = find_case(paged, "simt_gqa_prefill_paged").source;
  EXPECT_EQ(p, find_case(ragged, "simt_gqa_prefill_ragged").source);  // one kernel file, two layouts
  EXPECT_NE(p.find("if (kj > qi + delta || kj >= kv_len)"), std::string::npos);  // bottom-right causal
  EXPECT_NE(p.find("const int delta = kv_len - q_len;"), std::string::npos);
  for (const CandidateSuite* s : {&paged, &ragged}) {
    EXPECT_NE(find_case(*s, "kv_head_modulo").source.find("g = h % p.num_kv_heads"), std::string::npos);
    EXPECT_NE(find_case(*s, "causal_diagonal_dropped").source.find("if (kj >= qi + delta"), std::string::npos);
    EXPECT_NE(find_case(*s, "kv_tile_unbounded").source.find("    return base + kv_row(j);"), std::string::npos);
  }
  EXPECT_EQ(find_case(paged, "kv_indices_ignored").source.find("__ldg(p.kv_indices"), std::string::npos);
  EXPECT_NE(find_case(ragged, "lse_natural_log").source.find("* 0.6931471805599453f"), std::string::npos);
}

// Every case compiles, exports ptxb_run, uses neither wgmma nor TMA and does not spill.
TEST(GqaSuites, CompileStageAcceptsEveryCase) {
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

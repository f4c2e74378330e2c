// The service's request with a FlashInfer-Bench Solution in place of "source": it names the
// definition, becomes the file the evaluator compiles, and its refusals name the field.
#include <gtest/gtest.h>

#include "common/error.h"
#include "common/fs.h"
#include "service/eval_request.h"

using namespace ptxbench;

namespace {

const Catalog& catalog() {
  static const Catalog c = Catalog::load(PTXBENCH_SOURCE_DIR);
  return c;
}

ordered_json fixture_solution() {
  return ordered_json::parse(read_file(std::string(PTXBENCH_TEST_DATA) + "/fixtures/tvm_ffi/gemm_wgmma_solution.json"));
}

std::string refusal(const ordered_json& body) {
  try {
    (void)parse_eval_request(body.dump(), catalog(), EvalRequestLimits{});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(EvalRequestSolution, ASolutionNamesTheDefinitionAndBecomesTheSource) {
  ordered_json body = {{"solution", fixture_solution()}, {"options", {{"trials", 2}}}};
  EvalRequest r = parse_eval_request(body.dump(), catalog(), EvalRequestLimits{});
  EXPECT_EQ(r.definition, "gemm_n7168_k5120");
  EXPECT_EQ(r.language, CandidateLanguage::cuda);
  EXPECT_NE(r.source.find("TVM_FFI_DLL_EXPORT_TYPED_FUNC(run"), std::string::npos);
  EXPECT_EQ(r.trials, 2);
  // The stored form keeps the file, and reads back the same.
  EvalRequest stored = eval_request_from_json(r.to_json(), catalog(), EvalRequestLimits{});
  EXPECT_EQ(stored.source, r.source);
  EXPECT_EQ(stored.definition, r.definition);
  // The request may name the same definition.
  body["definition"] = "gemm_n7168_k5120";
  EXPECT_EQ(refusal(body), "");
}

TEST(EvalRequestSolution, RefusalsNameTheField) {
  ordered_json both = {{"solution", fixture_solution()}, {"source", "int x;"}};
  EXPECT_NE(refusal(both).find("solution"), std::string::npos);
  ordered_json other = {{"solution", fixture_solution()}, {"definition", "mha_bwd_d128"}};
  EXPECT_NE(refusal(other).find("solution.definition"), std::string::npos);
  ordered_json language = {{"solution", fixture_solution()}, {"language", "cuda"}};
  EXPECT_NE(refusal(language).find("language"), std::string::npos);
  ordered_json bad = {{"solution", fixture_solution()}};
  bad["solution"]["spec"]["entry_point"] = "kernel.cu::nothing";
  std::string why = refusal(bad);
  EXPECT_NE(why.find("request body: solution"), std::string::npos) << why;
  EXPECT_NE(why.find("spec.entry_point"), std::string::npos) << why;
  ordered_json unknown = {{"solution", fixture_solution()}};
  unknown["solution"]["definition"] = "no_such_definition";
  EXPECT_NE(refusal(unknown).find("definition"), std::string::npos);
  ordered_json too_big = {{"solution", fixture_solution()}};
  EvalRequestLimits small;
  small.max_source_bytes = 100;
  EXPECT_THROW((void)parse_eval_request(too_big.dump(), catalog(), small), PayloadTooLarge);
}

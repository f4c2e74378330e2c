// Definitions and workloads as data: the five evaluation definitions load, keep ABI order, and
// every malformed file is rejected with its name and the field path.
#include <gtest/gtest.h>

#include "common/error.h"
#include "definitions/catalog.h"

using namespace ptxbench;

namespace {

Catalog repo_catalog() { return Catalog::load(PTXBENCH_SOURCE_DIR); }

std::string error_of(const std::string& text) {
  try {
    (void)parse_definition(text, "defs/x.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kGood = R"({"name": "g", "op_type": "gemm", "axes": {"M": {"type": "var"}, "K": {"type": "const", "value": 64}},
  "inputs": {"A": {"shape": ["M", "K"], "dtype": "bfloat16"}}, "outputs": {"C": {"shape": ["M"], "dtype": "float32"}},
  "reference": "def run(A): ..."})";

}  // namespace

TEST(Definitions, TheFiveEvaluationDefinitionsLoad) {
  Catalog c = repo_catalog();
  for (const char* name : {"gemm_n7168_k5120", "mha_with_lse_d128", "mha_with_lse_d128_causal", "mha_bwd_d128",
                           "mha_bwd_d128_causal"})
    EXPECT_NO_THROW((void)c.definition(name)) << name;
  EXPECT_EQ(c.definitions().size(), 5u);
}

TEST(Definitions, GemmResolvesToAbiOrderAndShapes) {
  Catalog c = repo_catalog();
  const Definition& d = c.definition("gemm_n7168_k5120");
  ResolvedWorkload w = resolve_workload(d, c.default_workload(d.name));
  ASSERT_EQ(w.tensors.size(), 3u);
  EXPECT_EQ(w.tensors[0].name, "A");
  EXPECT_EQ(w.tensors[1].name, "B");
  EXPECT_EQ(w.tensors[2].name, "C");
  EXPECT_TRUE(w.tensors[2].is_output);
  EXPECT_EQ(w.tensors[0].shape, (std::vector<int64_t>{8192, 5120}));
  EXPECT_EQ(w.tensors[1].shape, (std::vector<int64_t>{7168, 5120}));
  EXPECT_EQ(w.tensors[2].strides, (std::vector<int64_t>{7168, 1}));
  EXPECT_EQ(w.workload.label(d), "M=8192");
  EXPECT_EQ(c.workloads(d.name).size(), 5u);
  EXPECT_EQ(c.find_workload(d.name, "M=70").axes.at("M"), 70);
}

TEST(Definitions, BackwardOrderMatchesTheAbi) {
  Catalog c = repo_catalog();
  const Definition& d = c.definition("mha_bwd_d128_causal");
  ResolvedWorkload w = resolve_workload(d, c.default_workload(d.name));
  std::vector<std::string> names;
  for (const auto& t : w.tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Q", "K", "V", "O", "dO", "LSE", "dQ", "dK", "dV"}));
  EXPECT_EQ(w.tensor("LSE").dtype, DType::f32);
  EXPECT_EQ(w.tensor("LSE").shape, (std::vector<int64_t>{4, 48, 4096}));
  EXPECT_EQ(w.workload.inputs.at("O").kind, "derived");
}

TEST(Definitions, UnknownWorkloadSelectorListsKnownOnes) {
  Catalog c = repo_catalog();
  try {
    (void)c.find_workload("gemm_n7168_k5120", "M=1");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("M=8192"), std::string::npos);
  }
  EXPECT_THROW((void)c.definition("gemm_nope"), InputError);
}

TEST(Definitions, MalformedDefinitionsNameTheField) {
  EXPECT_EQ(error_of(kGood), "");
  std::string s = kGood;
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = s;
    t.replace(t.find(from), from.size(), to);
    return error_of(t);
  };
  EXPECT_NE(replaced("\"op_type\"", "\"op_kind\"").find("defs/x.json: op_kind: unknown field"), std::string::npos);
  EXPECT_NE(replaced("[\"M\", \"K\"]", "[\"M\", \"Q\"]").find("inputs.A.shape[1]: unknown axis 'Q'"), std::string::npos);
  EXPECT_NE(replaced("\"bfloat16\"", "\"bf17\"").find("inputs.A.dtype: unknown dtype"), std::string::npos);
  EXPECT_NE(replaced("\"type\": \"var\"", "\"type\": \"variable\"").find("axes.M.type"), std::string::npos);
  EXPECT_NE(replaced("\"value\": 64", "\"value\": -1").find("axes.K.value: must be positive"), std::string::npos);
  EXPECT_NE(replaced("\"axes\"", "\"axis\"").find("axis: unknown field"), std::string::npos);
  EXPECT_NE(replaced("{\"C\"", "{\"A\"").find("used twice"), std::string::npos);
  EXPECT_NE(replaced("\"reference\": \"def run(A): ...\"", "\"description\": \"\"").find("reference: missing"), std::string::npos);
  EXPECT_NE(error_of("{\"name\": ").find("malformed JSON"), std::string::npos);
  EXPECT_NE(error_of("[1,2]").find("expected an object"), std::string::npos);
}

TEST(Definitions, MalformedWorkloadsNameTheField) {
  Definition d = parse_definition(kGood, "defs/x.json");
  auto error = [&](const std::string& line) -> std::string {
    try {
      (void)parse_workload(line, "w.jsonl:3", d);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error(R"({"definition": "g", "workload": {"uuid": "u", "axes": {"M": 4}}})"), "");
  EXPECT_NE(error(R"({"definition": "g", "workload": {"uuid": "u", "axes": {}}})").find("w.jsonl:3: workload.axes.M: missing"), std::string::npos);
  EXPECT_NE(error(R"({"definition": "g", "workload": {"uuid": "u", "axes": {"M": 4, "K": 8}}})").find("axis is const"), std::string::npos);
  EXPECT_NE(error(R"({"definition": "g", "workload": {"uuid": "u", "axes": {"M": 0}}})").find("positive integer"), std::string::npos);
  EXPECT_NE(error(R"({"definition": "g", "workload": {"uuid": "u", "axes": {"M": 4}, "inputs": {"Z": {"type": "random"}}}})").find("no such input"), std::string::npos);
  EXPECT_NE(error(R"({"definition": "g", "workload": {"uuid": "u", "axes": {"M": 4}, "inputs": {"A": {"type": "safetensors"}}}})").find("unsupported input type"), std::string::npos);
  EXPECT_NE(error(R"({"definition": "h", "workload": {"uuid": "u", "axes": {"M": 4}}})").find("expected 'g'"), std::string::npos);
  EXPECT_NE(error(R"({"definition": "g", "workload": {"uuid": "u", "axes": {"M": 4}}, "extra": 1})").find("extra: unknown field"), std::string::npos);
}

TEST(Definitions, DuplicatesAcrossFilesAreRejected) {
  Catalog c;
  c.add_definition(parse_definition(kGood, "a.json"));
  EXPECT_THROW(c.add_definition(parse_definition(kGood, "b.json")), InputError);
  Definition d = parse_definition(kGood, "a.json");
  c.add_workload(parse_workload(R"({"definition": "g", "workload": {"uuid": "u", "axes": {"M": 4}}})", "w:1", d));
  EXPECT_THROW(c.add_workload(parse_workload(R"({"definition": "g", "workload": {"uuid": "u", "axes": {"M": 5}}})", "w:2", d)),
               InputError);
}

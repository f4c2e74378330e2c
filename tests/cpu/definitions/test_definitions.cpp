// Definitions and workloads as data: the five evaluation definitions load, keep ABI order, and
// every malformed file is rejected with its name and the field path; the generalisation
// definitions (docs/definitions.md) load with the original's sweeps, outside the evaluation set;
// the named problem sets of definitions/problem_sets.json resolve, and bad ones are rejected.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "common/error.h"
#include "common/fs.h"
#include "definitions/catalog.h"

using namespace ptxbench;

namespace {

Catalog repo_catalog() { return Catalog::load(PTXBENCH_SOURCE_DIR); }

const std::vector<std::string> kEvaluation = {"gemm_n7168_k5120", "mha_with_lse_d128", "mha_with_lse_d128_causal",
                                              "mha_bwd_d128", "mha_bwd_d128_causal"};
/// The held-out GQA classes (issue 36), in the heldout-gqa set's order.
const std::vector<std::string> kHeldOutGqa = {"gqa_paged_decode_h24_kv8_d128_ps1",
                                              "gqa_paged_prefill_causal_h24_kv8_d128_ps1",
                                              "gqa_ragged_prefill_causal_h32_kv4_d128"};

/// The four attention definitions at head dimension `d`, in the sets' order.
std::vector<std::string> attention(int d) {
  const std::string s = std::to_string(d);
  return {"mha_with_lse_d" + s, "mha_with_lse_d" + s + "_causal", "mha_bwd_d" + s, "mha_bwd_d" + s + "_causal"};
}

/// The original's gemm-problems list (gemm_problems.csv): the M values of each new GEMM, ascending,
/// and the default (the M of the problem file the original ships for it).
struct GemmSweep {
  std::vector<int64_t> m;
  int64_t default_m;
};
const std::map<std::string, GemmSweep> kGemmSweeps = {
    {"gemm_n128_k2048", {{93, 289, 492, 952, 8828}, 8828}},
    {"gemm_n256_k7168", {{80, 901}, 901}},
    {"gemm_n2048_k4096", {{93, 289, 952, 969, 8828}, 8828}},
    {"gemm_n2048_k5376", {{70, 232, 901, 2379, 8828}, 8828}},
    {"gemm_n4096_k4096", {{70, 232, 972, 2379, 8192}, 8192}},
    {"gemm_n4096_k5376", {{70, 232, 901, 2379, 8828}, 8828}},
    {"gemm_n4096_k14336", {{70, 232, 972, 2379, 8192}, 8192}},
    {"gemm_n5120_k2048", {{93, 289, 492, 952, 8828}, 8828}},
    {"gemm_n5120_k5120", {{70, 232, 972, 2379, 8192}, 8192}},
    {"gemm_n5120_k17408", {{70, 232, 972, 2379, 8192}, 8192}},
    {"gemm_n5376_k4096", {{70, 232, 901, 2379, 8828}, 8828}},
    {"gemm_n5376_k21504", {{70, 232, 901, 2379, 8828}, 8828}},
    {"gemm_n6144_k4096", {{70, 232, 972, 2379, 8192}, 8192}},
    {"gemm_n21504_k5376", {{70, 232, 901, 2379, 8828}, 8828}},
    {"gemm_n28672_k4096", {{70, 232, 972, 2379, 8192}, 8192}},
    {"gemm_n34816_k5120", {{70, 232, 972, 2379, 8192}, 8192}},
};

/// The value of a definition's "stage:" tag, "" without one.
std::string stage_of(const Definition& d) {
  for (const auto& t : d.tags)
    if (t.rfind("stage:", 0) == 0) return t.substr(6);
  return "";
}

std::vector<int64_t> sorted_values(const Catalog& c, const std::string& definition, const std::string& axis) {
  std::vector<int64_t> out;
  for (const auto& w : c.workloads(definition)) out.push_back(w.axes.at(axis));
  std::sort(out.begin(), out.end());
  return out;
}

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

/// A data root holding the definition kGood (as g.json, name "g") and `sets` as problem_sets.json.
void write_root(const fs::path& root, const std::string& sets) {
  fs::create_directories(root / "definitions");
  write_file_atomic(root / "definitions" / "g.json", kGood);
  write_file_atomic(root / "definitions" / Catalog::kProblemSetsFile, sets);
}

}  // namespace

TEST(Definitions, TheFiveEvaluationDefinitionsLoad) {
  Catalog c = repo_catalog();
  for (const auto& name : kEvaluation) EXPECT_NO_THROW((void)c.definition(name)) << name;
  // 5 evaluation + 16 GEMM + 8 attention (d64, d96) for generalisation studies + 3 held-out GQA.
  EXPECT_EQ(c.definitions().size(), 32u);
}

// What the main job runs must not grow with the catalog: exactly the five are tagged
// stage:evaluation, and they are the "evaluation" set; the held-out GQA classes are tagged
// stage:heldout; every other definition is tagged stage:generalization.
TEST(Definitions, TheEvaluationSetIsStillTheFive) {
  Catalog c = repo_catalog();
  EXPECT_EQ(c.problem_set("evaluation"), kEvaluation);
  std::vector<std::string> tagged;
  for (const auto& d : c.definitions()) {
    const bool evaluation = std::find(kEvaluation.begin(), kEvaluation.end(), d.name) != kEvaluation.end();
    const bool held_out = std::find(kHeldOutGqa.begin(), kHeldOutGqa.end(), d.name) != kHeldOutGqa.end();
    EXPECT_EQ(stage_of(d), evaluation ? "evaluation" : held_out ? "heldout" : "generalization") << d.name;
    if (stage_of(d) == "evaluation") tagged.push_back(d.name);
  }
  std::vector<std::string> want = kEvaluation;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(tagged, want);  // definitions() is in file (name) order
}

TEST(Definitions, GemmGeneralizationDefinitionsCarryTheOriginalsSweeps) {
  Catalog c = repo_catalog();
  const Definition& ref = c.definition("gemm_n7168_k5120");
  for (const auto& [name, sweep] : kGemmSweeps) {
    SCOPED_TRACE(name);
    const Definition& d = c.definition(name);
    EXPECT_EQ(d.op_type, "gemm");
    const int64_t N = std::stoll(name.substr(6, name.find("_k") - 6)), K = std::stoll(name.substr(name.find("_k") + 2));
    ASSERT_NE(d.find_axis("N"), nullptr);
    EXPECT_EQ(d.find_axis("N")->value, N);
    EXPECT_EQ(d.find_axis("K")->value, K);
    EXPECT_FALSE(d.find_axis("M")->is_const);
    // Same operator contract as the evaluation GEMM: tensors, dtypes, reference.
    ASSERT_EQ(d.inputs.size(), ref.inputs.size());
    for (std::size_t i = 0; i < d.inputs.size(); ++i) {
      EXPECT_EQ(d.inputs[i].shape, ref.inputs[i].shape);
      EXPECT_EQ(d.inputs[i].dtype, DType::bf16);
    }
    EXPECT_EQ(d.outputs.at(0).dtype, DType::bf16);
    EXPECT_EQ(d.reference, ref.reference);
    EXPECT_EQ(sorted_values(c, name, "M"), sweep.m);
    EXPECT_EQ(c.default_workload(name).axes.at("M"), sweep.default_m);
    for (const auto& w : c.workloads(name)) {
      ResolvedWorkload r = resolve_workload(d, w);
      EXPECT_EQ(r.tensor("C").shape, (std::vector<int64_t>{w.axes.at("M"), N}));
    }
  }
}

TEST(Definitions, AttentionGeneralizationDefinitionsFollowTheD128Ones) {
  Catalog c = repo_catalog();
  for (int dim : {64, 96})
    for (std::size_t k = 0; k < 4; ++k) {
      const std::string name = attention(dim)[k];
      SCOPED_TRACE(name);
      const Definition& d = c.definition(name);
      const Definition& base = c.definition(attention(128)[k]);
      EXPECT_EQ(d.op_type, base.op_type);
      EXPECT_EQ(d.find_axis("D")->value, dim);
      for (const char* axis : {"B", "H"}) EXPECT_EQ(d.find_axis(axis)->value, base.find_axis(axis)->value) << axis;
      EXPECT_NE(d.description.find("1/√" + std::to_string(dim)), std::string::npos);
      EXPECT_EQ(d.reference, base.reference);  // written for any head dimension (q.shape[-1])
      EXPECT_EQ(sorted_values(c, name, "S"), (std::vector<int64_t>{512, 1024, 2048, 4096, 8192, 16384}));
      EXPECT_EQ(c.default_workload(name).axes.at("S"), 4096);
      for (const auto& w : c.workloads(name)) {
        ResolvedWorkload r = resolve_workload(d, w);
        EXPECT_EQ(r.tensors.size(), base.inputs.size() + base.outputs.size());
        EXPECT_EQ(r.tensor("Q").shape, (std::vector<int64_t>{4, 48, w.axes.at("S"), dim}));
      }
    }
}

// One case of each kind worked by hand: shapes, strides and the FLOP count the operators use
// (2·M·N·K; attention 4·B·H·S²·D, halved when causal, ×2.5 for the backward).
TEST(Definitions, HandComputedShapesAndFlops) {
  Catalog c = repo_catalog();
  {
    const Definition& d = c.definition("gemm_n34816_k5120");
    ResolvedWorkload w = resolve_workload(d, c.find_workload(d.name, "M=70"));
    EXPECT_EQ(w.tensor("A").shape, (std::vector<int64_t>{70, 5120}));
    EXPECT_EQ(w.tensor("B").shape, (std::vector<int64_t>{34816, 5120}));
    EXPECT_EQ(w.tensor("C").strides, (std::vector<int64_t>{34816, 1}));
    EXPECT_EQ(2 * w.axis("M") * w.axis("N") * w.axis("K"), int64_t{24956108800});
  }
  {
    const Definition& d = c.definition("mha_bwd_d96_causal");
    ResolvedWorkload w = resolve_workload(d, c.find_workload(d.name, "S=512"));
    EXPECT_EQ(w.tensor("dK").shape, (std::vector<int64_t>{4, 48, 512, 96}));
    EXPECT_EQ(w.tensor("LSE").shape, (std::vector<int64_t>{4, 48, 512}));
    EXPECT_EQ(w.workload.inputs.at("LSE").kind, "derived");
    const double f = 4.0 * w.axis("B") * w.axis("H") * w.axis("S") * w.axis("S") * w.axis("D");
    EXPECT_DOUBLE_EQ(2.5 * f / 2, 24159191040.0);
  }
  {
    const Definition& d = c.definition("mha_with_lse_d64");
    ResolvedWorkload w = resolve_workload(d, c.default_workload(d.name));
    EXPECT_EQ(w.tensor("O").shape, (std::vector<int64_t>{4, 48, 4096, 64}));
    EXPECT_EQ(4 * w.axis("B") * w.axis("H") * w.axis("S") * w.axis("S") * w.axis("D"), int64_t{824633720832});
  }
}

TEST(ProblemSets, NamedSetsResolve) {
  Catalog c = repo_catalog();
  EXPECT_EQ(c.problem_set("4ops"), attention(128));
  std::vector<std::string> eight = attention(64);
  for (const auto& n : attention(128)) eight.push_back(n);
  EXPECT_EQ(c.problem_set("8ops"), eight);
  EXPECT_EQ(c.problem_set("mha_d96"), attention(96));
  const auto& gemm16 = c.problem_set("gemm16");
  ASSERT_EQ(gemm16.size(), 16u);
  for (const auto& [name, sweep] : kGemmSweeps)
    EXPECT_NE(std::find(gemm16.begin(), gemm16.end(), name), gemm16.end()) << name;
  EXPECT_EQ(c.problem_set("heldout-gqa"), kHeldOutGqa);
  const auto& gemm17 = c.problem_set("gemm17");  // the original's whole list: gemm16 and the evaluation GEMM
  EXPECT_EQ(gemm17.size(), 17u);
  EXPECT_NE(std::find(gemm17.begin(), gemm17.end(), "gemm_n7168_k5120"), gemm17.end());
  for (const auto& set : c.problem_sets())
    for (const auto& name : set.definitions) EXPECT_NO_THROW((void)c.definition(name)) << set.name << ": " << name;
  try {
    (void)c.problem_set("9ops");
    FAIL() << "an unknown set must throw";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown problem set '9ops' (known: evaluation, 4ops, 8ops"), std::string::npos) << what;
  }
}

TEST(ProblemSets, BadSetsAreRejectedAtLoad) {
  auto load_error = [](const std::string& sets) -> std::string {
    TempDir dir("ptxbench-sets");
    write_root(dir.path(), sets);
    try {
      (void)Catalog::load(dir.path());
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(load_error(R"({"one": ["g"]})"), "");
  EXPECT_NE(load_error(R"({"one": ["g", "nope"]})").find("problem_sets.json: one[1]: unknown definition 'nope'"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"one": ["g", "g"]})").find("one[1]: 'g' is listed twice"), std::string::npos);
  EXPECT_NE(load_error(R"({"one": []})").find("one: a problem set names at least one definition"), std::string::npos);
  EXPECT_NE(load_error(R"({"one": "g"})").find("one: expected an array"), std::string::npos);
  EXPECT_NE(load_error(R"({"one": ["g", 3]})").find("one[1]: expected a definition name"), std::string::npos);
  EXPECT_NE(load_error(R"({"a set": ["g"]})").find("letters, digits, '_' and '-'"), std::string::npos);
  EXPECT_NE(load_error(R"(["g"])").find("expected an object"), std::string::npos);

  // Without the file the catalog has no sets, and asking for one says so.
  TempDir dir("ptxbench-sets");
  write_root(dir.path(), "{}");
  fs::remove(dir.path() / "definitions" / Catalog::kProblemSetsFile);
  Catalog c = Catalog::load(dir.path());
  EXPECT_TRUE(c.problem_sets().empty());
  EXPECT_THROW((void)c.problem_set("evaluation"), InputError);

  // Built by hand: members must already be definitions; names are unique.
  c.add_problem_set({"s", {"g"}, "test"});
  EXPECT_THROW(c.add_problem_set({"s", {"g"}, "test"}), InputError);
  EXPECT_THROW(c.add_problem_set({"t", {"h"}, "test"}), InputError);
  EXPECT_EQ(c.problem_set("s"), std::vector<std::string>{"g"});
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
  // A definition's own tolerance: a ratio below 1 must come with the bound every element still meets.
  const std::string ref = "\"reference\": \"def run(A): ...\"";
  EXPECT_EQ(replaced(ref, "\"tolerance\": {\"atol\": 0.02}, " + ref), "");
  EXPECT_NE(replaced(ref, "\"tolerance\": {\"required_matched_ratio\": 0.999}, " + ref).find("needs outlier_atol"),
            std::string::npos);
  EXPECT_NE(replaced(ref, "\"tolerance\": {\"required_matched_ratio\": 0.5, \"outlier_atol\": 0.1, \"outlier_rtol\": 0.1}, " + ref)
                .find("tolerance.required_matched_ratio: out of range"),
            std::string::npos);
  EXPECT_NE(replaced(ref, "\"tolerance\": {\"atol\": \"big\"}, " + ref).find("tolerance.atol: must be a number"), std::string::npos);
  EXPECT_NE(replaced(ref, "\"tolerance\": {\"slack\": 1}, " + ref).find("tolerance.slack: unknown field"), std::string::npos);
}

// Only the causal backward definitions and the K = 21504 GEMM carry their own tolerance, where
// cuDNN / cuBLASLt themselves miss the all-elements rule (docs/verdict.md, "Correctness").
TEST(Definitions, OnlyTheCausalBackwardsAndTheLongestKHaveTheirOwnTolerance) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  for (const Definition& d : catalog.definitions()) {
    const std::string& name = d.name;
    bool causal_bwd = d.op_type == "mha_bwd_causal" || name == "gemm_n5376_k21504";
    EXPECT_EQ(d.tolerance.has_value(), causal_bwd) << name;
    if (causal_bwd) {
      EXPECT_DOUBLE_EQ(*d.tolerance->required_matched_ratio, 0.99999) << name;
      EXPECT_DOUBLE_EQ(*d.tolerance->outlier_atol, 0.05) << name;
    }
  }
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

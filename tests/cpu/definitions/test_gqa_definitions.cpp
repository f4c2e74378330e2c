// The held-out GQA definitions as data (docs/definitions.md, "Held-out GQA definitions"): their
// tensors in ABI order with the int32 index arrays and the scalar sm_scale, the released axes as
// default workloads, the samplers the operators require; and the sequence layout drawn for each
// workload (src/definitions/sequence_layout.*): sums equal to the axes, lengths and pages in
// range, distinct pages, the same layout on every call and a different one for another key.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/error.h"
#include "definitions/catalog.h"
#include "definitions/sequence_layout.h"

using namespace ptxbench;

namespace {

Catalog repo_catalog() { return Catalog::load(PTXBENCH_SOURCE_DIR); }

const char* kDecode = "gqa_paged_decode_h24_kv8_d128_ps1";
const char* kPaged = "gqa_paged_prefill_causal_h24_kv8_d128_ps1";
const char* kRagged = "gqa_ragged_prefill_causal_h32_kv4_d128";

std::vector<std::string> tensor_names(const ResolvedWorkload& w) {
  std::vector<std::string> out;
  for (const auto& t : w.tensors) out.push_back(t.name);
  return out;
}

/// The totals the operators derive from a workload of each class (src/ops/gqa_op.cpp).
SequenceTotals totals_of(const ResolvedWorkload& w) {
  const std::string& op = w.definition->op_type;
  if (op == "gqa_paged_decode")
    return {w.axis("batch_size"), w.axis("batch_size"), w.axis("num_kv_indices"), w.axis("num_pages")};
  if (op == "gqa_paged_prefill_causal")
    return {w.axis("len_indptr") - 1, w.axis("total_q"), w.axis("num_kv_indices"), w.axis("num_pages")};
  return {w.axis("len_indptr") - 1, w.axis("total_q"), w.axis("total_kv"), 0};
}

/// Every property a layout must have for `t`; failures name the broken one.
void expect_valid(const SequenceLayout& l, const SequenceTotals& t) {
  ASSERT_EQ(static_cast<int64_t>(l.qo_indptr.size()), t.batch + 1);
  ASSERT_EQ(static_cast<int64_t>(l.kv_indptr.size()), t.batch + 1);
  EXPECT_EQ(l.qo_indptr.front(), 0);
  EXPECT_EQ(l.kv_indptr.front(), 0);
  EXPECT_EQ(l.qo_indptr.back(), t.total_q);
  EXPECT_EQ(l.kv_indptr.back(), t.total_kv);
  for (int64_t b = 0; b < l.batch(); ++b) {
    EXPECT_GE(l.q_len(b), 1) << "sequence " << b;
    EXPECT_GE(l.kv_len(b), l.q_len(b)) << "sequence " << b;
  }
  if (t.num_pages == 0) {
    EXPECT_TRUE(l.kv_indices.empty());
    return;
  }
  ASSERT_EQ(static_cast<int64_t>(l.kv_indices.size()), t.total_kv);
  std::set<int32_t> distinct(l.kv_indices.begin(), l.kv_indices.end());
  EXPECT_EQ(distinct.size(), l.kv_indices.size()) << "pages repeat";
  EXPECT_GE(*distinct.begin(), 0);
  EXPECT_LT(*distinct.rbegin(), t.num_pages);
}

std::string layout_error(const SequenceTotals& t) {
  try {
    (void)make_sequence_layout("k", t);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(GqaDefinitions, TensorsInAbiOrderWithIndexArraysAndScalar) {
  Catalog c = repo_catalog();
  const std::map<std::string, std::vector<std::string>> names = {
      {kDecode, {"q", "k_cache", "v_cache", "kv_indptr", "kv_indices", "sm_scale", "output", "lse"}},
      {kPaged, {"q", "k_cache", "v_cache", "qo_indptr", "kv_indptr", "kv_indices", "sm_scale", "output", "lse"}},
      {kRagged, {"q", "k", "v", "qo_indptr", "kv_indptr", "sm_scale", "output", "lse"}}};
  for (const auto& [name, want] : names) {
    SCOPED_TRACE(name);
    const Definition& d = c.definition(name);
    EXPECT_NE(std::find(d.tags.begin(), d.tags.end(), "stage:heldout"), d.tags.end());
    EXPECT_FALSE(d.tolerance.has_value());  // the MHA forwards' rule
    ResolvedWorkload w = resolve_workload(d, c.default_workload(name));
    EXPECT_EQ(tensor_names(w), want);
    for (const auto& t : w.tensors) {
      const bool index = t.name.find("ind") != std::string::npos;
      const DType dtype = index ? DType::i32 : (t.name == "sm_scale" || t.name == "lse") ? DType::f32 : DType::bf16;
      EXPECT_EQ(t.dtype, dtype) << t.name;
    }
    EXPECT_TRUE(w.tensor("sm_scale").shape.empty());
    EXPECT_EQ(w.tensor("sm_scale").numel(), 1);
    // The description states the contract's easily-missed parts.
    for (const char* phrase : {"BASE-2", "h / (num_qo_heads / num_kv_heads)", "sm_scale", "−inf"})
      EXPECT_NE(d.description.find(phrase), std::string::npos) << phrase;
    if (d.op_type != "gqa_paged_decode") {
      EXPECT_NE(d.description.find("bottom-right"), std::string::npos);
      EXPECT_NE(d.description.find("j ≤ i + delta"), std::string::npos);
    }
    if (d.op_type != "gqa_ragged_prefill_causal") {
      EXPECT_NE(d.description.find("page size 1"), std::string::npos);
    }
  }
  ResolvedWorkload decode = resolve_workload(c.definition(kDecode), c.default_workload(kDecode));
  EXPECT_EQ(decode.tensor("k_cache").shape, (std::vector<int64_t>{42784, 1, 8, 128}));
  EXPECT_EQ(decode.tensor("lse").shape, (std::vector<int64_t>{15, 24}));
  ResolvedWorkload ragged = resolve_workload(c.definition(kRagged), c.default_workload(kRagged));
  EXPECT_EQ(ragged.tensor("k").shape, (std::vector<int64_t>{16294, 4, 128}));
  EXPECT_EQ(ragged.tensor("output").shape, (std::vector<int64_t>{16294, 32, 128}));
}

TEST(GqaDefinitions, DefaultWorkloadsAreTheReleasedAxes) {
  Catalog c = repo_catalog();
  using Axes = std::map<std::string, int64_t>;
  EXPECT_EQ(c.default_workload(kDecode).axes,
            (Axes{{"batch_size", 15}, {"len_indptr", 16}, {"num_kv_indices", 9625}, {"num_pages", 42784}}));
  EXPECT_EQ(c.default_workload(kPaged).axes,
            (Axes{{"len_indptr", 2}, {"total_q", 892}, {"num_kv_indices", 892}, {"num_pages", 43676}}));
  EXPECT_EQ(c.default_workload(kRagged).axes, (Axes{{"len_indptr", 34}, {"total_q", 16294}, {"total_kv", 16294}}));
  for (const char* name : {kDecode, kPaged, kRagged}) {
    SCOPED_TRACE(name);
    EXPECT_GE(c.workloads(name).size(), 2u);  // the released one and a small one for fast tests
    for (const auto& w : c.workloads(name))
      for (const auto& [input, sampler] : w.inputs) {
        const bool index = input.find("ind") != std::string::npos;
        EXPECT_EQ(sampler.kind, index ? "derived" : input == "sm_scale" ? "scalar" : "random") << w.uuid << " " << input;
        if (input == "sm_scale") {
          EXPECT_DOUBLE_EQ(sampler.value, 0.08838834764831843);
        }
      }
  }
}

TEST(SequenceLayout, EveryWorkloadGetsAValidLayout) {
  Catalog c = repo_catalog();
  for (const char* name : {kDecode, kPaged, kRagged})
    for (const auto& wl : c.workloads(name)) {
      SCOPED_TRACE(wl.uuid);
      ResolvedWorkload w = resolve_workload(c.definition(name), wl);
      const SequenceTotals t = totals_of(w);
      EXPECT_EQ(t.batch + 1, w.axis("len_indptr"));
      expect_valid(make_sequence_layout(wl.uuid, t), t);
    }
}

TEST(SequenceLayout, SameKeySameLayoutOtherKeyAnother) {
  const SequenceTotals t{33, 16294, 20000, 0};
  const SequenceLayout a = make_sequence_layout("w1", t), b = make_sequence_layout("w1", t);
  EXPECT_EQ(a.qo_indptr, b.qo_indptr);
  EXPECT_EQ(a.kv_indptr, b.kv_indptr);
  const SequenceLayout other = make_sequence_layout("w2", t);
  EXPECT_NE(a.qo_indptr, other.qo_indptr);
  EXPECT_NE(a.kv_indptr, other.kv_indptr);
  // Lengths vary: not an even split.
  std::set<int64_t> lengths;
  for (int64_t s = 0; s < a.batch(); ++s) lengths.insert(a.q_len(s));
  EXPECT_GT(lengths.size(), 10u);

  const SequenceTotals paged{4, 4, 300, 512};
  const SequenceLayout p = make_sequence_layout("p", paged);
  expect_valid(p, paged);
  EXPECT_EQ(p.kv_indices, make_sequence_layout("p", paged).kv_indices);
  EXPECT_FALSE(std::is_sorted(p.kv_indices.begin(), p.kv_indices.end()));  // scattered through the cache
}

TEST(SequenceLayout, PinnedValuesKeepTheGeneratorStable) {
  // A change of the generator changes every workload's layout, and with it stored results' inputs:
  // these are its draws for the ragged class's small workload and for a tiny paged one.
  const SequenceLayout l = make_sequence_layout("gqa_ragged_prefill_causal_h32_kv4_d128-small", {4, 160, 256, 0});
  EXPECT_EQ(l.qo_indptr, (std::vector<int32_t>{0, 67, 110, 138, 160}));
  EXPECT_EQ(l.kv_indptr, (std::vector<int32_t>{0, 105, 166, 199, 256}));
  EXPECT_EQ(make_sequence_layout("p", {2, 2, 5, 8}).kv_indices, (std::vector<int32_t>{7, 4, 5, 0, 6}));
}

TEST(SequenceLayout, EdgeTotals) {
  // One sequence takes everything; a decode batch has one query per sequence.
  const SequenceLayout one = make_sequence_layout("x", {1, 892, 892, 43676});
  EXPECT_EQ(one.qo_indptr, (std::vector<int32_t>{0, 892}));
  EXPECT_EQ(one.kv_indptr, (std::vector<int32_t>{0, 892}));
  const SequenceLayout decode = make_sequence_layout("y", {15, 15, 9625, 42784});
  for (int64_t b = 0; b < decode.batch(); ++b) EXPECT_EQ(decode.q_len(b), 1);
  // Every page used.
  const SequenceLayout full = make_sequence_layout("z", {3, 3, 10, 10});
  std::vector<int32_t> pages = full.kv_indices;
  std::sort(pages.begin(), pages.end());
  EXPECT_EQ(pages, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(SequenceLayout, ImpossibleTotalsAreInputErrors) {
  EXPECT_EQ(layout_error({2, 4, 8, 0}), "");
  EXPECT_NE(layout_error({0, 4, 8, 0}).find("at least one sequence"), std::string::npos);
  EXPECT_NE(layout_error({5, 4, 8, 0}).find("total_q ≥ batch"), std::string::npos);
  EXPECT_NE(layout_error({2, 8, 4, 0}).find("total_kv ≥ total_q"), std::string::npos);
  EXPECT_NE(layout_error({2, 4, 8, 7}).find("num_pages ≥ total_kv"), std::string::npos);
  EXPECT_NE(layout_error({2, 4, int64_t{1} << 32, 0}).find("int32"), std::string::npos);
}

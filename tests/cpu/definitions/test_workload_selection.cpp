// Which workloads a sweep covers: "all" in the workloads file's order, a list in its own order
// (uuids or axis values, a multi-axis selector read across its commas), and clear errors for an
// unknown workload, a repeated one, "all" inside a list and an empty item.
#include <gtest/gtest.h>

#include <functional>
#include <tuple>

#include "common/error.h"
#include "definitions/catalog.h"
#include "definitions/workload_selection.h"

using namespace ptxbench;

namespace {

const std::string kGemm = "gemm_n7168_k5120";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

std::vector<std::string> labels(const Catalog& c, const std::string& def, const std::vector<const Workload*>& ws) {
  std::vector<std::string> out;
  for (const Workload* w : ws) out.push_back(w->label(c.definition(def)));
  return out;
}

}  // namespace

TEST(WorkloadSelection, AllIsEveryWorkloadInFileOrder) {
  Catalog c = Catalog::load(PTXBENCH_SOURCE_DIR);
  WorkloadSelection all = parse_workload_selection(" all ");
  EXPECT_TRUE(all.all);
  std::vector<const Workload*> ws = select_workloads(c, kGemm, all);
  ASSERT_EQ(ws.size(), c.workloads(kGemm).size());
  for (std::size_t i = 0; i < ws.size(); ++i) EXPECT_EQ(ws[i], &c.workloads(kGemm)[i]);
  EXPECT_EQ(labels(c, kGemm, ws).front(), "M=8192");
}

TEST(WorkloadSelection, AListKeepsItsOrderAndTakesUuidsOrAxisValues) {
  Catalog c = Catalog::load(PTXBENCH_SOURCE_DIR);
  WorkloadSelection s = parse_workload_selection("M=70, gemm_n7168_k5120-m8192,M=232");
  EXPECT_EQ(s.text(), "M=70,gemm_n7168_k5120-m8192,M=232");
  EXPECT_EQ(labels(c, kGemm, select_workloads(c, kGemm, s)), (std::vector<std::string>{"M=70", "M=8192", "M=232"}));
}

TEST(WorkloadSelection, UnknownRepeatedAndMalformedItemsAreClearErrors) {
  Catalog c = Catalog::load(PTXBENCH_SOURCE_DIR);
  std::string unknown = error_of([&] { (void)select_workloads(c, kGemm, parse_workload_selection("M=70,M=71")); });
  EXPECT_TRUE(has(unknown, "no workload 'M=71' for " + kGemm)) << unknown;
  EXPECT_TRUE(has(unknown, "known: M=8192")) << "the error lists the known workloads: " << unknown;
  std::string twice = error_of([&] { (void)select_workloads(c, kGemm, parse_workload_selection("M=70,gemm_n7168_k5120-m70")); });
  EXPECT_TRUE(has(twice, "listed twice")) << twice;
  EXPECT_TRUE(has(error_of([] { (void)parse_workload_selection("all,M=70"); }), "stands alone"));
  EXPECT_TRUE(has(error_of([] { (void)parse_workload_selection("M=70,,M=232"); }), "empty item"));
  EXPECT_TRUE(has(error_of([] { (void)parse_workload_selection("  "); }), "got nothing"));
  EXPECT_TRUE(has(error_of([&] { (void)select_workloads(c, "gemm_nope", parse_workload_selection("all")); }), "gemm_nope"));
}

// A definition with two variable axes: its labels hold a comma, which a list reads across.
TEST(WorkloadSelection, AMultiAxisSelectorIsReadAcrossItsComma) {
  Catalog c;
  Definition d = parse_definition(R"({"name": "g2", "op_type": "gemm",
    "axes": {"M": {"type": "var"}, "N": {"type": "var"}, "K": {"type": "const", "value": 64}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "bfloat16"}, "B": {"shape": ["N", "K"], "dtype": "bfloat16"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "bfloat16"}}, "reference": "def run(A, B): ..."})",
                                  "g2.json");
  c.add_definition(d);
  for (auto [uuid, m, n] : {std::tuple{"a", 1, 2}, std::tuple{"b", 3, 4}, std::tuple{"c", 1, 4}})
    c.add_workload(parse_workload(std::string(R"({"definition": "g2", "workload": {"uuid": ")") + uuid +
                                      R"(", "axes": {"M": )" + std::to_string(m) + R"(, "N": )" + std::to_string(n) + "}}}",
                                  "w", d));
  std::vector<const Workload*> ws = select_workloads(c, "g2", parse_workload_selection("M=3,N=4,a,M=1,N=4"));
  ASSERT_EQ(ws.size(), 3u);
  EXPECT_EQ(ws[0]->uuid, "b");
  EXPECT_EQ(ws[1]->uuid, "a");
  EXPECT_EQ(ws[2]->uuid, "c");
  EXPECT_TRUE(has(error_of([&] { (void)select_workloads(c, "g2", parse_workload_selection("M=3")); }), "no workload 'M=3'"));
}

TEST(WorkloadSelection, TheStoredFormRoundTrips) {
  EXPECT_EQ(to_json(parse_workload_selection("all")), "all");
  WorkloadSelection list = parse_workload_selection("M=70,M=8192");
  EXPECT_EQ(to_json(list), ordered_json({"M=70", "M=8192"}));
  EXPECT_EQ(workload_selection_from_json(to_json(list), "config").items, list.items);
  EXPECT_TRUE(workload_selection_from_json("all", "config").all);
  EXPECT_EQ(workload_selection_from_json("M=70,M=232", "config").items, (std::vector<std::string>{"M=70", "M=232"}));
  std::string bad = error_of([] { (void)workload_selection_from_json(7, "run config: workloads"); });
  EXPECT_TRUE(has(bad, "run config: workloads")) << bad;
  EXPECT_TRUE(has(error_of([] { (void)workload_selection_from_json(ordered_json::array(), "c"); }), "non-empty array"));
  EXPECT_TRUE(has(error_of([] { (void)workload_selection_from_json(ordered_json({"M=70", 3}), "c"); }), "non-empty strings"));
}

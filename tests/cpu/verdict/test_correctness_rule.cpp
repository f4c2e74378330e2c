// The correctness rule of docs/design.md §4 on hand-made outputs: boundaries of atol/rtol, NaN/Inf,
// mismatch counts, the first mismatching multi-indices and bf16 decoding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "verdict/correctness.h"

using namespace ptxbench;

namespace {
TensorSpec f32_spec(std::vector<int64_t> shape) {
  TensorSpec s;
  s.name = "C";
  s.dtype = DType::f32;
  s.shape = shape;
  s.strides.assign(shape.size(), 1);
  return s;
}
uint16_t to_bf16(float f) {  // truncation is enough for exactly representable test values
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>(b >> 16);
}
}  // namespace

TEST(CorrectnessRule, AnElementFailsOnlyWhenBothToleranceTestsFail) {
  // expected 100: abs error 0.5 > atol but rel 0.005 < rtol -> passes
  // expected 0.001: abs error 0.009 < atol -> passes though rel is huge
  // expected 1: abs 0.02 and rel 0.02 -> fails
  std::vector<float> expected = {100.0f, 0.001f, 1.0f, -3.0f};
  std::vector<float> got = {100.5f, 0.010f, 1.02f, -3.0f};
  TensorComparison c = compare_tensor(got.data(), expected.data(), f32_spec({2, 2}), Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatches, 1);
  ASSERT_EQ(c.first_mismatches.size(), 1u);
  EXPECT_EQ(c.first_mismatches[0].index, (std::vector<int64_t>{1, 0}));
  EXPECT_NEAR(c.max_abs_error, 0.5, 1e-6);
  got[2] = 1.009f;
  EXPECT_TRUE(compare_tensor(got.data(), expected.data(), f32_spec({2, 2}), Tolerance{}).passed);
}

TEST(CorrectnessRule, AnyNanOrInfFails) {
  std::vector<float> expected(8, 1.0f), got(8, 1.0f);
  got[5] = std::numeric_limits<float>::quiet_NaN();
  TensorComparison c = compare_tensor(got.data(), expected.data(), f32_spec({8}), Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.non_finite, 1);
  got[5] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(compare_tensor(got.data(), expected.data(), f32_spec({8}), Tolerance{}).passed);
  // A loose ratio never excuses a NaN.
  got[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(compare_tensor(got.data(), expected.data(), f32_spec({8}), Tolerance{1e-2, 1e-2, 0.5}).passed);
}

TEST(CorrectnessRule, RequiredRatioBelowOneToleratesAFewMismatches) {
  std::vector<float> expected(100, 1.0f), got(100, 1.0f);
  got[3] = got[50] = 5.0f;
  EXPECT_FALSE(compare_tensor(got.data(), expected.data(), f32_spec({100}), Tolerance{}).passed);
  EXPECT_TRUE(compare_tensor(got.data(), expected.data(), f32_spec({100}), Tolerance{1e-2, 1e-2, 0.98}).passed);
}

// The causal backward's rule (definitions/mha_bwd_*_causal.json): a few elements may miss the 1e-2
// tolerance (bf16 rounding of P and dS on rows with one or two keys, as cuDNN and FlashAttention do),
// but every one of them stays within the outlier bound; one garbage element fails the tensor.
TEST(CorrectnessRule, OutliersAreToleratedOnlyWithinTheirBound) {
  Tolerance tol{1e-2, 1e-2, 0.98, 5e-2, 5e-2};
  std::vector<float> expected(100, 1.0f), got(100, 1.0f);
  got[3] = 1.02f;  // 2% off: a mismatch, within the 5% bound
  got[50] = 0.96f;
  TensorComparison c = compare_tensor(got.data(), expected.data(), f32_spec({100}), tol);
  EXPECT_TRUE(c.passed);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.beyond_outlier_bound, 0);
  got[77] = 1.06f;  // within the ratio (3 of 100) but beyond the bound
  c = compare_tensor(got.data(), expected.data(), f32_spec({100}), tol);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatches, 3);
  EXPECT_EQ(c.beyond_outlier_bound, 1);
  got[77] = 1.0f;
  got[10] = got[11] = 1.03f;  // 4 of 100 mismatch: more than the ratio allows
  EXPECT_FALSE(compare_tensor(got.data(), expected.data(), f32_spec({100}), tol).passed);
  // The bound is written into the verdict only when set, and read back.
  ordered_json j = tol;
  EXPECT_EQ(j["outlier_atol"], 5e-2);
  EXPECT_FALSE(ordered_json(Tolerance{}).contains("outlier_atol"));
  EXPECT_DOUBLE_EQ(j.get<Tolerance>().outlier_rtol, 5e-2);
}

TEST(CorrectnessRule, ADefinitionsToleranceOverridesTheDefaultFieldByField) {
  Definition def;
  EXPECT_DOUBLE_EQ(Tolerance{}.for_definition(def).required_ratio, 1.0);
  def.tolerance = ToleranceOverride{std::nullopt, 2e-2, 0.99999, 5e-2, 5e-2};
  Tolerance t = Tolerance{}.for_definition(def);
  EXPECT_DOUBLE_EQ(t.atol, 1e-2) << "unset: the default";
  EXPECT_DOUBLE_EQ(t.rtol, 2e-2);
  EXPECT_DOUBLE_EQ(t.required_ratio, 0.99999);
  EXPECT_DOUBLE_EQ(t.outlier_atol, 5e-2);
}

TEST(CorrectnessRule, PoisonedBf16OutputIsCaughtAndIndicesAreOrdered) {
  // 0xFFFF is how the runner poisons bf16 outputs: a NaN.
  const int64_t rows = 512, cols = 4096;  // big enough for the threaded path
  std::vector<float> expected(rows * cols, 2.0f);
  std::vector<uint16_t> got(rows * cols, to_bf16(2.0f));
  got[7 * cols + 9] = 0xFFFF;
  got[300 * cols + 1] = to_bf16(3.0f);
  got[3 * cols + 4095] = to_bf16(2.5f);
  TensorSpec s = f32_spec({rows, cols});
  s.dtype = DType::bf16;
  TensorComparison c = compare_tensor(got.data(), expected.data(), s, Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatches, 3);
  EXPECT_EQ(c.non_finite, 1);
  ASSERT_EQ(c.first_mismatches.size(), 3u);
  EXPECT_EQ(c.first_mismatches[0].index, (std::vector<int64_t>{3, 4095}));
  EXPECT_EQ(c.first_mismatches[1].index, (std::vector<int64_t>{7, 9}));
  EXPECT_TRUE(std::isnan(c.first_mismatches[1].got));
  EXPECT_EQ(c.first_mismatches[2].index, (std::vector<int64_t>{300, 1}));
  EXPECT_DOUBLE_EQ(c.first_mismatches[2].got, 3.0);
}

TEST(CorrectnessRule, Bf16AndF16Decoding) {
  uint16_t bf = to_bf16(-1.5f);
  EXPECT_DOUBLE_EQ(element_to_double(&bf, DType::bf16, 0), -1.5);
  uint16_t h[] = {0x3c00, 0xc000, 0x0001, 0x7c00};  // 1, -2, smallest subnormal, +inf
  EXPECT_DOUBLE_EQ(element_to_double(h, DType::f16, 0), 1.0);
  EXPECT_DOUBLE_EQ(element_to_double(h, DType::f16, 1), -2.0);
  EXPECT_DOUBLE_EQ(element_to_double(h, DType::f16, 2), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(element_to_double(h, DType::f16, 3)));
}

// The result does not depend on how many host threads compare (workers sharing a host pass their
// share): same counts, same extremes, the same lowest mismatching indices.
TEST(CorrectnessRule, ThreadCountDoesNotChangeTheResult) {
  const int64_t n = 3 << 20;  // above the single-thread cut-off
  std::vector<float> expected(n), got(n);
  for (int64_t i = 0; i < n; ++i) expected[i] = got[i] = static_cast<float>(i % 1000) * 0.25f;
  for (int64_t i : {int64_t{5}, int64_t{1} << 20, n / 2 + 7, n - 1}) got[i] += 50.0f;
  got[n / 3 + 1] = std::numeric_limits<float>::quiet_NaN();
  TensorComparison base = compare_tensor(got.data(), expected.data(), f32_spec({n}), Tolerance{}, 1);
  EXPECT_EQ(base.mismatches, 5);
  EXPECT_EQ(base.non_finite, 1);
  for (unsigned threads : {0u, 2u, 3u, 16u}) {
    SCOPED_TRACE(threads);
    TensorComparison c = compare_tensor(got.data(), expected.data(), f32_spec({n}), Tolerance{}, threads);
    EXPECT_EQ(c.mismatches, base.mismatches);
    EXPECT_EQ(c.non_finite, base.non_finite);
    EXPECT_DOUBLE_EQ(c.max_abs_error, base.max_abs_error);
    EXPECT_DOUBLE_EQ(c.max_rel_error, base.max_rel_error);
    ASSERT_EQ(c.first_mismatches.size(), base.first_mismatches.size());
    for (std::size_t k = 0; k < c.first_mismatches.size(); ++k)
      EXPECT_EQ(c.first_mismatches[k].index, base.first_mismatches[k].index);
  }
}

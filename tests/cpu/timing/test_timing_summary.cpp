// Timing statistics: per-trial medians, the mean of trial medians, paired speedups, spreads and
// the roofline floor.
#include <gtest/gtest.h>

#include "common/stats.h"
#include "timing/roofline.h"
#include "timing/timing_summary.h"

using namespace ptxbench;

TEST(Stats, MedianMeanSpread) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(mean({1, 2, 6}), 3);
  EXPECT_DOUBLE_EQ(relative_spread({9, 10, 11}), 0.2);
  EXPECT_THROW(median({}), std::exception);
}

TEST(TimingSummary, PairsTrialsAndTakesTheMedianRatio) {
  // Candidate trials (medians 100, 110, 90) against baseline trials (medians 200, 200, 210).
  std::vector<std::vector<double>> cand = {{100, 99, 101, 500}, {110, 111, 109}, {90, 95, 85}};
  std::vector<std::vector<double>> base = {{200, 200, 200}, {200, 201, 199}, {210, 210, 210}};
  TimingSummary t = summarize_timing(cand, base, 50.0);
  EXPECT_DOUBLE_EQ(t.candidate.trial_medians_us[0], 100.5);  // an outlier call barely moves the median
  EXPECT_NEAR(t.candidate.mean_us, (100.5 + 110 + 90) / 3, 1e-9);
  EXPECT_DOUBLE_EQ(t.baseline.median_us, 200);
  ASSERT_EQ(t.ratios.size(), 3u);
  EXPECT_NEAR(t.ratios[0], 200 / 100.5, 1e-12);
  EXPECT_NEAR(t.speedup, 200 / 100.5, 1e-12);  // median of {1.990, 1.818, 2.333}
  EXPECT_NEAR(t.speedup_spread, (210.0 / 90 - 200.0 / 110) / (200 / 100.5), 1e-9);
  EXPECT_FALSE(t.below_floor);
  EXPECT_TRUE(summarize_timing(cand, base, 120.0).below_floor);
  EXPECT_THROW(summarize_timing(cand, {{1}}, 0), std::exception);
}

TEST(Roofline, FloorIsTheSlowerOfComputeAndMemory) {
  auto h200 = peaks_for("NVIDIA H200");
  ASSERT_TRUE(h200.has_value());
  EXPECT_EQ(peaks_for("NVIDIA GH200 480GB")->name, "GH200");
  EXPECT_FALSE(peaks_for("NVIDIA A100-SXM4-80GB").has_value());
  double flops = 2.0 * 8192 * 7168 * 5120;
  double floor = roofline_floor_us(*h200, flops, 1e6);
  EXPECT_NEAR(floor, flops / 989.4e12 * 1e6, 1e-6);  // ~608 us: cuBLAS's ~750 us is above it
  EXPECT_GT(floor, 600);
  EXPECT_LT(floor, 620);
  EXPECT_NEAR(roofline_floor_us(*h200, 1.0, 4.8e9), 1000.0, 1e-9);  // memory-bound: 4.8 GB at 4.8 TB/s
}

// The seeded percentile bootstrap (report/bootstrap.h) against hand-computed values: SplitMix64's
// published reference sequence, the index draws that follow from it, nearest-rank percentiles,
// exact bootstrap distributions enumerated by hand (the median of {1, 2, 3}: 27 resamples; the
// mean of {0, 1}: 4), the sampled distribution against the exact one, and seed determinism.
#include <gtest/gtest.h>

#include <numeric>

#include "common/error.h"
#include "common/stats.h"
#include "report/bootstrap.h"

using namespace ptxbench;
using namespace ptxbench::report;

namespace {

// The median of the resampled values: the statistic the reports bootstrap.
ResampleStatistic median_of(std::vector<double> values) {
  return [values](const std::vector<std::size_t>& units, std::vector<double>& out) {
    std::vector<double> drawn;
    for (auto i : units) drawn.push_back(values[i]);
    out[0] = median_in_place(drawn);
  };
}

ResampleStatistic mean_of(std::vector<double> values) {
  return [values](const std::vector<std::size_t>& units, std::vector<double>& out) {
    double sum = 0;
    for (auto i : units) sum += values[i];
    out[0] = sum / static_cast<double>(units.size());
  };
}

std::vector<double> column(const std::vector<std::vector<double>>& rows, std::size_t j = 0) {
  std::vector<double> c;
  for (const auto& r : rows) c.push_back(r[j]);
  return c;
}

}  // namespace

TEST(Bootstrap, SplitMix64GivesItsReferenceSequence) {
  // The reference outputs of Vigna's splitmix64.c for seed 1234567, and the first for seed 0.
  SplitMix64 g(1234567);
  EXPECT_EQ(g.next(), 6457827717110365317ULL);
  EXPECT_EQ(g.next(), 3203168211198807973ULL);
  EXPECT_EQ(g.next(), 9817491932198370423ULL);
  EXPECT_EQ(g.next(), 4593380528125082431ULL);
  EXPECT_EQ(g.next(), 16408922859458223821ULL);
  EXPECT_EQ(SplitMix64(0).next(), 16294208416658607535ULL);
}

TEST(Bootstrap, BelowIsTheDrawModuloNAboveTheRejectionThreshold) {
  // 2^64 mod 10 = 6: draws below 6 would be rejected; the reference draws are far above it, so
  // below(10) gives them modulo 10: ...5317 -> 7, ...7973 -> 3, ...0423 -> 3, ...2431 -> 1, ...3821 -> 1.
  SplitMix64 g(1234567);
  std::vector<uint64_t> got;
  for (int i = 0; i < 5; ++i) got.push_back(g.below(10));
  EXPECT_EQ(got, (std::vector<uint64_t>{7, 3, 3, 1, 1}));
  SplitMix64 one(42);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(one.below(1), 0u);
  EXPECT_THROW(one.below(0), Error);
}

TEST(Bootstrap, AResampleDrawsItsIndicesInOrderFromTheSeed) {
  // 5 units: the reference draws modulo 5 (2^64 mod 5 = 1 rejects only 0): 2, 3, 3, 1, 1.
  ResampleStatistic copy = [](const std::vector<std::size_t>& units, std::vector<double>& out) {
    for (std::size_t i = 0; i < units.size(); ++i) out[i] = static_cast<double>(units[i]);
  };
  auto rows = bootstrap_distribution(5, 5, copy, 1, 1234567);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (std::vector<double>{2, 3, 3, 1, 1}));
}

TEST(Bootstrap, StreamSeedsDependOnSeedAndName) {
  EXPECT_EQ(stream_seed(7, "curve/gemm/agent"), stream_seed(7, "curve/gemm/agent"));
  EXPECT_NE(stream_seed(7, "curve/gemm/agent"), stream_seed(7, "curve/gemm/refinement"));
  EXPECT_NE(stream_seed(7, "curve/gemm/agent"), stream_seed(8, "curve/gemm/agent"));
}

TEST(Bootstrap, PercentileIntervalIsNearestRank) {
  std::vector<double> v(1000);
  std::iota(v.begin(), v.end(), 1.0);
  std::reverse(v.begin(), v.end());  // any order
  // ceil(1000 x 0.025) = 25 (not 26: 0.025 x 1000 is a hair above 25 in binary) and ceil(975) = 975.
  Interval i = percentile_interval(v, 0.95);
  EXPECT_DOUBLE_EQ(i.lower, 25.0);
  EXPECT_DOUBLE_EQ(i.upper, 975.0);
  std::vector<double> forty(40);
  std::iota(forty.begin(), forty.end(), 1.0);
  i = percentile_interval(forty, 0.95);  // ranks ceil(1) = 1 and ceil(39) = 39
  EXPECT_DOUBLE_EQ(i.lower, 1.0);
  EXPECT_DOUBLE_EQ(i.upper, 39.0);
  i = percentile_interval({4, 1, 3, 2}, 0.5);  // ranks 1 and 3
  EXPECT_DOUBLE_EQ(i.lower, 1.0);
  EXPECT_DOUBLE_EQ(i.upper, 3.0);
  i = percentile_interval({5}, 0.95);
  EXPECT_DOUBLE_EQ(i.lower, 5.0);
  EXPECT_DOUBLE_EQ(i.upper, 5.0);
  EXPECT_THROW(percentile_interval({}, 0.95), InputError);
  EXPECT_THROW(percentile_interval({1, 2}, 1.0), InputError);
  EXPECT_THROW(percentile_interval({1, 2}, 0.0), InputError);
}

TEST(Bootstrap, ExactDistributionOfTheMedianOfThree) {
  // {1, 2, 3}: 27 ordered resamples. The median is 1 when at least two draws are 1: 3 x 2 + 1 = 7
  // resamples; 3 likewise 7; 2 the other 13.
  auto rows = exact_bootstrap_distribution(3, 1, median_of({1, 2, 3}));
  ASSERT_EQ(rows.size(), 27u);
  auto d = column(rows);
  EXPECT_EQ(std::count(d.begin(), d.end(), 1.0), 7);
  EXPECT_EQ(std::count(d.begin(), d.end(), 2.0), 13);
  EXPECT_EQ(std::count(d.begin(), d.end(), 3.0), 7);
  EXPECT_DOUBLE_EQ(d[0], 1.0) << "(0,0,0) first";
  EXPECT_DOUBLE_EQ(d[5], 2.0) << "(0,1,2)";
  EXPECT_DOUBLE_EQ(d[26], 3.0) << "(2,2,2) last";
  // 95%: ranks ceil(0.675) = 1 and ceil(26.325) = 27 -> [1, 3].
  Interval i = percentile_interval(d, 0.95);
  EXPECT_DOUBLE_EQ(i.lower, 1.0);
  EXPECT_DOUBLE_EQ(i.upper, 3.0);
  // 50%: ranks ceil(6.75) = 7 (the last 1) and ceil(20.25) = 21 (the first 3) -> [1, 3].
  i = percentile_interval(d, 0.5);
  EXPECT_DOUBLE_EQ(i.lower, 1.0);
  EXPECT_DOUBLE_EQ(i.upper, 3.0);
  // 40%: ranks ceil(8.1) = 9 and ceil(18.9) = 19, both among the 2s (ranks 8..20).
  i = percentile_interval(d, 0.4);
  EXPECT_DOUBLE_EQ(i.lower, 2.0);
  EXPECT_DOUBLE_EQ(i.upper, 2.0);
}

TEST(Bootstrap, ExactDistributionOfTheMeanOfTwo) {
  // {0, 1}: resamples (0,0) (0,1) (1,0) (1,1) in that order: means 0, 0.5, 0.5, 1.
  auto d = column(exact_bootstrap_distribution(2, 1, mean_of({0, 1})));
  EXPECT_EQ(d, (std::vector<double>{0.0, 0.5, 0.5, 1.0}));
  EXPECT_THROW(exact_bootstrap_distribution(8, 1, mean_of({0, 1, 2, 3, 4, 5, 6, 7})), InputError);
}

TEST(Bootstrap, SampledDistributionApproachesTheExactOne) {
  // 27,000 resamples of the median of {1, 2, 3}: each share within 0.015 of 7/27, 13/27, 7/27
  // (5 standard deviations); the 95% interval is the exact one, [1, 3].
  auto d = column(bootstrap_distribution(3, 1, median_of({1, 2, 3}), 27000, 99));
  auto share = [&](double v) { return static_cast<double>(std::count(d.begin(), d.end(), v)) / 27000.0; };
  EXPECT_NEAR(share(1.0), 7.0 / 27.0, 0.015);
  EXPECT_NEAR(share(2.0), 13.0 / 27.0, 0.015);
  EXPECT_NEAR(share(3.0), 7.0 / 27.0, 0.015);
  Interval i = percentile_interval(d, 0.95);
  EXPECT_DOUBLE_EQ(i.lower, 1.0);
  EXPECT_DOUBLE_EQ(i.upper, 3.0);
  // The mean of {0, 1} with B = 1000: P(0) = P(1) = 1/4, far above the 2.5% tails -> [0, 1].
  BootstrapOptions o;
  auto band = bootstrap_intervals(2, 1, mean_of({0, 1}), o, "mean01");
  EXPECT_DOUBLE_EQ(band[0].lower, 0.0);
  EXPECT_DOUBLE_EQ(band[0].upper, 1.0);
}

TEST(Bootstrap, TheSameSeedGivesTheSameBands) {
  std::vector<double> v = {0.0, 0.4, 0.9, 1.1, 1.3, 1.7, 2.2, 0.0, 0.6, 1.0, 1.05};
  BootstrapOptions o;
  o.resamples = 500;
  o.seed = 12345;
  auto a = bootstrap_distribution(v.size(), 1, median_of(v), o.resamples, o.seed);
  auto b = bootstrap_distribution(v.size(), 1, median_of(v), o.resamples, o.seed);
  EXPECT_EQ(a, b);
  auto c = bootstrap_distribution(v.size(), 1, median_of(v), o.resamples, o.seed + 1);
  EXPECT_NE(a, c) << "another seed draws other resamples";
  auto x = bootstrap_intervals(v.size(), 1, median_of(v), o, "row");
  auto y = bootstrap_intervals(v.size(), 1, median_of(v), o, "row");
  EXPECT_EQ(x[0].lower, y[0].lower);
  EXPECT_EQ(x[0].upper, y[0].upper);
  EXPECT_LE(x[0].lower, median(v));
  EXPECT_GE(x[0].upper, median(v));
}

TEST(Bootstrap, DegenerateSamplesAndBadArguments) {
  BootstrapOptions o;
  auto band = bootstrap_intervals(4, 1, median_of({1.5, 1.5, 1.5, 1.5}), o, "const");
  EXPECT_DOUBLE_EQ(band[0].lower, 1.5);
  EXPECT_DOUBLE_EQ(band[0].upper, 1.5);
  band = bootstrap_intervals(1, 1, median_of({0.7}), o, "one");
  EXPECT_DOUBLE_EQ(band[0].lower, 0.7);
  EXPECT_DOUBLE_EQ(band[0].upper, 0.7);
  EXPECT_THROW(bootstrap_distribution(0, 1, median_of({}), 10, 1), InputError);
  EXPECT_THROW(bootstrap_distribution(2, 0, median_of({1, 2}), 10, 1), InputError);
  EXPECT_THROW(bootstrap_distribution(2, 1, median_of({1, 2}), 0, 1), InputError);
}

TEST(Bootstrap, MedianInPlaceIsTheStatsMedian) {
  for (std::vector<double> v : {std::vector<double>{3, 1, 2}, {4, 1, 3, 2}, {0, 0, 1.5, 2}, {2.5}, {7, 7, 1, 9, 0, 3}}) {
    double expected = median(v);
    EXPECT_DOUBLE_EQ(median_in_place(v), expected);
  }
}

// The seeded percentile bootstrap the reports draw their bands with: resample the units (the
// trajectories of a run) with replacement, compute a statistic of each resample (one value or a
// whole curve, pointwise), and take nearest-rank percentiles of the resampled values. The same
// seed gives the same bands on every platform: the generator is SplitMix64 and the index draw is
// our own (std::uniform_int_distribution differs between standard libraries).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace ptxbench::report {

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014): a
/// 64-bit state advanced by a fixed constant and mixed; its output sequence is fixed by the seed.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) noexcept : m_state(seed) {}
  uint64_t next() noexcept;
  /// Uniform in [0, n) without modulo bias (draws below 2^64 mod n are rejected); n >= 1.
  uint64_t below(uint64_t n);

 private:
  uint64_t m_state;
};

/// The seed of one named statistic's stream: the same (seed, name) always gives the same stream,
/// so adding or reordering statistics never moves another one's band.
uint64_t stream_seed(uint64_t seed, std::string_view name);

/// The bootstrap's documented defaults (STYLE habit 8: no magic numbers in the loop).
struct BootstrapOptions {
  int64_t resamples = 1000;     ///< B
  uint64_t seed = 20261201;     ///< `ptxbench report --seed`
  double confidence = 0.95;     ///< the interval's coverage: percentiles (1 - c) / 2 and (1 + c) / 2
};

struct Interval {
  double lower = 0.0, upper = 0.0;
};

/// The nearest-rank percentile interval of a bootstrap distribution of B values: the
/// ceil(B (1 - c) / 2)-th and the ceil(B (1 + c) / 2)-th smallest (B = 1000, c = 0.95: the 25th
/// and the 975th). Throws on an empty distribution or c outside (0, 1).
Interval percentile_interval(std::vector<double> distribution, double confidence);

/// A statistic of one resample: `units` holds the n drawn unit indices (repetitions included,
/// in draw order); it writes its K values into `out` (sized K on entry).
using ResampleStatistic = std::function<void(const std::vector<std::size_t>& units, std::vector<double>& out)>;

/// The bootstrap distribution of K statistics: `resamples` rows, row b the statistic of resample
/// b, whose n = `units` indices are drawn in order from SplitMix64(seed) with below(n).
/// Throws when units == 0, k == 0 or resamples < 1.
std::vector<std::vector<double>> bootstrap_distribution(std::size_t units, std::size_t k, const ResampleStatistic& statistic,
                                                        int64_t resamples, uint64_t seed);

/// Pointwise percentile intervals of K statistics over `units` units: the distribution above
/// with options.resamples and stream_seed(options.seed, stream), then percentile_interval per
/// statistic. Pointwise: each interval covers its own statistic, not the K at once.
std::vector<Interval> bootstrap_intervals(std::size_t units, std::size_t k, const ResampleStatistic& statistic,
                                          const BootstrapOptions& options, std::string_view stream);

/// The exact bootstrap distribution: the statistic of every one of the n^n ordered resamples
/// (each equally likely), in lexicographic order of the index tuples. For tests and tiny samples
/// only: n <= 7 (823,543 resamples); more throws.
std::vector<std::vector<double>> exact_bootstrap_distribution(std::size_t units, std::size_t k, const ResampleStatistic& statistic);

/// The median of `values` as common/stats.h computes it (the mean of the two middle values for an
/// even count), in linear time; reorders `values`. Throws on empty.
double median_in_place(std::vector<double>& values);

}  // namespace ptxbench::report

#include "report/bootstrap.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace ptxbench::report {
namespace {

// 7^7 = 823,543 resamples: the largest exact enumeration we allow.
constexpr std::size_t kMaxExactUnits = 7;

// The 1-based nearest rank of quantile q among n values. NOTES: q * n is computed in binary
// floating point, so 0.025 * 1000 comes out a hair above 25 and a plain ceil would give 26; the
// tolerance keeps ranks that are integers on paper integers.
std::size_t nearest_rank(double q, std::size_t n) {
  double x = q * static_cast<double>(n);
  auto rank = static_cast<std::size_t>(std::ceil(x - 1e-9 * std::max(1.0, x)));
  return std::clamp<std::size_t>(rank, 1, n);
}

void check_shape(std::size_t units, std::size_t k) {
  if (units == 0) throw InputError("bootstrap", "nothing to resample: no units");
  if (k == 0) throw InputError("bootstrap", "the statistic has no values");
}

}  // namespace

uint64_t SplitMix64::next() noexcept {
  uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::below(uint64_t n) {
  PTXB_ENSURE(n >= 1, "bootstrap", "below(0)");
  // 2^64 mod n: draws under it are rejected, so every residue is equally likely.
  const uint64_t threshold = (0 - n) % n;
  for (;;) {
    uint64_t r = next();
    if (r >= threshold) return r % n;
  }
}

uint64_t stream_seed(uint64_t seed, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the name
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  SplitMix64 mix(seed ^ h);
  return mix.next();
}

Interval percentile_interval(std::vector<double> d, double confidence) {
  if (d.empty()) throw InputError("bootstrap", "percentile interval of an empty distribution");
  if (!(confidence > 0.0 && confidence < 1.0))
    throw InputError("bootstrap", "confidence must lie strictly between 0 and 1, got " + std::to_string(confidence));
  std::sort(d.begin(), d.end());
  const double tail = (1.0 - confidence) / 2.0;
  return {d[nearest_rank(tail, d.size()) - 1], d[nearest_rank(1.0 - tail, d.size()) - 1]};
}

std::vector<std::vector<double>> bootstrap_distribution(std::size_t units, std::size_t k, const ResampleStatistic& statistic,
                                                        int64_t resamples, uint64_t seed) {
  check_shape(units, k);
  if (resamples < 1) throw InputError("bootstrap", "resamples must be >= 1, got " + std::to_string(resamples));
  SplitMix64 rng(seed);
  std::vector<std::size_t> draw(units);
  std::vector<std::vector<double>> rows(static_cast<std::size_t>(resamples));
  for (auto& row : rows) {
    for (auto& i : draw) i = static_cast<std::size_t>(rng.below(units));
    row.assign(k, 0.0);
    statistic(draw, row);
    PTXB_ENSURE(row.size() == k, "bootstrap", "the statistic changed the number of its values");
  }
  return rows;
}

std::vector<Interval> bootstrap_intervals(std::size_t units, std::size_t k, const ResampleStatistic& statistic,
                                          const BootstrapOptions& options, std::string_view stream) {
  auto rows = bootstrap_distribution(units, k, statistic, options.resamples, stream_seed(options.seed, stream));
  std::vector<Interval> out(k);
  std::vector<double> column(rows.size());
  for (std::size_t j = 0; j < k; ++j) {
    for (std::size_t b = 0; b < rows.size(); ++b) column[b] = rows[b][j];
    out[j] = percentile_interval(column, options.confidence);
  }
  return out;
}

std::vector<std::vector<double>> exact_bootstrap_distribution(std::size_t units, std::size_t k, const ResampleStatistic& statistic) {
  check_shape(units, k);
  if (units > kMaxExactUnits)
    throw InputError("bootstrap", "exact enumeration of " + std::to_string(units) + "^" + std::to_string(units) +
                                      " resamples refused (at most " + std::to_string(kMaxExactUnits) + " units)");
  std::vector<std::size_t> draw(units, 0);
  std::vector<std::vector<double>> rows;
  for (;;) {
    auto& row = rows.emplace_back(k, 0.0);
    statistic(draw, row);
    // Next tuple, the last index fastest (lexicographic order).
    std::size_t i = units;
    while (i > 0 && ++draw[i - 1] == units) draw[--i] = 0;
    if (i == 0) break;
  }
  return rows;
}

double median_in_place(std::vector<double>& v) {
  PTXB_ENSURE(!v.empty(), "bootstrap", "median of no values");
  const std::size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (n % 2) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

}  // namespace ptxbench::report

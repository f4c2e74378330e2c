#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"

namespace ptxbench {

double median(std::vector<double> v) {
  PTXB_ENSURE(!v.empty(), "stats", "median of no values");
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double mean(const std::vector<double>& v) {
  PTXB_ENSURE(!v.empty(), "stats", "mean of no values");
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double quantile(std::vector<double> v, double q) {
  PTXB_ENSURE(!v.empty(), "stats", "quantile of no values");
  PTXB_ENSURE(q >= 0 && q <= 1, "stats", "quantile outside [0, 1]");
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[rank == 0 ? 0 : rank - 1];
}

double min_of(const std::vector<double>& v) {
  PTXB_ENSURE(!v.empty(), "stats", "min of no values");
  return *std::min_element(v.begin(), v.end());
}

double max_of(const std::vector<double>& v) {
  PTXB_ENSURE(!v.empty(), "stats", "max of no values");
  return *std::max_element(v.begin(), v.end());
}

double relative_spread(const std::vector<double>& v) {
  double m = median(v);
  return m == 0.0 ? 0.0 : (max_of(v) - min_of(v)) / m;
}

}  // namespace ptxbench

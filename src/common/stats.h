// Small order statistics used by timing and reports.
#pragma once

#include <vector>

namespace ptxbench {

double median(std::vector<double> values);  ///< by value: sorts a copy; throws on empty
double mean(const std::vector<double>& values);
/// Nearest-rank quantile, q in [0, 1] (p50 = quantile(v, 0.5), p95 = quantile(v, 0.95)).
double quantile(std::vector<double> values, double q);
double min_of(const std::vector<double>& values);
double max_of(const std::vector<double>& values);
/// (max - min) / median: the relative spread we report for repeated measurements.
double relative_spread(const std::vector<double>& values);

}  // namespace ptxbench

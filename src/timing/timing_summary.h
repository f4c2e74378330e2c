// Turning per-call device spans into the reported numbers: per-trial medians, the mean of trial
// medians (orig), paired speedups baseline_i / candidate_i, their median and spread, and the
// roofline floor under which a time is a bug or a cheat.
#pragma once

#include <vector>

#include "common/json_check.h"

namespace ptxbench {

struct SideSummary {
  std::vector<std::vector<double>> trials_us;  ///< every timed call's span, per trial
  std::vector<double> trial_medians_us;
  double mean_us = 0.0;    ///< mean of trial medians (the paper's reported time)
  double median_us = 0.0;  ///< median of trial medians
  double spread = 0.0;     ///< (max − min) / median of the trial medians
};

struct TimingSummary {
  SideSummary candidate;
  SideSummary baseline;
  std::vector<double> ratios;  ///< baseline_i / candidate_i per paired trial
  double speedup = 0.0;        ///< median of the paired ratios
  double speedup_spread = 0.0; ///< (max − min) / median of the ratios
  double floor_us = 0.0;       ///< roofline floor: max(FLOPs / peak, bytes / bandwidth)
  bool below_floor = false;
};

SideSummary summarize_side(const std::vector<std::vector<double>>& trials_us);
/// Trials must pair up (same count on both sides).
TimingSummary summarize_timing(const std::vector<std::vector<double>>& candidate_us,
                               const std::vector<std::vector<double>>& baseline_us, double floor_us);

ordered_json to_json(const SideSummary& s, bool with_samples);
ordered_json to_json(const TimingSummary& t);

}  // namespace ptxbench

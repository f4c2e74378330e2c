#include "timing/timing_summary.h"

#include "common/error.h"
#include "common/stats.h"

namespace ptxbench {

SideSummary summarize_side(const std::vector<std::vector<double>>& trials_us) {
  PTXB_ENSURE(!trials_us.empty(), "timing", "no trials");
  SideSummary s;
  s.trials_us = trials_us;
  for (const auto& t : trials_us) s.trial_medians_us.push_back(median(t));
  s.mean_us = mean(s.trial_medians_us);
  s.median_us = median(s.trial_medians_us);
  s.spread = relative_spread(s.trial_medians_us);
  return s;
}

TimingSummary summarize_timing(const std::vector<std::vector<double>>& candidate_us,
                               const std::vector<std::vector<double>>& baseline_us, double floor_us) {
  PTXB_ENSURE(candidate_us.size() == baseline_us.size(), "timing", "unpaired trials");
  TimingSummary t;
  t.candidate = summarize_side(candidate_us);
  t.baseline = summarize_side(baseline_us);
  for (std::size_t i = 0; i < candidate_us.size(); ++i)
    t.ratios.push_back(t.baseline.trial_medians_us[i] / t.candidate.trial_medians_us[i]);
  t.speedup = median(t.ratios);
  t.speedup_spread = relative_spread(t.ratios);
  t.floor_us = floor_us;
  t.below_floor = floor_us > 0.0 && t.candidate.median_us < floor_us;
  return t;
}

ordered_json to_json(const SideSummary& s, bool with_samples) {
  ordered_json j = {{"mean_us", s.mean_us},
                    {"median_us", s.median_us},
                    {"spread", s.spread},
                    {"trial_medians_us", s.trial_medians_us}};
  if (with_samples) j["samples_us"] = s.trials_us;
  return j;
}

ordered_json to_json(const TimingSummary& t) {
  return {{"candidate", to_json(t.candidate, true)},
          {"baseline", to_json(t.baseline, true)},
          {"paired_ratios", t.ratios},
          {"speedup", t.speedup},
          {"speedup_spread", t.speedup_spread},
          {"floor_us", t.floor_us},
          {"below_floor", t.below_floor}};
}

}  // namespace ptxbench

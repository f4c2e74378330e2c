#include "timing/call_integrity.h"

#include <algorithm>
#include <map>

#include "common/stats.h"

namespace ptxbench {

ordered_json IntegrityPolicy::to_json() const {
  return {{"spot_rows", spot_rows},
          {"host_slack_us", host_slack_us},
          {"host_slack_fraction", host_slack_fraction},
          {"baseline_margin", baseline_margin},
          {"triton_launch_allowance_max_us", triton_launch_allowance_max_us},
          {"triton_launch_calibrations", triton_launch_calibrations},
          {"calibration", "the baseline's calls, timed by a trusted runner that never loads candidate code and prepared like the candidate's, calibrate the overhead of the worker's clock"},
          {"fresh_inputs", "every call: the op's fresh inputs are regenerated on the GPU from a secret counter seed"},
          {"spot_check", "every timed call: spot_rows random rows of each output against the trusted reference"},
          {"full_check", "one timed call per trial, chosen at random and kept secret, against the full reference"},
          {"profile_binding", profile.to_json()}};
}

ordered_json to_json(const HostBound& h) {
  return {{"overhead_us", h.overhead_us}, {"excess_us", h.excess_us}, {"allowed_us", h.allowed_us},
          {"launch_allowance_us", h.launch_allowance_us}, {"impossible_calls", h.impossible_calls},
          {"passed", h.passed()}};
}

double calibrate_overhead(const std::vector<double>& host_us, const std::vector<double>& span_us) {
  std::vector<double> gaps;
  for (std::size_t i = 0; i < host_us.size() && i < span_us.size(); ++i) gaps.push_back(host_us[i] - span_us[i]);
  return gaps.empty() ? 0.0 : median(gaps);
}

HostBound check_host_bound(const std::vector<double>& host_us, const std::vector<double>& span_us,
                           double overhead_us, const IntegrityPolicy& policy, double launch_allowance_us) {
  HostBound h;
  h.overhead_us = overhead_us;
  h.launch_allowance_us = std::max(0.0, launch_allowance_us);
  std::vector<double> gaps, spans;
  // The worker's window holds the whole call; a small tolerance for the two clocks' resolution.
  constexpr double kClockToleranceUs = 5.0;
  for (std::size_t i = 0; i < host_us.size() && i < span_us.size(); ++i) {
    if (span_us[i] > host_us[i] + kClockToleranceUs) ++h.impossible_calls;
    gaps.push_back(host_us[i] - span_us[i]);
    spans.push_back(span_us[i]);
  }
  if (gaps.empty()) return h;
  h.excess_us = median(gaps) - overhead_us;
  h.allowed_us = policy.host_slack_us + policy.host_slack_fraction * median(spans) + h.launch_allowance_us;
  return h;
}

LaunchAllowance launch_allowance(const std::vector<double>& probe_excess_us, double cap_us) {
  LaunchAllowance a;
  if (probe_excess_us.empty() || cap_us <= 0.0) return a;
  a.median_us = median(probe_excess_us);
  a.capped = *a.median_us > cap_us;
  a.allowance_us = std::clamp(*a.median_us, 0.0, cap_us);
  return a;
}

std::vector<double> charge_host_clock(const std::vector<double>& span_us, const HostBound& bound) {
  std::vector<double> charged;
  for (double s : span_us) charged.push_back(s + bound.charge_us());
  return charged;
}

std::vector<KernelLaunch> launch_set(const std::vector<KernelLaunch>& launches) {
  std::vector<KernelLaunch> s = launches;
  std::sort(s.begin(), s.end());
  return s;
}

std::string launch_difference(const std::vector<KernelLaunch>& profiled, const std::vector<KernelLaunch>& timed) {
  std::map<KernelLaunch, int> count;
  for (const auto& k : profiled) ++count[k];
  for (const auto& k : timed) --count[k];
  std::string only_profiled, only_timed;
  for (const auto& [k, n] : count) {
    if (n > 0) only_profiled += (only_profiled.empty() ? "" : ", ") + describe(k) + (n > 1 ? " ×" + std::to_string(n) : "");
    if (n < 0) only_timed += (only_timed.empty() ? "" : ", ") + describe(k) + (n < -1 ? " ×" + std::to_string(-n) : "");
  }
  std::string out;
  if (!only_profiled.empty()) out += "the profiled call launched " + only_profiled + " that a timed call did not";
  if (!only_timed.empty()) out += (out.empty() ? "" : "; ") + std::string("a timed call launched ") + only_timed + " that the profiled call did not";
  return out;
}

}  // namespace ptxbench

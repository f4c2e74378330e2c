// Checks that hold what the runner reports (spans, launches) against what the worker saw itself
// (docs/verdict.md, "Measurement integrity"): the worker's own clock around each call bounds the
// reported span (its overhead measured in the same trial on the baseline's calls, timed by a
// trusted runner that never loads candidate code), and every timed call must launch the same kernels, in the same configuration, as
// each other and as the profiled call.
#pragma once

#include <string>
#include <vector>

#include "common/json_check.h"
#include "timing/call_activity.h"

namespace ptxbench {

/// The integrity checks' named defaults (with the timing policy in every verdict).
struct IntegrityPolicy {
  /// Rows of each output checked against the trusted reference after every timed call.
  int spot_rows = 8;
  /// A trial's median of (host time − reported span) may exceed the calibrated overhead by this
  /// much plus `host_slack_fraction` of the median span; beyond it the calls did work the spans do
  /// not show (host work inside ptxb_run, or spans forged smaller than the truth), and the trial
  /// is charged the worker's clock (charge_host_clock).
  double host_slack_us = 30.0;
  double host_slack_fraction = 0.02;
  /// A baseline slower than this GPU's calibration by more than this share makes the evaluation
  /// INFRA_ERROR (re-run), never a bigger speedup.
  double baseline_margin = 0.15;

  [[nodiscard]] ordered_json to_json() const;
};

struct HostBound {
  double overhead_us = 0.0;   ///< median of (host − span) over the trial's baseline calls
  double excess_us = 0.0;     ///< median over the calls of (host − span) − overhead
  double allowed_us = 0.0;
  int impossible_calls = 0;   ///< spans longer than the worker's whole window around the call
  [[nodiscard]] bool passed() const { return impossible_calls == 0 && excess_us <= allowed_us; }
};
ordered_json to_json(const HostBound& h);

/// Median of host − span over a trial's calls of the baseline in its trusted runner (what an
/// honest call costs beyond its span).
double calibrate_overhead(const std::vector<double>& host_us, const std::vector<double>& span_us);

/// The bound over one trial's timed calls (host_us[i] around call i, span_us[i] reported for it).
HostBound check_host_bound(const std::vector<double>& host_us, const std::vector<double>& span_us,
                           double overhead_us, const IntegrityPolicy& policy);

/// What a trial whose excess is beyond the slack is charged per call: the worker's own clock less
/// the calibrated overhead where that is longer than the reported span (docs/verdict.md, "host
/// bound"). The worker cannot tell host work inside ptxb_run (a per-call cudaMalloc, a printf)
/// from a span reported shorter than the truth; charged this way, neither beats the truth.
std::vector<double> charge_host_clock(const std::vector<double>& host_us, const std::vector<double>& span_us,
                                      double overhead_us);

/// Launches of one call, sorted (a multiset: order across streams is not fixed).
std::vector<KernelLaunch> launch_set(const std::vector<KernelLaunch>& launches);

/// Empty when both sets are equal, else what differs ("the profiled call launched X that the
/// timed calls did not; …").
std::string launch_difference(const std::vector<KernelLaunch>& profiled, const std::vector<KernelLaunch>& timed);

}  // namespace ptxbench

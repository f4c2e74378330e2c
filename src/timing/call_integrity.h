// Checks that hold what the runner reports (spans, launches) against what the worker saw itself
// (docs/verdict.md, "Measurement integrity"): the worker's own clock around each call bounds the
// reported span from above (calibrated on the runner's trusted probe kernel before any candidate
// code ran), and every timed call must launch the same kernels, in the same configuration, as
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
  /// The runner's trusted probe kernel (spins this long) and how many calls of it calibrate the
  /// per-call overhead of the worker's clock.
  double probe_us = 200.0;
  int probe_calls = 24;
  /// A trial's median of (host time − reported span) may exceed the calibrated overhead by this
  /// much plus `host_slack_fraction` of the median span; beyond it the call did unexplained work
  /// (host work inside ptxb_run before its first launch, or a span forged smaller than the truth).
  double host_slack_us = 30.0;
  double host_slack_fraction = 0.02;
  /// A baseline slower than this GPU's calibration by more than this share makes the evaluation
  /// INFRA_ERROR (re-run), never a bigger speedup.
  double baseline_margin = 0.15;

  [[nodiscard]] ordered_json to_json() const;
};

struct HostBound {
  double overhead_us = 0.0;   ///< calibrated: median of (host − span) over the probe calls
  double excess_us = 0.0;     ///< median over the calls of (host − span) − overhead
  double allowed_us = 0.0;
  int impossible_calls = 0;   ///< spans longer than the worker's whole window around the call
  [[nodiscard]] bool passed() const { return impossible_calls == 0 && excess_us <= allowed_us; }
};
ordered_json to_json(const HostBound& h);

/// Median of host − span over the probe calls (what an honest call costs beyond its span).
double calibrate_overhead(const std::vector<double>& host_us, const std::vector<double>& span_us);

/// The bound over one trial's timed calls (host_us[i] around call i, span_us[i] reported for it).
HostBound check_host_bound(const std::vector<double>& host_us, const std::vector<double>& span_us,
                           double overhead_us, const IntegrityPolicy& policy);

/// Launches of one call, sorted (a multiset: order across streams is not fixed).
std::vector<KernelLaunch> launch_set(const std::vector<KernelLaunch>& launches);

/// Empty when both sets are equal, else what differs ("the profiled call launched X that the
/// timed calls did not; …").
std::string launch_difference(const std::vector<KernelLaunch>& profiled, const std::vector<KernelLaunch>& timed);

}  // namespace ptxbench

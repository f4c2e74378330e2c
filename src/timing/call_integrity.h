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
  /// The evaluation's median of (host time − reported span) over its timed calls may exceed the
  /// calibrated overhead (the same median over the baseline's calls) by this much plus
  /// `host_slack_fraction` of the median span. Beyond it the calls did work the spans do not show
  /// (host work inside ptxb_run, or spans forged smaller than the truth), and every call is
  /// charged the overshoot (charge_host_clock). Measured on the H200: honest evaluations read
  /// −63…+39 µs, SD 23 µs (results/h200.md), mostly a shift per trial and per runner.
  double host_slack_us = 40.0;
  double host_slack_fraction = 0.02;
  /// A baseline slower than this GPU's calibration by more than this share makes the evaluation
  /// INFRA_ERROR (re-run), never a bigger speedup.
  double baseline_margin = 0.15;

  [[nodiscard]] ordered_json to_json() const;
};

struct HostBound {
  double overhead_us = 0.0;   ///< median of (host − span) over the baseline's calls
  double excess_us = 0.0;     ///< median over the calls of (host − span) − overhead
  double allowed_us = 0.0;
  int impossible_calls = 0;   ///< spans longer than the worker's whole window around the call
  [[nodiscard]] bool passed() const { return impossible_calls == 0 && excess_us <= allowed_us; }
  /// What every call is charged beyond its span: the excess beyond the slack (0 within it).
  [[nodiscard]] double charge_us() const { return excess_us > allowed_us ? excess_us - allowed_us : 0.0; }
};
ordered_json to_json(const HostBound& h);

/// Median of host − span over the calls of the baseline in its trusted runner (what an honest
/// call costs beyond its span).
double calibrate_overhead(const std::vector<double>& host_us, const std::vector<double>& span_us);

/// The bound over timed calls (host_us[i] around call i, span_us[i] reported for it): the
/// evaluation's, all trials pooled (a per-trial shift of ±30 µs averages out).
HostBound check_host_bound(const std::vector<double>& host_us, const std::vector<double>& span_us,
                           double overhead_us, const IntegrityPolicy& policy);

/// The spans charged the bound's overshoot: span + charge_us() each (docs/verdict.md, "host
/// bound"). The worker cannot tell host work inside ptxb_run (a per-call cudaMalloc, a printf)
/// from a span reported shorter than the truth; charged this way, neither gains more than the
/// slack, and an honest evaluation just past it (noise) loses only what it is past. The median
/// is charged, not each call's own excess, so an operating-system hiccup on one call costs nothing.
std::vector<double> charge_host_clock(const std::vector<double>& span_us, const HostBound& bound);

/// Launches of one call, sorted (a multiset: order across streams is not fixed).
std::vector<KernelLaunch> launch_set(const std::vector<KernelLaunch>& launches);

/// Empty when both sets are equal, else what differs ("the profiled call launched X that the
/// timed calls did not; …").
std::string launch_difference(const std::vector<KernelLaunch>& profiled, const std::vector<KernelLaunch>& timed);

}  // namespace ptxbench

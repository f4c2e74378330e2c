// Checks that hold what the runner reports (spans, launches) against what the worker saw itself
// (docs/verdict.md, "Measurement integrity"): the worker's own clock around each call bounds the
// reported span (its overhead measured in the same trial on the baseline's calls, timed by a
// trusted runner that never loads candidate code), and every timed call must launch the same kernels, in the same configuration, as
// each other and as the profiled call.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json_check.h"
#include "timing/profile_binding.h"
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
  /// −63…+39 µs, SD 23 µs (results/measurement_integrity.md), mostly a shift per trial and per runner.
  double host_slack_us = 40.0;
  double host_slack_fraction = 0.02;
  /// A Triton candidate's slack also allows Triton's own launch path: the host time per call
  /// beyond the span that the worker measured on its trusted launch probe (a Triton kernel that
  /// writes one element, src/python/ptxb_triton/launch_probe.py) through the same runner, shim and
  /// timing, calibrated per GPU, Python, torch, Triton, driver and argument count (docs/triton.md,
  /// "What the timing means for a Triton candidate"). Only host work beyond that path is charged.
  /// The allowance never exceeds this, so a broken calibration cannot hand out free host time;
  /// 0: no allowance and no probe (Triton's launch path is charged like any host work).
  double triton_launch_allowance_max_us = kTritonHostPathMaxUs;
  /// Probe measurements a GPU keeps per key before the recorded ones alone decide (an evaluation
  /// measures the probe while fewer are recorded); the allowance is their median.
  int triton_launch_calibrations = 3;
  /// A baseline slower than this GPU's calibration by more than this share makes the evaluation
  /// INFRA_ERROR (re-run), never a bigger speedup.
  double baseline_margin = 0.15;
  /// The profiled call held against the timed calls (src/timing/profile_binding.h).
  ProfileBindingPolicy profile;

  [[nodiscard]] ordered_json to_json() const;
};

struct HostBound {
  double overhead_us = 0.0;   ///< median of (host − span) over the baseline's calls
  double excess_us = 0.0;     ///< median over the calls of (host − span) − overhead
  double allowed_us = 0.0;    ///< the slack, the launch allowance included
  double launch_allowance_us = 0.0;  ///< of allowed_us: a Triton candidate's launch path (0 for CUDA)
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
/// evaluation's, all trials pooled (a per-trial shift of ±30 µs averages out). The slack is
/// host_slack_us + host_slack_fraction × median span + `launch_allowance_us` (a Triton
/// candidate's, from launch_allowance(); 0 otherwise).
HostBound check_host_bound(const std::vector<double>& host_us, const std::vector<double>& span_us,
                           double overhead_us, const IntegrityPolicy& policy, double launch_allowance_us = 0.0);

/// Triton's own launch path as the host bound allows it, from the launch probe's recorded excesses
/// (each the probe's check_host_bound excess over one evaluation's probe calls).
struct LaunchAllowance {
  double allowance_us = 0.0;        ///< the median, never below 0 nor above the cap
  std::optional<double> median_us;  ///< the recorded excesses' median; unset: none recorded (allowance 0)
  bool capped = false;              ///< the median was above the cap
};
/// The allowance of `probe_excess_us` under `cap_us` (≤ 0: none). A probe cannot have a negative
/// launch path: a median below 0 (noise) allows nothing; one above the cap (a broken calibration,
/// a host too busy to measure on) allows the cap.
LaunchAllowance launch_allowance(const std::vector<double>& probe_excess_us, double cap_us);

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

// What the integrity checks of an evaluation saw (docs/verdict.md, "Measurement integrity"):
// the timing stage's fresh inputs, spot and full checks, host bound and launches, and the
// baseline held against this GPU's calibration; the runtime-SASS stage's tensor-core coverage
// and the profiled call's launches. Typed sections with one to_json/from_json pair each.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json_fields.h"
#include "timing/call_activity.h"

namespace ptxbench {

/// One trial's share of the host bound (for the record: the bound is judged over the evaluation).
struct HostBoundRecord {
  int trial = 0;
  double overhead_us = 0.0;  ///< median (host − span) of the trial's baseline calls (trusted runner)
  double excess_us = 0.0;    ///< median (host − span) − overhead over the trial's timed calls
  int impossible_calls = 0;
  /// Per timed call, in order: the worker's clock less the reported span (µs, 0.1 µs steps), of
  /// the candidate's calls and of the baseline's (the calibration). Absent in older verdicts.
  std::vector<double> candidate_gaps_us, baseline_gaps_us;
};
void json_fields(JsonIo& io, HostBoundRecord& r);

/// The host bound over the evaluation's timed calls, all trials pooled.
struct HostChargeRecord {
  double overhead_us = 0.0;  ///< median (host − span) of the baseline's timed calls
  double excess_us = 0.0;    ///< median (host − span) of the candidate's, less the overhead
  double allowed_us = 0.0;   ///< the slack (the launch allowance included)
  double charged_us = 0.0;   ///< added to every timed call's span: the excess beyond the slack
  /// Of allowed_us: Triton's own launch path (LaunchAllowanceRecord). Absent for CUDA candidates
  /// and in older verdicts.
  std::optional<double> launch_allowance_us;
};
void json_fields(JsonIo& io, HostChargeRecord& r);

/// What a Triton candidate's host bound allowed for Triton's own launch path, and where it came
/// from (docs/triton.md, "What the timing means for a Triton candidate"): the worker's trusted
/// launch probe, timed through the same runner, shim and timing, its excesses kept per GPU and key.
struct LaunchAllowanceRecord {
  double allowance_us = 0.0;  ///< added to the host bound's slack: the median of calibrations_us, in [0, cap_us]
  double cap_us = 0.0;        ///< the most it may be (IntegrityPolicy::triton_launch_allowance_max_us)
  bool capped = false;        ///< the median was above the cap
  std::vector<double> calibrations_us;  ///< the probe's recorded excesses on this GPU, oldest first
  /// "measured": this evaluation timed the probe and its excess joined the calibration; "cached":
  /// enough were recorded; "uncalibrated": none recorded (allowance 0).
  std::string source;
  std::optional<double> measured_us;       ///< this evaluation's probe excess (all its trials pooled)
  std::vector<double> measured_trials_us;  ///< the same per trial
  std::string key;    ///< the calibration's key: Python, torch, Triton, driver, argument count, probe
  std::string store;  ///< the calibration's file on the GPU host
};
void json_fields(JsonIo& io, LaunchAllowanceRecord& r);

struct FullCheckRecord {
  int trial = 0;
  int call = 0;  ///< which timed call (0-based), chosen at random, secret from the runner
  bool passed = true;
};
void json_fields(JsonIo& io, FullCheckRecord& r);

struct CalibrationRecord {
  std::optional<double> calibrated_us;
  double measured_us = 0.0;
  double margin = 0.0;
  bool within = true;
  bool recorded = false;
};
void json_fields(JsonIo& io, CalibrationRecord& r);

/// The profiled call held against the timed calls (src/timing/profile_binding.h): when it does not
/// hold, the runtime-SASS claims (mechanisms, coverage) are void and the verdict says why.
struct ProfileCheckRecord {
  bool holds = true;
  std::vector<std::string> reasons;  ///< why it does not hold
  std::vector<std::string> notes;    ///< what could not be checked
  std::optional<double> profiled_us;  ///< the candidate's launches' device time in the profiled call
  double timed_us = 0.0;              ///< the timed calls' time as charged
  std::optional<double> time_ratio;   ///< timed / profiled
  long long sass_gmma = 0, sass_tma = 0;     ///< patched warp executions
  std::optional<double> hw_gmma, hw_tma;     ///< hardware counters (unpatched passes)
};
void json_fields(JsonIo& io, ProfileCheckRecord& r);

struct IntegrityRecord {
  ordered_json policy = ordered_json::object();  ///< IntegrityPolicy::to_json()
  std::vector<std::string> fresh_inputs;          ///< inputs regenerated before every call
  int spot_rows = 0;                              ///< rows of each output per spot check
  int spot_checked_calls = 0;
  int spot_failed_calls = 0;
  std::vector<FullCheckRecord> full_checks;
  std::vector<HostBoundRecord> host_bound;
  std::optional<HostChargeRecord> host_charge;  ///< absent in older verdicts (judged per trial)
  std::vector<std::string> launches;  ///< one timed call's launches, as "name<<<grid,block,smem>>>"
  std::vector<std::string> stray;     ///< device work outside every call (should be empty)
  std::optional<CalibrationRecord> baseline_calibration;
  std::optional<ProfileCheckRecord> profile_check;  ///< absent: no profile ran, or an older verdict
  std::optional<LaunchAllowanceRecord> triton_launch_path;  ///< Triton candidates only
};
void json_fields(JsonIo& io, IntegrityRecord& r);

struct CoverageRecord {
  bool available = false;
  double workload_flops = 0.0;
  double tensor_core_flops = 0.0;  ///< lower end when shapes are ambiguous
  double share = 0.0;              ///< tensor_core_flops / workload_flops
  std::optional<double> share_max;
  std::string note;
};
void json_fields(JsonIo& io, CoverageRecord& r);

}  // namespace ptxbench

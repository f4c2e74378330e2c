// Does the profiled call describe the timed calls? The runtime-SASS counts (and so the
// target-instruction claims and the tensor-core coverage) come from one call under Nsight Compute;
// a kernel that can tell it is profiled (its call number, the tool's traces in its process, its own
// instruction timing under patching) could run its tensor-core path only there. Two bindings tie
// the claim to what was timed (docs/verdict.md, "The profile against the timed calls"):
//  - time: the profiled call's device time (ncu's per-launch durations, caches flushed, clocks not
//    locked) against the timed calls' median as charged by the host bound, within a factor both
//    ways: a tensor-core path profiled in place of a SIMT path timed (or the reverse) moves the
//    time by the tensor cores' advantage, an order of magnitude;
//  - counts: the warp instructions that the hardware's performance monitors saw on the tensor
//    pipe (and the TMA unit) in ncu's unpatched passes against the patched per-opcode counts. A
//    kernel that detects the patching by timing its own instructions runs one path in each: the
//    hardware counts then miss what the patched counts claim.
// Pure data in, a decision out: CPU-testable.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json_check.h"

namespace ptxbench {

/// The most a Triton call's own launch path (the shim's call into Python, `run`, Triton's dispatch
/// and launcher) may count beyond a CUDA call's: the cap of the host bound's calibrated allowance
/// (IntegrityPolicy::triton_launch_allowance_max_us) and the profile check's extra slack for a
/// Triton candidate (triton_host_path_us). One number for both, so that whatever launch path the
/// host bound still charges (none calibrated yet, a calibration below the truth) stays within what
/// the profile check forgives.
inline constexpr double kTritonHostPathMaxUs = 300.0;

struct ProfileBindingPolicy {
  /// Check the profile against the timed calls (off only to measure what the check costs).
  bool enabled = true;
  /// The timed median may be at most this many times the profiled device time, and the profiled
  /// time at most this many times the timed median (each plus `time_slack_us`). Calibrated on the
  /// honest fixtures, the experts and the Triton kernels (results/profile_vs_timed.md).
  double time_factor = 1.5;
  /// Below this difference the worker's clock cannot tell anything (the host bound's slack).
  double time_slack_us = 40.0;
  /// Added to the slack for a Triton candidate: its timed time can hold Python's share of the call,
  /// which the profiled launches' device time never holds: Python between two launches of one call
  /// lies inside the span, and the host bound charges whatever launch path its calibrated
  /// allowance does not cover (all of it, 126.5 µs a call for the Triton GEMM on the H200, before
  /// the allowance: results/profile_vs_timed.md). Without it a short Triton kernel's profile could
  /// never describe its timed calls.
  double triton_host_path_us = kTritonHostPathMaxUs;
  /// The hardware's tensor-pipe count must reach this share of the patched GMMA warp count times
  /// `hw_gmma_per_warp_inst` (and the TMA unit's count this share of the UTMA* warp count).
  double count_share = 0.98;
  /// Hardware tensor-pipe warp instructions per patched GMMA warp execution (calibrated).
  double hw_gmma_per_warp_inst = 1.0;

  [[nodiscard]] ordered_json to_json() const;
};

/// What the profile and the timing saw of the candidate's own kernels.
struct ProfileEvidence {
  std::optional<double> profiled_us;    ///< Σ launch durations in the profiled call; unset: not collected
  double timed_us = 0.0;                ///< the timed calls' median (mean of trial medians), as charged
  bool triton = false;                  ///< a Triton candidate (policy.triton_host_path_us applies)
  long long sass_gmma = 0;              ///< patched: warp executions of *GMMA opcodes
  long long sass_tma = 0;               ///< patched: warp executions of UTMALDG/UTMASTG/UTMAREDG
  std::optional<double> hw_gmma;        ///< hardware: tensor-pipe warpgroup MMA warp instructions
  std::optional<double> hw_tma;         ///< hardware: TMA unit instructions
};

struct ProfileBinding {
  bool checked = false;    ///< false: nothing to hold (no profile, no timing, or the check is off)
  bool holds = true;       ///< false: the profile does not describe the timed calls; its claims are void
  std::vector<std::string> reasons;  ///< why it does not hold (one sentence each)
  std::vector<std::string> notes;    ///< what could not be checked
  std::optional<double> time_ratio;  ///< timed / profiled
};

/// Holds the profile against the timed calls under `policy`.
ProfileBinding bind_profile(const ProfileEvidence& e, const ProfileBindingPolicy& policy);

}  // namespace ptxbench

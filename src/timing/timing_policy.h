// The timing policy (docs/design.md §4): named, documented defaults; the loops never hold magic numbers.
#pragma once

#include "common/json_check.h"

namespace ptxbench {

struct TimingPolicy {
  /// Untimed calls before each trial's timed calls (orig: 10).
  int warmup_calls = 10;
  /// Timed calls per trial; the trial's statistic is their median (orig: 50).
  int timed_calls = 50;
  /// Trials per side; candidate and baseline trials alternate baseline, candidate, ... (orig: 3).
  int trials = 3;
  /// Calls of one side before switching to the other inside a trial. Trials alternate at call
  /// granularity (baseline call, candidate call, ...) because the GPU's power and clock state drifts
  /// within milliseconds of heavy work: measured on the H200, whole-trial alternation made
  /// cuBLASLt-vs-itself read 0.93 (the second side of each pair ran hotter).
  int interleave_calls = 1;
  /// Bytes written to a scratch buffer before every call, as a multiple of the L2 size, so each
  /// call starts with a cold L2 (orig: ≥ 2×).
  double l2_flush_factor = 2.0;
  /// Experimental (off): each runner also overwrites one buffer of l2_flush_factor × L2, shared by
  /// both runners, in its own context right before each call, outside the span. The worker's own
  /// flush, from its process, leaves L2 clean when the call starts, and that favours cuBLASLt by
  /// 1.3% against the pack's kernels on the H200 (results/measurement_integrity.md, calls 7 and 9 of
  /// "the baseline timed by a trusted runner");
  /// with the runners' flush the speedups read as they did when both sides ran in one process.
  /// On until measured: the A/A with one flush buffer per runner read 0.995–1.009, so the buffer
  /// is now shared (same dirty lines on both sides); measured, that still spread the A/A to
  /// −0.8…+1.2% (results/measurement_integrity.md, "before/after on one machine"), so it stays off.
  bool runner_l2_flush = false;
  /// Poison the outputs with NaN before every timed call too (outside the measured span), so a
  /// call can never pass by leaving the previous call's result in place.
  bool poison_timed_calls = true;
  /// Refill the op's fresh inputs before every call (docs/verdict.md, "Measurement integrity"), so no
  /// timed call can reuse an earlier call's work. Off only to measure what fresh inputs cost an
  /// honest kernel (`ptxbench eval --no-fresh-inputs`): each trial then keeps its inputs, the
  /// spot and full checks still run, and the verdict and the report say so.
  bool fresh_inputs = true;

  [[nodiscard]] ordered_json to_json() const {
    ordered_json j = {{"warmup_calls", warmup_calls},
            {"timed_calls", timed_calls},
            {"trials", trials},
            {"interleave_calls", interleave_calls},
            {"l2_flush_factor", l2_flush_factor},
            {"poison_timed_calls", poison_timed_calls},
            {"span", "first kernel/memcpy/memset start to last end of the call, any stream (CUPTI activity)"},
            {"trial_statistic", "median of timed calls"},
            {"time", "mean of trial medians (orig); speedup = median over paired trials of baseline/candidate"}};
    if (runner_l2_flush) j["runner_l2_flush"] = true;  // only when on, like the verdict's record
    if (!fresh_inputs) j["fresh_inputs"] = false;      // only when off
    return j;
  }
};

}  // namespace ptxbench

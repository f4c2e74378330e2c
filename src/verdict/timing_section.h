// The verdict's timing section: the policy, the baseline checked at the first trial, the kernels
// seen in timed calls and, once every trial ran, both sides' times and the paired speedup.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "timing/timing_policy.h"
#include "timing/timing_summary.h"
#include "verdict/correctness_section.h"
#include "verdict/integrity_section.h"
#include "verdict/stage_record.h"

namespace ptxbench {

/// The timing policy as recorded (timing/timing_policy.h), with its descriptions.
struct TimingPolicyRecord {
  int warmup_calls = 0;
  int timed_calls = 0;
  int trials = 0;
  int interleave_calls = 0;
  double l2_flush_factor = 0.0;
  bool runner_l2_flush = false;  ///< absent (false) in older verdicts
  bool poison_timed_calls = false;
  bool fresh_inputs = true;  ///< absent (true) in older verdicts and whenever on
  std::string span;             ///< what a call's time spans
  std::string trial_statistic;  ///< a trial's statistic over its calls
  std::string time;             ///< the reported time and the speedup
};
void json_fields(JsonIo& io, TimingPolicyRecord& p);

TimingPolicyRecord policy_record(const TimingPolicy& p);

/// One side's times (timing/timing_summary.h).
struct TimedSide {
  double mean_us = 0.0;    ///< mean of trial medians (the reported time)
  double median_us = 0.0;  ///< median of trial medians
  double spread = 0.0;     ///< (max − min) / median of the trial medians
  std::vector<double> trial_medians_us;
  std::vector<std::vector<double>> samples_us;  ///< every timed call's span, per trial
};
void json_fields(JsonIo& io, TimedSide& s);

/// What every trial's times add up to.
struct TimingResult {
  TimedSide candidate, baseline;
  std::vector<double> paired_ratios;  ///< baseline_i / candidate_i per paired trial
  double speedup = 0.0;               ///< median of the paired ratios
  double speedup_spread = 0.0;
  double floor_us = 0.0;  ///< roofline floor
  bool below_floor = false;
  double flops = 0.0, min_bytes = 0.0;
  double candidate_tflops = 0.0, baseline_tflops = 0.0;
};

/// The result from the summary and the workload's FLOPs and minimal bytes.
TimingResult timing_result(const TimingSummary& s, double flops, double min_bytes);

struct TimingSection : StageRecord<TimingSection> {
  std::optional<std::string> skipped;  ///< why timing did not run (nothing else is set then)
  std::optional<TimingPolicyRecord> policy;
  /// The baseline's name; the document's "baseline" holds it until `result` replaces it with the
  /// baseline's times.
  std::optional<std::string> baseline_name;
  std::optional<TrialRecord> baseline_check;
  std::optional<std::vector<std::string>> kernels;  ///< kernels seen in timed calls (all trials ran)
  std::optional<IntegrityRecord> integrity;          ///< what the integrity checks saw (schema 2)
  std::optional<TimingResult> result;  ///< its keys sit beside the section's own in the document
};
void json_fields(JsonIo& io, TimingSection& s);

}  // namespace ptxbench

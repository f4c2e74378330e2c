#include "verdict/timing_section.h"

namespace ptxbench {

TimingPolicyRecord policy_record(const TimingPolicy& p) {
  // The descriptions live beside the policy (TimingPolicy::to_json), so they are read from there.
  return p.to_json().get<TimingPolicyRecord>();
}

namespace {
TimedSide timed_side(const SideSummary& s) {
  return {s.mean_us, s.median_us, s.spread, s.trial_medians_us, s.trials_us};
}
}  // namespace

TimingResult timing_result(const TimingSummary& s, double flops, double min_bytes) {
  TimingResult r;
  r.candidate = timed_side(s.candidate);
  r.baseline = timed_side(s.baseline);
  r.paired_ratios = s.ratios;
  r.speedup = s.speedup;
  r.speedup_spread = s.speedup_spread;
  r.floor_us = s.floor_us;
  r.below_floor = s.below_floor;
  r.flops = flops;
  r.min_bytes = min_bytes;
  r.candidate_tflops = flops / (s.candidate.mean_us * 1e-6) * 1e-12;
  r.baseline_tflops = flops / (s.baseline.mean_us * 1e-6) * 1e-12;
  return r;
}

void json_fields(JsonIo& io, TimingPolicyRecord& p) {
  io("warmup_calls", p.warmup_calls);
  io("timed_calls", p.timed_calls);
  io("trials", p.trials);
  io("interleave_calls", p.interleave_calls);
  io("l2_flush_factor", p.l2_flush_factor);
  io("poison_timed_calls", p.poison_timed_calls);
  io("span", p.span);
  io("trial_statistic", p.trial_statistic);
  io("time", p.time);
  // Each written only when it differs from what its absence means (off; on): stored verdicts keep their bytes.
  io.when(p.runner_l2_flush, "runner_l2_flush", p.runner_l2_flush);
  io.when(!p.fresh_inputs, "fresh_inputs", p.fresh_inputs);
}

void json_fields(JsonIo& io, TimedSide& s) {
  io("mean_us", s.mean_us);
  io("median_us", s.median_us);
  io("spread", s.spread);
  io("trial_medians_us", s.trial_medians_us);
  io("samples_us", s.samples_us);
}

namespace {
// The result's keys but the baseline's times, which take the place of the baseline's name.
void result_fields(JsonIo& io, TimingResult& r) {
  io("candidate", r.candidate);
  io("paired_ratios", r.paired_ratios);
  io("speedup", r.speedup);
  io("speedup_spread", r.speedup_spread);
  io("floor_us", r.floor_us);
  io("below_floor", r.below_floor);
  io("flops", r.flops);
  io("min_bytes", r.min_bytes);
  io("candidate_tflops", r.candidate_tflops);
  io("baseline_tflops", r.baseline_tflops);
}
}  // namespace

void json_fields(JsonIo& io, TimingSection& s) {
  io("skipped", s.skipped);
  io("policy", s.policy);
  if (io.reading()) {
    s.baseline_name.reset();
    s.result.reset();
    if (io.has("candidate")) s.result.emplace();
  }
  if (s.result) io("baseline", s.result->baseline);
  else io("baseline", s.baseline_name);
  io("baseline_check", s.baseline_check);
  io("kernels", s.kernels);
  io("integrity", s.integrity);
  if (s.result) result_fields(io, *s.result);
  stage_record_fields(io, s);
}

}  // namespace ptxbench

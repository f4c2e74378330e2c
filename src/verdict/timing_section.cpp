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

void to_json(ordered_json& j, const TimingPolicyRecord& p) {
  j = {{"warmup_calls", p.warmup_calls},
       {"timed_calls", p.timed_calls},
       {"trials", p.trials},
       {"interleave_calls", p.interleave_calls},
       {"l2_flush_factor", p.l2_flush_factor},
       {"poison_timed_calls", p.poison_timed_calls},
       {"span", p.span},
       {"trial_statistic", p.trial_statistic},
       {"time", p.time}};
  if (p.runner_l2_flush) j["runner_l2_flush"] = true;  // written only when on: stored verdicts keep their bytes
  if (!p.fresh_inputs) j["fresh_inputs"] = false;      // written only when off, for the same reason
}

void from_json(const ordered_json& j, TimingPolicyRecord& p) {
  require_json_object(j);
  read_field(j, "warmup_calls", p.warmup_calls);
  read_field(j, "timed_calls", p.timed_calls);
  read_field(j, "trials", p.trials);
  read_field(j, "interleave_calls", p.interleave_calls);
  read_field(j, "l2_flush_factor", p.l2_flush_factor);
  read_field(j, "runner_l2_flush", p.runner_l2_flush);
  read_field(j, "poison_timed_calls", p.poison_timed_calls);
  read_field(j, "fresh_inputs", p.fresh_inputs);
  read_field(j, "span", p.span);
  read_field(j, "trial_statistic", p.trial_statistic);
  read_field(j, "time", p.time);
}

void to_json(ordered_json& j, const TimedSide& s) {
  j = {{"mean_us", s.mean_us},
       {"median_us", s.median_us},
       {"spread", s.spread},
       {"trial_medians_us", s.trial_medians_us},
       {"samples_us", s.samples_us}};
}

void from_json(const ordered_json& j, TimedSide& s) {
  require_json_object(j);
  read_field(j, "mean_us", s.mean_us);
  read_field(j, "median_us", s.median_us);
  read_field(j, "spread", s.spread);
  read_field(j, "trial_medians_us", s.trial_medians_us);
  read_field(j, "samples_us", s.samples_us);
}

void to_json(ordered_json& j, const TimingSection& s) {
  j = ordered_json::object();
  write_optional(j, "skipped", s.skipped);
  write_optional(j, "policy", s.policy);
  if (s.result) j["baseline"] = s.result->baseline;
  else write_optional(j, "baseline", s.baseline_name);
  write_optional(j, "baseline_check", s.baseline_check);
  write_optional(j, "kernels", s.kernels);
  write_optional(j, "integrity", s.integrity);
  if (const auto& r = s.result) {
    j["candidate"] = r->candidate;
    j["paired_ratios"] = r->paired_ratios;
    j["speedup"] = r->speedup;
    j["speedup_spread"] = r->speedup_spread;
    j["floor_us"] = r->floor_us;
    j["below_floor"] = r->below_floor;
    j["flops"] = r->flops;
    j["min_bytes"] = r->min_bytes;
    j["candidate_tflops"] = r->candidate_tflops;
    j["baseline_tflops"] = r->baseline_tflops;
  }
  write_stage_record(j, s);
}

void from_json(const ordered_json& j, TimingSection& s) {
  require_json_object(j);
  read_field(j, "skipped", s.skipped);
  read_field(j, "policy", s.policy);
  s.baseline_name.reset();
  s.result.reset();
  if (j.contains("candidate")) {
    TimingResult& r = s.result.emplace();
    read_field(j, "candidate", r.candidate);
    read_field(j, "baseline", r.baseline);
    read_field(j, "paired_ratios", r.paired_ratios);
    read_field(j, "speedup", r.speedup);
    read_field(j, "speedup_spread", r.speedup_spread);
    read_field(j, "floor_us", r.floor_us);
    read_field(j, "below_floor", r.below_floor);
    read_field(j, "flops", r.flops);
    read_field(j, "min_bytes", r.min_bytes);
    read_field(j, "candidate_tflops", r.candidate_tflops);
    read_field(j, "baseline_tflops", r.baseline_tflops);
  } else {
    read_field(j, "baseline", s.baseline_name);
  }
  read_field(j, "baseline_check", s.baseline_check);
  read_field(j, "kernels", s.kernels);
  read_field(j, "integrity", s.integrity);
  read_stage_record(j, s);
}

}  // namespace ptxbench

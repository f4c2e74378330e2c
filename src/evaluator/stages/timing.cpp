#include "evaluator/stages/timing.h"

#include "evaluator/stages/timing_integrity.h"
#include "evaluator/stages/timing_trials.h"
#include "evaluator/stages/triton_launch.h"
#include "timing/roofline.h"
#include "timing/timing_summary.h"

namespace ptxbench {

namespace {

// The integrity record's constant part: the policy, and which inputs every call regenerates.
IntegrityRecord integrity_record(const EvalInputs& in, const WorkloadState& state) {
  const IntegrityPolicy& integrity = in.options.integrity;
  IntegrityRecord rec;
  rec.policy = integrity.to_json();
  rec.spot_rows = integrity.spot_rows;
  std::vector<std::string> inputs;
  for (const auto& t : in.workload.tensors)
    if (!t.is_output) inputs.push_back(t.name);
  if (in.options.timing.fresh_inputs)
    for (std::size_t i : state.op().fresh_inputs(in.workload)) rec.fresh_inputs.push_back(inputs.at(i));
  return rec;
}

// Ends the stage with what it recorded so far.
TimingOutcome finish(TimingRun& run, std::optional<Failure> failure) {
  TimingOutcome out;
  run.section.integrity = run.rec;
  out.section = std::move(run.section);
  out.trials = std::move(run.trials);
  out.failure = std::move(failure);
  return out;
}

// The trials and the checks over all of them; a failure is the candidate's.
std::optional<Failure> timed_trials(TimingRun& run, const std::optional<ProfileSeen>& profile, std::string& host_clock_note) {
  // A Triton candidate's slack allows Triton's own launch path, calibrated on our probe.
  double launch_allowance_us = 0.0;
  if (run.in.build.launch) {
    run.rec.triton_launch_path = triton_launch_allowance(run);
    launch_allowance_us = run.rec.triton_launch_path->allowance_us;
  }
  for (int trial = 1; trial <= run.in.options.timing.trials; ++trial)
    if (auto f = timing_trial(run, trial)) return f;
  host_clock_note = charge_host_clock(run, launch_allowance_us);
  return check_timed_kernels(run, profile);
}

}  // namespace

TimingOutcome timing(const EvalInputs& in, EvalRunners& runners, HostState& host, double slowest_call_us,
                     const std::optional<ProfileSeen>& profile) {
  if (!in.options.measure_time) {
    TimingOutcome out;
    out.section.emplace().skipped = "disabled by option";
    return out;
  }
  const TimingPolicy& policy = in.options.timing;
  if (!host.flusher) host.flusher = std::make_unique<L2Flusher>(policy.l2_flush_factor);
  TimingRun run(in, runners, host, in.options.call_timeout_s + 2e-6 * slowest_call_us);
  run.section.policy = policy_record(policy);
  run.rec = integrity_record(in, *runners.state);
  run.baseline_name = runners.baseline.get("the baseline").name;
  run.section.baseline_name = run.baseline_name;
  std::string host_clock_note;
  if (auto f = timed_trials(run, profile, host_clock_note)) return finish(run, f);

  const Operator& op = runners.state->op();
  double flops = op.flops(in.workload), bytes = op.min_bytes(in.workload);
  double floor_us = 0.0;
  if (auto peaks = peaks_for(in.gpu_name)) floor_us = roofline_floor_us(*peaks, flops, bytes);
  TimingSummary summary = summarize_timing(run.series.cand, run.series.base, floor_us);
  run.section.result = timing_result(summary, flops, bytes);
  // The profile's claims are credited only if the profiled call ran what was timed.
  std::optional<std::string> claims_void = bind_profile_claims(run, profile, summary.candidate.mean_us);
  std::optional<Failure> judged = judge_baseline(run, summary.baseline.median_us);
  if (!judged && summary.below_floor)
    judged = Failure{Status::TIMING_ANOMALY, "the measured time is below the roofline floor of this workload"};
  TimingOutcome out = finish(run, judged);
  out.host_clock_note = std::move(host_clock_note);
  out.claims_void = std::move(claims_void);
  out.candidate_us = summary.candidate.mean_us;
  out.baseline_us = summary.baseline.mean_us;
  out.baseline_name = run.baseline_name;
  if (!judged) out.speedup = summary.speedup;
  return out;
}

}  // namespace ptxbench

#include "evaluator/stages/triton_launch.h"

#include "common/error.h"
#include "evaluator/trusted_runners.h"
#include "evaluator/triton_launch_calibration.h"
#include "gpu/random_fill.h"
#include "timing/call_integrity.h"

namespace ptxbench {

namespace {

constexpr const char* kProbe = "the Triton launch probe";

// The probe's and the baseline's timed calls of one trial, by the worker's clock and their spans.
struct ProbeTrial {
  std::vector<double> host, spans, base_host, base_spans;
};

ProbeTrial probe_trial(TimingRun& run, TrustedRunner& probe, int trial, uint64_t& next_probe_call) {
  const TimingPolicy& policy = run.in.options.timing;
  auto ask_probe = [&](const RunnerRequest& r) {
    try {
      return probe.session->request(r, run.call_budget_s);
    } catch (const RunnerFault& f) {
      throw EnvironmentError("runner", std::string(kProbe) + " failed: " + f.what());
    }
  };
  WorkloadState& state = *run.runners.state;
  auto flush = [&run](cudaStream_t s) { run.flush(s); };
  const uint64_t seed = derive_seed(run.in.seed, 5000 + static_cast<uint64_t>(trial));
  state.begin_trial(seed);
  std::vector<uint64_t> probe_index, base_index;
  ProbeTrial t;
  for (int j = 0; j < policy.warmup_calls + policy.timed_calls; ++j) {
    const bool timed = j >= policy.warmup_calls;
    state.prepare_call(call_seed(policy, seed, 2 * static_cast<uint64_t>(j)), WorkloadState::Side::baseline,
                       flush, false);
    const uint64_t base_call = run.runners.next_baseline_call++;
    RunnerReply base_reply;
    const double base_us = host_time_us([&] { base_reply = run.ask_baseline(call_request(base_call)); });
    if (!base_reply.ok()) throw Error("baseline", run.baseline_name + " failed: " + base_reply.failure->error);
    state.prepare_call(call_seed(policy, seed, 2 * static_cast<uint64_t>(j) + 1),
                       WorkloadState::Side::candidate, flush, false);
    const uint64_t probe_call = next_probe_call++;
    RunnerReply reply;
    const double host_us = host_time_us([&] { reply = ask_probe(call_request(probe_call)); });
    if (!reply.ok()) throw EnvironmentError("timing", std::string(kProbe) + "'s call failed: " + reply.failure->error);
    if (!timed) continue;
    base_index.push_back(base_call);
    t.base_host.push_back(base_us);
    probe_index.push_back(probe_call);
    t.host.push_back(host_us);
  }
  t.spans = trusted_spans(ask_probe(spans_request()), probe_index, kProbe);
  t.base_spans = trusted_spans(run.ask_baseline(spans_request()), base_index, run.baseline_name);
  return t;
}

// The probe's excess over every trial (`per_trial`: each trial's).
double measure_probe(TimingRun& run, std::vector<double>& per_trial) {
  const IntegrityPolicy& integrity = run.in.options.integrity;
  TrustedRunner& probe = run.runners.probe.get(kProbe);
  ProbeTrial all;
  uint64_t next_probe_call = 0;
  for (int trial = 1; trial <= run.in.options.timing.trials; ++trial) {
    ProbeTrial t = probe_trial(run, probe, trial, next_probe_call);
    per_trial.push_back(check_host_bound(t.host, t.spans, calibrate_overhead(t.base_host, t.base_spans), integrity).excess_us);
    all.host.insert(all.host.end(), t.host.begin(), t.host.end());
    all.spans.insert(all.spans.end(), t.spans.begin(), t.spans.end());
    all.base_host.insert(all.base_host.end(), t.base_host.begin(), t.base_host.end());
    all.base_spans.insert(all.base_spans.end(), t.base_spans.begin(), t.base_spans.end());
  }
  HostBound bound = check_host_bound(all.host, all.spans, calibrate_overhead(all.base_host, all.base_spans), integrity);
  if (bound.impossible_calls > 0)
    throw EnvironmentError("timing", std::string(kProbe) + "'s spans are longer than the worker's wait for its calls");
  run.runners.probe.ready.reset();  // measured: its runner's work is done
  return bound.excess_us;
}

}  // namespace

LaunchAllowanceRecord triton_launch_allowance(TimingRun& run) {
  const TritonLaunchPlan& plan = *run.in.build.launch;
  TritonLaunchCalibration calibration(run.in.calibration_key);
  std::optional<double> measured;
  std::vector<double> per_trial;
  if (plan.probe) measured = measure_probe(run, per_trial);
  std::vector<double> kept = measured ? calibration.record(plan.key, *measured) : calibration.recorded(plan.key);
  return launch_allowance_record(kept, measured, per_trial, plan.key, calibration.file(),
                                 run.in.options.integrity.triton_launch_allowance_max_us);
}

}  // namespace ptxbench

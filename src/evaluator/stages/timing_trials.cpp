#include "evaluator/stages/timing_trials.h"

#include <cmath>
#include <map>

#include "common/error.h"
#include "evaluator/stages/runner_findings.h"
#include "evaluator/trusted_runners.h"
#include "gpu/random_fill.h"
#include "timing/call_integrity.h"

namespace ptxbench {

namespace {

// Per call: the worker's clock less the reported span, to 0.1 µs (the host bound's raw data).
std::vector<double> gaps_us(const std::vector<double>& host_us, const std::vector<double>& span_us) {
  std::vector<double> gaps;
  for (std::size_t i = 0; i < host_us.size() && i < span_us.size(); ++i)
    gaps.push_back(std::round((host_us[i] - span_us[i]) * 10.0) / 10.0);
  return gaps;
}

// One trial's timed calls: their numbers and the worker's clock around them.
struct TrialCalls {
  std::vector<uint64_t> cand_index, base_index;
  std::vector<double> host_us, base_host_us;
};

// The baseline's call `j` of a trial, in the trusted runner, under the worker's own clock (the host
// bound's calibration). Its first timed call of the first trial is checked against the reference.
void baseline_call(TimingRun& run, int trial, uint64_t seed, int j, TrialCalls& calls) {
  const TimingPolicy& policy = run.in.options.timing;
  const bool timed = j >= policy.warmup_calls;
  const bool check = trial == 1 && j == policy.warmup_calls;
  WorkloadState& state = *run.runners.state;
  state.prepare_call(call_seed(policy, seed, 2 * static_cast<uint64_t>(j)), WorkloadState::Side::baseline,
                     [&run](cudaStream_t s) { run.flush(s); }, check);
  const uint64_t index = run.runners.next_baseline_call++;
  RunnerReply reply;
  const double host_us = host_time_us([&] { reply = run.ask_baseline(call_request(index)); });
  if (!reply.ok()) throw Error("baseline", run.baseline_name + " failed: " + reply.failure->error);
  if (timed) {
    calls.base_index.push_back(index);
    calls.base_host_us.push_back(host_us);
  }
  if (check) {
    state.compute_reference();
    OutputCheck bc = state.check_baseline(run.in.tolerance, run.in.options.compare_threads);
    run.section.baseline_check = trial_record(trial, TrialPhase::baseline, seed, bc);
    if (!bc.passed()) throw Error("baseline", run.baseline_name + " failed the correctness rule against the reference");
  }
}

// The candidate's call `j` of a trial, in its runner, under the worker's own clock; every timed call
// spot-checked, the secret one in full.
std::optional<Failure> candidate_call(TimingRun& run, int trial, uint64_t seed, int j, int full_call, TrialCalls& calls) {
  const TimingPolicy& policy = run.in.options.timing;
  const bool timed = j >= policy.warmup_calls;
  const int k = j - policy.warmup_calls;
  const bool full = timed && k == full_call;
  WorkloadState& state = *run.runners.state;
  state.prepare_call(call_seed(policy, seed, 2 * static_cast<uint64_t>(j) + 1), WorkloadState::Side::candidate,
                     [&run](cudaStream_t s) { run.flush(s); }, full);
  const uint64_t index = run.runners.next_call++;
  RunnerReply reply;
  const double host_us = host_time_us([&] { reply = run.runners.candidate->request(call_request(index), run.call_budget_s); });
  if (auto d = denied_calls(reply)) return d;
  if (!reply.ok()) return Failure{Status::RUNTIME_ERROR, "a timed call failed: " + reply.failure->error};
  if (!timed) return std::nullopt;
  calls.cand_index.push_back(index);
  calls.host_us.push_back(host_us);
  OutputCheck spot = state.spot_check(run.secret, run.in.options.integrity.spot_rows, run.in.tolerance);
  ++run.rec.spot_checked_calls;
  if (!spot.passed()) {
    ++run.rec.spot_failed_calls;
    run.trials.push_back(trial_record(trial, TrialPhase::spot_check, seed, spot));
    return Failure{Status::INCORRECT_NUMERICAL, check_message(spot, trial, TrialPhase::spot_check) + ": timed call " +
                                                    std::to_string(k + 1) + " of trial " + std::to_string(trial) +
                                                    " is wrong on rows sampled at random (spot check of every timed call)"};
  }
  if (!full) return std::nullopt;
  state.compute_reference();
  OutputCheck check = state.check_candidate(run.in.tolerance, run.in.options.compare_threads);
  run.trials.push_back(trial_record(trial, TrialPhase::timing, seed, check));
  run.rec.full_checks.push_back({trial, k, check.passed()});
  if (check.passed()) return std::nullopt;
  return Failure{status_for_check(check), check_message(check, trial, TrialPhase::timing) + ": timed call " +
                                              std::to_string(k + 1) + " (checked in full, chosen at random) is wrong"};
}

// The candidate runner's account of the trial's timed calls: each one's span, and the same
// launches of the candidate's own kernels in every call.
std::optional<Failure> candidate_spans(TimingRun& run, int trial, const RunnerReply& report, const TrialCalls& calls,
                                       std::vector<double>& spans) {
  std::map<uint64_t, const CallActivity*> by_index;
  for (const auto& a : report.spans->calls) by_index[a.index] = &a;
  for (std::size_t i = 0; i < calls.cand_index.size(); ++i) {
    auto it = by_index.find(calls.cand_index[i]);
    if (it == by_index.end())
      return Failure{Status::RUNTIME_ERROR, "the runner reported no span for timed call " + std::to_string(i + 1)};
    const CallActivity& a = *it->second;
    bool own_kernel = false;
    for (const auto& k : a.kernels) {
      run.series.seen_kernels.insert(k.name);
      own_kernel = own_kernel || run.in.build.trusted || run.in.build.kernels.count(k.name);
    }
    if (a.empty || !own_kernel)
      return Failure{Status::TIMING_ANOMALY, std::string("timed call ") + std::to_string(i + 1) + " of trial " +
                                                 std::to_string(trial) + " launched " +
                                                 (a.empty ? "no device work at all" : "no kernel of the candidate's own module")};
    std::vector<KernelLaunch> launches = launch_set(a.kernels);
    if (!run.series.launches) run.series.launches = launches;
    else if (std::string d = launch_difference(*run.series.launches, launches); !d.empty())
      return Failure{Status::TIMING_ANOMALY, "the timed calls did not all launch the same kernels: " + d};
    spans.push_back(a.span_us);
  }
  return std::nullopt;
}

// The end of a trial: the runners' spans, held to the worker's clock.
std::optional<Failure> close_trial(TimingRun& run, int trial, const TrialCalls& calls) {
  const EvalOptions& o = run.in.options;
  RunnerReply report;
  try {
    report = run.runners.candidate->request(spans_request(), o.call_timeout_s);
  } catch (const RunnerFault& f) {
    return runner_fault_finding(f, "reporting spans", o.call_timeout_s);
  }
  if (!report.spans) return Failure{Status::RUNTIME_ERROR, "the runner's reply to a spans request carried none"};
  run.rec.stray = report.spans->stray;
  if (!report.spans->stray.empty())
    return Failure{Status::TIMING_ANOMALY, "device work ran outside the timed calls: " + report.spans->stray.front()};
  if (report.spans->dropped_records > 0) return lost_activity_records(report.spans->dropped_records, "in a timing trial");
  std::vector<double> spans;
  if (auto f = candidate_spans(run, trial, report, calls, spans)) return f;
  std::vector<double> base_spans = trusted_spans(run.ask_baseline(spans_request()), calls.base_index, run.baseline_name);
  HostBound bound = check_host_bound(calls.host_us, spans, calibrate_overhead(calls.base_host_us, base_spans), o.integrity);
  run.rec.host_bound.push_back({trial, bound.overhead_us, bound.excess_us, bound.impossible_calls, gaps_us(calls.host_us, spans),
                                gaps_us(calls.base_host_us, base_spans)});
  if (bound.impossible_calls > 0)
    return Failure{Status::TIMING_ANOMALY,
                   "a reported span is longer than the worker's whole wait for its call: the runner's report is forged"};
  TimedSeries& s = run.series;
  s.host.insert(s.host.end(), calls.host_us.begin(), calls.host_us.end());
  s.spans.insert(s.spans.end(), spans.begin(), spans.end());
  s.base_host.insert(s.base_host.end(), calls.base_host_us.begin(), calls.base_host_us.end());
  s.base_spans.insert(s.base_spans.end(), base_spans.begin(), base_spans.end());
  s.base.push_back(base_spans);
  s.cand.push_back(spans);
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> call_seed(const TimingPolicy& policy, uint64_t trial_seed, uint64_t n) {
  if (!policy.fresh_inputs) return std::nullopt;
  return derive_seed(trial_seed, n);
}

TimingRun::TimingRun(const EvalInputs& in, EvalRunners& runners, HostState& host, double call_budget_s)
    : in(in), runners(runners), host(host), call_budget_s(call_budget_s), secret(derive_seed(in.seed, 4000)) {}

RunnerReply TimingRun::ask_baseline(const RunnerRequest& r) {
  try {
    return runners.baseline.ready->session->request(r, call_budget_s);
  } catch (const RunnerFault& f) {
    throw EnvironmentError("runner", "the trusted runner of " + baseline_name + " failed: " + f.what());
  }
}

void TimingRun::flush(cudaStream_t s) { host.flusher->flush(s); }

std::optional<Failure> timing_trial(TimingRun& run, int trial) {
  const TimingPolicy& policy = run.in.options.timing;
  const uint64_t seed = derive_seed(run.in.seed, 2000 + static_cast<uint64_t>(trial));
  run.runners.state->begin_trial(seed);
  const int full_call = static_cast<int>(run.secret() % static_cast<uint64_t>(policy.timed_calls));
  TrialCalls calls;
  try {
    for (int j = 0; j < policy.warmup_calls + policy.timed_calls; ++j) {
      baseline_call(run, trial, seed, j, calls);
      if (auto f = candidate_call(run, trial, seed, j, full_call, calls)) return f;
    }
  } catch (const RunnerFault& f) {
    return runner_fault_finding(f, "in a timed call", run.call_budget_s);
  }
  return close_trial(run, trial, calls);
}

}  // namespace ptxbench

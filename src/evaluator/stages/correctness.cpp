#include "evaluator/stages/correctness.h"

#include <algorithm>
#include <chrono>

#include "evaluator/runner_session.h"
#include "evaluator/stages/runner_findings.h"
#include "evaluator/stages/tool_process.h"
#include "evaluator/trusted_runners.h"
#include "gpu/random_fill.h"

namespace ptxbench {

namespace {

// Starts the candidate's runner and sets it up; a failure is the candidate's.
std::optional<Failure> set_up_candidate(const EvalInputs& in, EvalRunners& runners, HostState& host,
                                        const RunnerLaunch& launch) {
  runners.candidate = std::make_unique<RunnerSession>(launch, in.options.startup_timeout_s);
  runners.sandbox = to_json(runners.candidate->sandbox_report());
  WorkloadState::SharedTensors shared = runners.state->shared_tensors();
  SetupRequest setup;
  setup.library = in.build.library.string();
  setup.tensors = shared.tensors;
  setup.triton = in.build.triton;
  share_flush_buffer(in, host, setup, shared.fds);
  RunnerReply ready = runners.candidate->setup(setup, shared.fds, in.options.startup_timeout_s);
  if (!ready.proc_view.empty()) (*runners.sandbox)["proc_view"] = ready.proc_view;
  if (auto d = denied_calls(ready)) return d;
  if (!ready.ok()) return Failure{Status::RUNTIME_ERROR, "the runner could not set up the candidate: " + ready.failure->error};
  return std::nullopt;
}

// The trials, then the runner's account of work outside every call.
std::optional<Failure> run_trials(const EvalInputs& in, EvalRunners& runners, CorrectnessOutcome& out) {
  std::vector<TrialRecord>& trials = out.section->trials;
  WorkloadState& state = *runners.state;
  for (int trial = 1; trial <= in.options.correctness_trials; ++trial) {
    uint64_t seed = derive_seed(in.seed, 1000 + static_cast<uint64_t>(trial));
    state.prepare_trial(seed);
    state.poison_outputs();
    auto t0 = std::chrono::steady_clock::now();
    RunnerReply reply = runners.candidate->request(call_request(runners.next_call++), in.options.call_timeout_s);
    const double host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (auto d = denied_calls(reply)) return d;
    if (!reply.ok()) {
      trials.push_back({trial, TrialPhase::correctness, seed, false, std::nullopt, reply.failure->error});
      return Failure{Status::RUNTIME_ERROR, "the candidate's call failed: " + reply.failure->error};
    }
    out.slowest_call_us = std::max(out.slowest_call_us, host_us);  // our clock: the runner's own is not trusted
    OutputCheck check = state.check_candidate(in.tolerance, in.options.compare_threads);
    trials.push_back(trial_record(trial, TrialPhase::correctness, seed, check));
    if (!check.passed()) return Failure{status_for_check(check), check_message(check, trial, TrialPhase::correctness)};
  }
  // Device work that belongs to no call (launched at load time, say) is work no time accounts for.
  RunnerReply activity = runners.candidate->request(spans_request(), in.options.call_timeout_s);
  if (!activity.spans) return Failure{Status::RUNTIME_ERROR, "the runner's reply to a spans request carried none"};
  // Lost records could have held device work outside the calls: the stray check below is then blind.
  if (activity.spans->dropped_records > 0) return lost_activity_records(activity.spans->dropped_records, "in the correctness calls");
  if (!activity.spans->stray.empty())
    return Failure{Status::TIMING_ANOMALY, "device work ran outside every call: " + activity.spans->stray.front()};
  return std::nullopt;
}

}  // namespace

CorrectnessOutcome correctness(const EvalInputs& in, EvalRunners& runners, HostState& host) {
  CorrectnessOutcome out;
  CorrectnessSection& section = out.section.emplace();
  section.tolerance = in.tolerance;
  section.trials_planned = in.options.correctness_trials;
  RunnerLaunch launch;
  launch.runner_path = runner_path(in.options);
  launch.device = in.options.device;
  launch.scratch = in.scratch;
  launch.readable = in.readable();
  launch.sandbox = in.options.sandbox;
  if (in.options.measure_time && !runners.baseline.started()) start_trusted_runners(in, runners, host, launch);
  std::optional<Failure> failure;
  try {
    failure = set_up_candidate(in, runners, host, launch);
    if (!failure) failure = run_trials(in, runners, out);
  } catch (const RunnerFault& f) {
    failure = runner_fault_finding(f, "during a correctness call", in.options.call_timeout_s);
  }
  section.passed = !failure;
  if (failure) out.failure = std::move(failure);
  return out;
}

}  // namespace ptxbench

// The timing stage's trials (docs/verdict.md, "Timing method" and "Measurement integrity"):
// warm-ups, then timed calls, baseline and candidate alternating call by call. The worker prepares
// every call itself (fresh inputs from a secret counter seed, poisoned outputs, a cold L2) and
// checks every timed call's output on random rows; one timed call per trial, chosen at random and
// kept secret, is checked in full. The runner reports spans and launches per call at the end of
// the trial; the worker holds them to its own clock (host bound) and to each other (same launches).
#pragma once

#include <chrono>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "evaluator/evaluation.h"
#include "evaluator/runner_session.h"
#include "timing/call_activity.h"

namespace ptxbench {

/// Every trial's timed calls, as the worker and the runners saw them.
struct TimedSeries {
  std::vector<std::vector<double>> cand, base;  ///< spans per trial
  std::vector<double> host, spans, base_host, base_spans;  ///< every trial's, for the host bound
  std::set<std::string> seen_kernels;
  std::optional<std::vector<KernelLaunch>> launches;  ///< one timed call's (they all launch the same)
};

/// One timing stage's state: what its trials read, and what they record.
struct TimingRun {
  TimingRun(const EvalInputs& in, EvalRunners& runners, HostState& host, double call_budget_s);

  const EvalInputs& in;
  EvalRunners& runners;
  HostState& host;
  const double call_budget_s;  ///< a call's time limit (grows with the slowest correctness call)
  std::string baseline_name;
  /// Which rows are checked and which call is checked in full: never told to the runner.
  std::mt19937_64 secret;
  TimingSection section;
  IntegrityRecord rec;
  std::vector<TrialRecord> trials;  ///< the full and failed spot checks (correctness trials too)
  TimedSeries series;

  /// A call of the baseline's trusted runner; its faults are ours, never the candidate's.
  RunnerReply ask_baseline(const RunnerRequest& r);
  /// The worker's flush of the L2 before a call.
  void flush(cudaStream_t s);
};

/// One trial (1-based). A failure is the candidate's; anything amiss on our side throws.
std::optional<Failure> timing_trial(TimingRun& run, int trial);

/// The seed of call `n`'s fresh inputs in a trial; none when they are off (a diagnostic: the trial
/// keeps its inputs).
std::optional<uint64_t> call_seed(const TimingPolicy& policy, uint64_t trial_seed, uint64_t n);

/// The worker's clock around `call`, in µs.
template <class Call>
double host_time_us(Call&& call) {
  auto t0 = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace ptxbench

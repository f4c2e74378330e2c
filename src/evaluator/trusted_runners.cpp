#include "evaluator/trusted_runners.h"

#include <future>
#include <map>

#include "common/error.h"

namespace ptxbench {

namespace {

std::future<TrustedRunner> start_trusted_runner(const RunnerLaunch& launch, SetupRequest setup, std::vector<Fd> fds,
                                                double timeout_s, std::string what) {
  auto start = [session = std::make_unique<RunnerSession>(launch), setup = std::move(setup), fds = std::move(fds), timeout_s,
                what = std::move(what)]() mutable {
    session->wait_ready(timeout_s);
    RunnerReply reply = session->setup(setup, fds, timeout_s);
    if (!reply.ok()) throw EnvironmentError("runner", "the trusted runner could not set up " + what + ": " + reply.failure->error);
    return TrustedRunner{std::move(session), reply.baseline};
  };
  return std::async(std::launch::async, std::move(start));
}

// The baseline's runner: what an honest call costs the worker beyond its span depends on what the
// worker ran on the GPU just before (the GPU switches from the worker's context to a runner's:
// ~150 µs on the H200, RunnerSandbox.TheHostGap...), a little on the call's length, and drifts
// between evaluations by tens of µs; its calls calibrate that.
void start_baseline(const EvalInputs& in, EvalRunners& runners, HostState& host, const RunnerLaunch& launch) {
  WorkloadState::SharedTensors shared = runners.state->shared_tensors(WorkloadState::Side::baseline);
  SetupRequest setup;
  setup.tensors = shared.tensors;
  setup.baseline = baseline_setup(in.workload);
  share_flush_buffer(in, host, setup, shared.fds);
  runners.baseline.starting =
      start_trusted_runner(launch, std::move(setup), std::move(shared.fds), in.options.startup_timeout_s, "the baseline");
}

// The Triton launch probe's runner (docs/triton.md): the candidate's kind of runner (same sandbox,
// same filter, the shim, the candidate's buffers) loading the probe's build instead of the
// candidate's, with a scratch folder of its own.
void start_probe(const EvalInputs& in, EvalRunners& runners, HostState& host, RunnerLaunch launch) {
  const TritonBuildResult& probe = *in.build.launch->probe;
  if (!runners.probe_scratch) runners.probe_scratch = std::make_unique<TempDir>("ptxbench-probe", in.scratch.parent_path());
  launch.scratch = runners.probe_scratch->path();
  launch.readable = {probe.dir};
  launch.readable.insert(launch.readable.end(), in.build.python_dirs.begin(), in.build.python_dirs.end());
  WorkloadState::SharedTensors shared = runners.state->shared_tensors();
  SetupRequest setup;
  setup.library = probe.library().string();
  setup.tensors = shared.tensors;
  setup.triton = true;
  share_flush_buffer(in, host, setup, shared.fds);
  runners.probe.starting = start_trusted_runner(launch, std::move(setup), std::move(shared.fds), in.options.startup_timeout_s,
                                                "the Triton launch probe");
}

}  // namespace

void start_trusted_runners(const EvalInputs& in, EvalRunners& runners, HostState& host, const RunnerLaunch& launch) {
  RunnerLaunch trusted = launch;
  trusted.readable.clear();
  start_baseline(in, runners, host, trusted);
  if (in.build.launch && in.build.launch->probe) start_probe(in, runners, host, launch);
}

void share_flush_buffer(const EvalInputs& in, HostState& host, SetupRequest& setup, std::vector<Fd>& fds) {
  if (!in.options.measure_time || !in.options.timing.runner_l2_flush || in.options.timing.l2_flush_factor <= 0) return;
  const std::size_t bytes = L2Flusher::bytes_for(in.options.timing.l2_flush_factor);
  if (!host.runner_flush || host.runner_flush->bytes() < bytes)
    host.runner_flush = std::make_unique<SharedAllocation>(bytes, in.options.device);
  setup.flush_fd_index = static_cast<int>(fds.size());
  setup.flush_bytes = host.runner_flush->bytes();
  fds.push_back(host.runner_flush->export_fd());
}

std::vector<double> trusted_spans(const RunnerReply& report, const std::vector<uint64_t>& calls, const std::string& name) {
  if (!report.spans) throw EnvironmentError("runner", "the trusted runner of " + name + " reported no spans");
  if (report.spans->dropped_records > 0) throw Error("timing", "CUPTI dropped activity records; the timing is incomplete");
  if (!report.spans->stray.empty())
    throw EnvironmentError("runner", "device work outside " + name + "'s calls: " + report.spans->stray.front());
  std::map<uint64_t, double> by_index;
  for (const auto& a : report.spans->calls)
    if (!a.empty) by_index[a.index] = a.span_us;
  std::vector<double> spans;
  for (uint64_t i : calls) {
    auto it = by_index.find(i);
    if (it == by_index.end()) throw EnvironmentError("runner", "no activity records of " + name + "'s call " + std::to_string(i));
    spans.push_back(it->second);
  }
  return spans;
}

}  // namespace ptxbench

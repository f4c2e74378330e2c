// ptxbench-runner: the sandboxed process that loads one candidate library and runs it. Untrusted
// code lives only here. The worker started us in our own namespaces as an unprivileged user
// (src/sandbox/); before the candidate is loaded we strip our environment and install the
// system-call filter (src/sandbox/seccomp_filter.h), so even its constructors run restricted.
// The worker starts a second, trusted session runner per evaluation that runs the baseline
// instead of a candidate (setup with a baseline): both sides of the comparison are then timed by
// the same kind of process, and the baseline's calls calibrate the worker's host bound. It builds
// the baseline (cuBLASLt, cuDNN) and then installs the same filter, so that its calls pay what
// the candidate's pay (the filter costs ~25 µs a call on the H200 host).
//
//   ptxbench-runner serve --control-fd 3 [--device N]     session driven by the worker (runner/protocol.h)
//   ptxbench-runner once --library L --spec S [--seed N] [--calls C] [--device N] [--sass-counts F]
//                                                          standalone run (under compute-sanitizer / ncu,
//                                                          or counting SASS through CUPTI into F)
//   ptxbench-runner sass-metrics [--device N]              the SASS metrics CUPTI offers here
#include <CLI/CLI.hpp>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

#include "common/control_channel.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "gpu/activity_recorder.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"
#include "gpu/l2_flush.h"
#include "gpu/random_fill.h"
#include "gpu/sass_patching.h"
#include "gpu/shared_allocation.h"
#include "gpu/trial_timer.h"
#include "definitions/definition.h"
#include "definitions/workload.h"
#include "ops/operator.h"
#include "runner/candidate_exit.h"
#include "runner/candidate_library.h"
#include "runner/probe_kernel.h"
#include "runner/protocol.h"
#include "runner/runner_exit.h"
#include "runner/triton_candidate.h"
#include "sandbox/process_traces.h"
#include "sandbox/seccomp_filter.h"

namespace ptxbench {
/// --keep-look: the candidate may read its start-up block and /proc (diagnosis of a tool that needs them).
bool g_keep_look = false;
namespace {

/// Environment, the look at our own start-up and /proc, and system calls are restricted before
/// the candidate's code first runs (its constructors run inside dlopen). A tool's own agent was
/// injected at process start and is not affected by the stripped environment. Returns what the
/// candidate can still see of how the process started (the setup reply records it).
std::string restrict_process(bool seccomp, SeccompProfile profile) {
  clearenv();
  std::string view = g_keep_look ? "kept visible (--keep-look)" : wipe_start_block() + "; /proc " + restrict_proc_view();
  if (seccomp) install_seccomp_filter(profile);
  return view;
}

/// The candidate's arguments: views of the worker's shared buffers (or of our own, standalone).
struct Arguments {
  std::map<int, SharedAllocation> imported;  ///< by descriptor index
  std::vector<DeviceBuffer> owned;
  std::vector<ptxb_tensor> args;
  std::vector<std::pair<void*, std::size_t>> outputs;

  void add(void* data, const TensorSpec& spec) {
    args.push_back(DeviceTensor{data, spec}.view());
    if (spec.is_output) outputs.emplace_back(data, spec.bytes());
  }
};

class Session {
 public:
  Session(ControlChannel& channel, int device, bool seccomp) : m_channel(channel), m_device(device), m_seccomp(seccomp) {}

  /// Device, stream and activity recording; CUPTI's own thread starts here (none may start later).
  void start() {
    PTXB_CUDA_CALL(cudaSetDevice(m_device));
    PTXB_CUDA_CALL(cudaFree(nullptr));  // create the context now, not inside a timed call
    PTXB_CUDA_CALL(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    m_recorder = std::make_unique<ActivityRecorder>();
    launch_probe_kernel(1.0, m_stream);
    PTXB_CUDA_CALL(cudaDeviceSynchronize());
    (void)m_recorder->drain();
  }

  RunnerReply handle(const RunnerRequest& r) {
    switch (r.op) {
      case RunnerOp::setup: return setup(*r.setup);
      case RunnerOp::call: return call(*r.call);
      case RunnerOp::spans: return spans();
      case RunnerOp::exit: break;
    }
    return {};
  }

 private:
  RunnerReply setup(const SetupRequest& s) {
    PTXB_ENSURE(!m_library && !m_baseline && !m_triton, "runner", "setup requested twice");
    std::vector<Fd> fds = m_channel.take_fds();
    for (const auto& t : s.tensors) {
      void* base = nullptr;
      if (t.fd_index >= 0) {
        PTXB_ENSURE(static_cast<std::size_t>(t.fd_index) < fds.size(), "runner", "tensor " + t.spec.name + " names a missing descriptor");
        auto it = m_args.imported.find(t.fd_index);
        if (it == m_args.imported.end())
          it = m_args.imported.emplace(t.fd_index, SharedAllocation::import_fd(fds[t.fd_index].get(), t.alloc_bytes, m_device)).first;
        base = it->second.get();
      } else {
        m_args.owned.emplace_back(t.spec.bytes());
        base = m_args.owned.back().get();
      }
      m_args.add(static_cast<char*>(base) + t.offset, t.spec);
    }
    if (s.flush_fd_index >= 0) {
      PTXB_ENSURE(static_cast<std::size_t>(s.flush_fd_index) < fds.size(), "runner", "the L2 flush buffer names a missing descriptor");
      m_flush_memory = std::make_unique<SharedAllocation>(SharedAllocation::import_fd(fds[s.flush_fd_index].get(), s.flush_bytes, m_device));
      m_flusher = std::make_unique<L2Flusher>(m_flush_memory->get(), s.flush_bytes);
    }
    fds.clear();  // the mappings keep the memory; the descriptors are not the candidate's to keep
    RunnerReply reply;
    if (s.baseline) {
      build_baseline(*s.baseline);
      reply.baseline = m_baseline->name();
    }
    if (s.triton) {
      // The trusted shim starts Python, torch and Triton (threads, processes) before the filter;
      // the candidate's file is imported only under it.
      m_triton = std::make_unique<TritonCandidate>(s.library);
      m_triton->prepare(m_device, m_args.args.data(), static_cast<int32_t>(m_args.args.size()), m_stream);
    }
    reply.proc_view = restrict_process(m_seccomp, SeccompProfile::session);
    if (s.triton) m_triton->load();
    else if (!s.baseline) m_library = std::make_unique<CandidateLibrary>(s.library);
    reply.seccomp = m_seccomp ? to_string(SeccompProfile::session) : "";
    return reply;
  }

  // The workload's frontier baseline, planned here before the filter is installed (cuDNN's
  // runtime-compiled engines are built now, not inside a timed call).
  void build_baseline(const BaselineSetup& b) {
    m_definition = std::make_unique<Definition>(parse_definition(b.definition, "the baseline's definition"));
    ResolvedWorkload resolved = resolve_workload(*m_definition, baseline_workload(b, m_definition->name));
    PTXB_ENSURE(resolved.tensors.size() == m_args.args.size(), "runner",
                "the baseline's workload has " + std::to_string(resolved.tensors.size()) + " tensors, the setup " +
                    std::to_string(m_args.args.size()));
    m_baseline = make_operator(m_definition->op_type)->make_baseline(resolved);
  }

  RunnerReply call(const CallRequest& c) {
    PTXB_ENSURE(c.target == CallTarget::probe || m_library || m_baseline || m_triton, "runner", "call before setup");
    if (m_flusher && c.target == CallTarget::candidate) {  // outside the window: memsets there are never the call's
      m_flusher->flush(m_stream);
      PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
    }
    CallWindow w{c.index, ActivityRecorder::now_ns(), 0};
    auto host_start = std::chrono::steady_clock::now();
    int rc = 0;
    if (c.target == CallTarget::probe) {
      launch_probe_kernel(c.probe_us, m_stream);
    } else if (m_baseline) {
      rc = m_baseline->run(m_args.args.data(), static_cast<int32_t>(m_args.args.size()), m_stream);
    } else {
      CandidateEntry entry = m_triton ? m_triton->entry() : m_library->entry();
      rc = entry(m_args.args.data(), static_cast<int32_t>(m_args.args.size()), m_stream);
    }
    cudaError_t sync = cudaDeviceSynchronize();
    w.end_ns = ActivityRecorder::now_ns();
    m_windows.push_back(w);
    RunnerReply reply;
    reply.wall_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - host_start).count();
    try {
      check_call_result(rc, sync);
    } catch (const CallFailure& e) {
      // A Triton candidate's failure is a Python exception: its traceback is the message.
      std::string what = m_triton && rc != 0 ? m_triton->last_error() : e.what();
      if (m_library && rc != 0) {  // the candidate's own account (ptxb_last_error), when it gives one
        std::string own = m_library->last_error();
        if (!own.empty()) what += ": " + own;
      }
      reply.failure = RunnerFailureInfo{FailureKind::call, e.code, what};
    }
    return reply;
  }

  RunnerReply spans() {
    std::vector<DeviceRecord> records = m_recorder->drain();
    RunnerReply reply;
    Attribution a = attribute_records(records, m_windows);
    m_windows.clear();
    uint64_t dropped = m_recorder->dropped();
    reply.spans = SpansReport{std::move(a.calls), std::move(a.stray), dropped - m_dropped};
    m_dropped = dropped;
    return reply;
  }

  ControlChannel& m_channel;
  int m_device;
  bool m_seccomp;
  cudaStream_t m_stream = nullptr;
  std::unique_ptr<ActivityRecorder> m_recorder;
  std::unique_ptr<CandidateLibrary> m_library;
  std::unique_ptr<TritonCandidate> m_triton;
  std::unique_ptr<Definition> m_definition;
  std::unique_ptr<Baseline> m_baseline;
  std::unique_ptr<SharedAllocation> m_flush_memory;
  std::unique_ptr<L2Flusher> m_flusher;
  Arguments m_args;
  std::vector<CallWindow> m_windows;
  uint64_t m_dropped = 0;
};

int serve(int fd, int device, bool seccomp) {
  ControlChannel channel{Fd(fd)};
  channel.set_spin(0.05);  // requests come within ms of a reply during timing: see them at once
  Session session(channel, device, seccomp);
  RunnerReply ready;
  ready.ready = true;
  try {
    session.start();
  } catch (const std::exception& e) {
    ready.failure = RunnerFailureInfo{FailureKind::infra, 0, e.what()};
  }
  channel.send(to_json(ready));
  if (!ready.ok()) return 0;
  // Candidate code that ends the process (exit, abort) mid-request is answered for: its failure
  // goes out as the reply to that request before the runner ends (candidate_exit.h).
  uint64_t current_seq = 0;
  set_candidate_exit_report([&channel, &current_seq](const CandidateExit& e) {
    RunnerReply failed;
    failed.seq = current_seq;
    failed.failure = RunnerFailureInfo{e.loading ? FailureKind::setup : FailureKind::call, e.code, e.describe()};
    failed.violations = seccomp_violations();
    channel.send(to_json(failed));
  });
  for (;;) {
    RunnerReply reply;
    try {
      RunnerRequest request = runner_request_from_json(channel.receive(-1));
      if (request.op == RunnerOp::exit) return 0;
      current_seq = request.seq;
      reply.seq = request.seq;
      reply = session.handle(request);
      reply.seq = request.seq;
    } catch (const ChannelError&) {
      return 0;  // the worker went away
    } catch (const std::exception& e) {
      reply.failure = RunnerFailureInfo{FailureKind::setup, 0, e.what()};
    }
    reply.violations = seccomp_violations();
    try {
      channel.send(to_json(reply));
    } catch (const ChannelError&) {
      return 0;
    }
  }
}

int once(const std::string& library, const std::string& spec_path, uint64_t seed, int calls, int device,
         const std::string& sass_counts, bool seccomp, bool triton) {
  try {
    // Runtime SASS counting (experimental, docs/verdict.md): CUPTI records nothing in a context
    // that already ran a kernel, and only the first module launched after it starts (seen on the
    // H200). So it starts before anything runs, inputs are generated on the host, and the kernels
    // seen launched (activity records) go with the counts: a launched kernel without counts
    // makes them unavailable, never a verdict.
    std::unique_ptr<SassPatching> patching;
    std::unique_ptr<ActivityRecorder> launches;
    if (!sass_counts.empty()) {
      patching = std::make_unique<SassPatching>(device);
      patching->start();
      launches = std::make_unique<ActivityRecorder>();
    }
    PTXB_CUDA_CALL(cudaSetDevice(device));
    const ordered_json spec_doc = ordered_json::parse(read_file(spec_path)).at("tensors");
    auto specs = tensor_specs_from_json(spec_doc);
    cudaStream_t stream = nullptr;
    PTXB_CUDA_CALL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    Arguments a;
    uint64_t salt = 0;
    for (std::size_t t = 0; t < specs.size(); ++t) {
      const TensorSpec& spec = specs[t];
      a.owned.emplace_back(spec.bytes());
      void* p = a.owned.back().get();
      if (!spec.is_output) {
        uint64_t tensor_seed = derive_seed(seed, salt++);
        if (spec_doc[t].contains("values")) {  // a fixed input (a scalar, an index array): its exact values
          const auto values = spec_doc[t].at("values").get<std::vector<double>>();
          if (static_cast<int64_t>(values.size()) != spec.numel()) throw InputError("runner", "bad values of tensor " + spec.name);
          std::vector<unsigned char> host(spec.bytes());
          fill_values_host(host.data(), spec.dtype, values);
          PTXB_CUDA_CALL(cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice));
        } else if (patching) {
          std::vector<unsigned char> host(spec.bytes());
          fill_normal_host(host.data(), spec.dtype, spec.numel(), tensor_seed);
          PTXB_CUDA_CALL(cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice));
        } else {
          fill_normal(p, spec.dtype, spec.numel(), tensor_seed, stream);
        }
      }
      a.add(p, spec);
    }
    PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
    std::unique_ptr<TritonCandidate> triton_candidate;
    if (triton) {  // trusted: Python, torch and Triton start before the filter (see serve's setup)
      triton_candidate = std::make_unique<TritonCandidate>(library);
      triton_candidate->prepare(device, a.args.data(), static_cast<int32_t>(a.args.size()), stream);
    }
    std::fprintf(stderr, "%s\n", kCandidateLoadedMarker);
    restrict_process(seccomp, SeccompProfile::tool_target);
    std::unique_ptr<CandidateLibrary> lib;
    if (triton_candidate) triton_candidate->load();
    else lib = std::make_unique<CandidateLibrary>(library);
    TimedTarget target;
    CandidateEntry entry = triton_candidate ? triton_candidate->entry() : lib->entry();
    target.call = [&](cudaStream_t s) {
      int rc = entry(a.args.data(), static_cast<int32_t>(a.args.size()), s);
      if (rc != 0 && triton_candidate) std::fprintf(stderr, "ptxbench-runner: %s\n", triton_candidate->last_error().c_str());
      if (rc != 0 && lib && !lib->last_error().empty()) std::fprintf(stderr, "ptxbench-runner: %s\n", lib->last_error().c_str());
      return rc;
    };
    target.poison = [&](cudaStream_t s) {
      for (auto& [ptr, bytes] : a.outputs) PTXB_CUDA_CALL(cudaMemsetAsync(ptr, 0xff, bytes, s));  // NaN
    };
    for (int i = 0; i < calls; ++i) run_checked_call(target, stream);
    if (patching) {
      PTXB_CUDA_CALL(cudaDeviceSynchronize());
      SassCounts counts;
      counts.instructions = patching->stop();
      for (const auto& r : launches->drain())
        if (r.kind == DeviceRecord::Kind::kernel) counts.launched.insert(r.name);
      ordered_json j = to_json(counts);
      j["patched_records"] = patching->last_records();
      j["instances"] = patching->last_instances();
      j["lazy_patching"] = patching->lazy();
      write_file_atomic(sass_counts, j.dump());
    }
    std::vector<std::string> denied = seccomp_violations();
    if (!denied.empty()) {
      std::string names;
      for (const auto& d : denied) names += (names.empty() ? "" : ", ") + d;
      std::fprintf(stderr, "ptxbench-runner: the sandbox denied system calls: %s\n", names.c_str());
      return kRunnerSandboxViolationExit;
    }
    return 0;
  } catch (const CallFailure& e) {
    std::fprintf(stderr, "ptxbench-runner: candidate call failed: %s\n", e.what());
    return kRunnerCallFailedExit;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptxbench-runner: %s\n", e.what());
    return kRunnerSetupFailedExit;
  }
}

int list_sass_metrics(int device) {
  try {
    for (const auto& line : SassPatching::metric_names(device)) std::printf("%s\n", line.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptxbench-runner: %s\n", e.what());
    return kRunnerSetupFailedExit;
  }
}

}  // namespace
}  // namespace ptxbench

int main(int argc, char** argv) {
  CLI::App app{"ptxbench-runner: runs one candidate kernel in a sandboxed process"};
  app.require_subcommand(1);
  int device = 0;
  int control_fd = 3;
  bool no_seccomp = false;
  app.add_flag("--no-seccomp", no_seccomp, "do not install the system-call filter (diagnosis only; never in evaluations)");
  app.add_flag("--keep-look", ptxbench::g_keep_look,
               "leave the start-up block and /proc readable to the candidate (diagnosis only: $PTXBENCH_PROC_VIEW=visible in the worker)");
  auto* serve = app.add_subcommand("serve", "session driven by the worker");
  serve->add_option("--control-fd", control_fd, "socket to the worker");
  serve->add_option("--device", device, "CUDA device index");
  std::string library, spec;
  uint64_t seed = 1;
  int calls = 1;
  auto* once = app.add_subcommand("once", "allocate, fill, call the candidate, exit");
  once->add_option("--library", library, "candidate .so")->required();
  once->add_option("--spec", spec, "tensor spec JSON")->required();
  once->add_option("--seed", seed, "input seed");
  once->add_option("--calls", calls, "number of calls");
  once->add_option("--device", device, "CUDA device index");
  int owner_pid = 0;
  once->add_option("--owner-pid", owner_pid, "exit when this process (the worker that started the tool) is gone");
  bool no_orphan_watch = false;
  once->add_flag("--no-orphan-watch", no_orphan_watch,
                 "in a PID namespace of its own (whose first process is the tool, and whose end ends us)");
  std::string sass_counts;
  once->add_option("--sass-counts", sass_counts, "count executed SASS per instruction (CUPTI) into this JSON file");
  std::string language = "cuda";
  once->add_option("--language", language, "cuda: --library is a candidate; triton: it is the Triton shim of one")
      ->check(CLI::IsMember({"cuda", "triton"}));
  auto* metrics = app.add_subcommand("sass-metrics", "list the SASS metrics CUPTI offers on this GPU");
  metrics->add_option("--device", device, "CUDA device index");
  CLI11_PARSE(app, argc, argv);
  ptxbench::install_candidate_abort_handler();
  // The runner ends through exit_runner, so a candidate's static destructor cannot change its status.
  if (*serve) ptxbench::exit_runner(ptxbench::serve(control_fd, device, !no_seccomp));
  if (*metrics) ptxbench::exit_runner(ptxbench::list_sass_metrics(device));
  // `once` runs under compute-sanitizer or ncu: when the tool or its worker dies (the worker or the
  // service was killed), a hung candidate must not go on holding the GPU. In a PID namespace of
  // its own the kernel ends every process with the first one (the tool), so nothing is watched.
  if (!no_orphan_watch) ptxbench::exit_when_orphaned(0.2, static_cast<pid_t>(owner_pid));
  ptxbench::exit_runner(ptxbench::once(library, spec, seed, calls, device, sass_counts, !no_seccomp, language == "triton"));
}

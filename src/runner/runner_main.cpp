// ptxbench-runner: the sandboxed process that loads one candidate library and runs it. Untrusted
// code lives only here; the worker that started us keeps the reference outputs.
//
//   ptxbench-runner serve --control-fd 3 [--device N]     JSON-lines session driven by the worker
//   ptxbench-runner once --library L --spec S [--seed N] [--calls C] [--device N] [--sass-counts F]
//                                                          standalone run (under compute-sanitizer / ncu,
//                                                          or counting SASS through CUPTI into F)
//   ptxbench-runner sass-metrics [--device N]              the SASS metrics CUPTI offers here
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <vector>

#include "common/fs.h"
#include "common/subprocess.h"
#include "gpu/activity_recorder.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"
#include "gpu/random_fill.h"
#include "gpu/sass_patching.h"
#include "gpu/trial_timer.h"
#include "ops/operator.h"
#include "runner/candidate_library.h"
#include "common/control_channel.h"
#include "runner/runner_exit.h"
#include "runner/tensor_wire.h"

namespace ptxbench {
namespace {

struct Session {
  std::unique_ptr<CandidateLibrary> library;
  std::vector<void*> ipc_bases;
  std::vector<DeviceBuffer> owned;
  std::vector<ptxb_tensor> args;
  std::vector<std::pair<void*, std::size_t>> outputs;
  cudaStream_t stream = nullptr;
  TimingPolicy policy;
  std::unique_ptr<L2Flusher> flusher;
  std::unique_ptr<ActivityRecorder> recorder;

  ~Session() {
    for (void* p : ipc_bases) cudaIpcCloseMemHandle(p);
  }

  TimedTarget target() {
    TimedTarget t;
    CandidateEntry entry = library->entry();
    t.call = [this, entry](cudaStream_t s) { return entry(args.data(), static_cast<int32_t>(args.size()), s); };
    t.poison = [this](cudaStream_t s) {
      for (auto& [ptr, bytes] : outputs) PTXB_CUDA_CALL(cudaMemsetAsync(ptr, 0xff, bytes, s));  // NaN
    };
    return t;
  }

  void add_tensor(void* data, const TensorSpec& spec) {
    args.push_back(DeviceTensor{data, spec}.view());
    if (spec.is_output) outputs.emplace_back(data, spec.bytes());
  }
};

ordered_json handle(Session& s, const ordered_json& msg) {
  std::string op = msg.at("op").get<std::string>();
  if (op == "setup") {
    s.library = std::make_unique<CandidateLibrary>(msg.at("library").get<std::string>());
    PTXB_CUDA_CALL(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    for (const auto& j : msg.at("tensors")) {
      WireTensor t = wire_tensor_from_json(j);
      void* base = nullptr;
      if (t.ipc) {
        PTXB_CUDA_CALL(cudaIpcOpenMemHandle(&base, *t.ipc, cudaIpcMemLazyEnablePeerAccess));
        s.ipc_bases.push_back(base);
      } else {
        s.owned.emplace_back(t.spec.bytes());
        base = s.owned.back().get();
      }
      s.add_tensor(static_cast<char*>(base) + t.offset, t.spec);
    }
    const auto& p = msg.at("policy");
    s.policy.warmup_calls = p.at("warmup_calls").get<int>();
    s.policy.timed_calls = p.at("timed_calls").get<int>();
    s.policy.l2_flush_factor = p.at("l2_flush_factor").get<double>();
    s.policy.poison_timed_calls = p.at("poison_timed_calls").get<bool>();
    return {{"ok", true}};
  }
  if (op == "run") {
    auto t0 = std::chrono::steady_clock::now();
    run_checked_call(s.target(), s.stream);
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    return {{"ok", true}, {"wall_us", us}};
  }
  if (op == "time") {
    if (!s.flusher) s.flusher = std::make_unique<L2Flusher>(s.policy.l2_flush_factor);
    if (!s.recorder) s.recorder = std::make_unique<ActivityRecorder>();
    TrialTiming t = run_timed_calls(s.target(), msg.at("warmup").get<int>(), msg.at("calls").get<int>(),
                                    s.policy.poison_timed_calls, *s.flusher, *s.recorder, s.stream);
    return {{"ok", true},
            {"spans_us", t.spans_us},
            {"kernels", std::vector<std::string>(t.kernel_names.begin(), t.kernel_names.end())},
            {"stray", t.stray_kernels},
            {"empty_calls", t.empty_calls},
            {"dropped_records", t.dropped_records}};
  }
  throw Error("runner", "unknown op '" + op + "'");
}

int serve(int fd, int device) {
  ControlChannel channel(fd);
  Session session;
  bool device_ok = true;
  try {
    PTXB_CUDA_CALL(cudaSetDevice(device));
    PTXB_CUDA_CALL(cudaFree(nullptr));  // create the context now, not inside a timed call
  } catch (const std::exception& e) {
    device_ok = false;
    channel.send({{"ok", false}, {"kind", "infra"}, {"error", e.what()}});
  }
  if (device_ok) channel.send({{"ok", true}, {"ready", true}});
  for (;;) {
    ordered_json msg;
    try {
      msg = channel.receive(-1);
    } catch (const ChannelError&) {
      return 0;  // the worker went away
    }
    if (msg.value("op", "") == "exit") return 0;
    try {
      channel.send(handle(session, msg));
    } catch (const CallFailure& e) {
      channel.send({{"ok", false}, {"kind", "call"}, {"code", e.code}, {"error", e.what()}});
    } catch (const std::exception& e) {
      channel.send({{"ok", false}, {"kind", "setup"}, {"error", e.what()}});
    }
  }
}

int once(const std::string& library, const std::string& spec_path, uint64_t seed, int calls, int device,
         const std::string& sass_counts) {
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
    auto specs = tensor_specs_from_json(ordered_json::parse(read_file(spec_path)).at("tensors"));
    Session s;
    s.library = std::make_unique<CandidateLibrary>(library);
    PTXB_CUDA_CALL(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    uint64_t salt = 0;
    for (const auto& spec : specs) {
      s.owned.emplace_back(spec.bytes());
      void* p = s.owned.back().get();
      if (!spec.is_output) {
        uint64_t tensor_seed = derive_seed(seed, salt++);
        if (patching) {
          std::vector<unsigned char> host(spec.bytes());
          fill_normal_host(host.data(), spec.dtype, spec.numel(), tensor_seed);
          PTXB_CUDA_CALL(cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice));
        } else {
          fill_normal(p, spec.dtype, spec.numel(), tensor_seed, s.stream);
        }
      }
      s.add_tensor(p, spec);
    }
    PTXB_CUDA_CALL(cudaStreamSynchronize(s.stream));
    for (int i = 0; i < calls; ++i) run_checked_call(s.target(), s.stream);
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
  auto* serve = app.add_subcommand("serve", "JSON-lines session driven by the worker");
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
  std::string sass_counts;
  once->add_option("--sass-counts", sass_counts, "count executed SASS per instruction (CUPTI) into this JSON file");
  auto* metrics = app.add_subcommand("sass-metrics", "list the SASS metrics CUPTI offers on this GPU");
  metrics->add_option("--device", device, "CUDA device index");
  CLI11_PARSE(app, argc, argv);
  if (*serve) return ptxbench::serve(control_fd, device);
  if (*metrics) return ptxbench::list_sass_metrics(device);
  // `once` runs under compute-sanitizer or ncu: when the tool or its worker dies (the worker or the
  // service was killed), a hung candidate must not go on holding the GPU.
  ptxbench::exit_when_orphaned(0.2, static_cast<pid_t>(owner_pid));
  return ptxbench::once(library, spec, seed, calls, device, sass_counts);
}

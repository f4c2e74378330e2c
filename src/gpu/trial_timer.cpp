#include "gpu/trial_timer.h"

#include <algorithm>

#include "gpu/cuda_call.h"

namespace ptxbench {
namespace {

struct Window {
  uint64_t begin, end;
};

}  // namespace

// The candidate's own return code first, then what the device says after the synchronize.
void check_call_result(int rc, cudaError_t sync) {
  if (rc != 0)
    throw CallFailure(rc, std::string("returned ") + std::to_string(rc) + " (" +
                              cudaGetErrorName(static_cast<cudaError_t>(rc)) + ")");
  if (sync != cudaSuccess)
    throw CallFailure(sync, std::string("the device reported ") + cudaGetErrorName(sync) + ": " +
                                cudaGetErrorString(sync));
}

namespace {

Window timed_call(const TimedTarget& target, L2Flusher& flusher, cudaStream_t stream) {
  if (target.poison) target.poison(stream);
  flusher.flush(stream);
  PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
  Window w{ActivityRecorder::now_ns(), 0};
  int rc = target.call(stream);
  cudaError_t sync = cudaDeviceSynchronize();
  w.end = ActivityRecorder::now_ns();
  check_call_result(rc, sync);
  return w;
}

}  // namespace

void run_checked_call(const TimedTarget& target, cudaStream_t stream) {
  if (target.poison) target.poison(stream);
  int rc = target.call(stream);
  check_call_result(rc, cudaDeviceSynchronize());
}

void append_timing(TrialTiming& into, const TrialTiming& part) {
  into.spans_us.insert(into.spans_us.end(), part.spans_us.begin(), part.spans_us.end());
  into.kernel_names.insert(part.kernel_names.begin(), part.kernel_names.end());
  into.stray_kernels.insert(into.stray_kernels.end(), part.stray_kernels.begin(), part.stray_kernels.end());
  into.empty_calls += part.empty_calls;
  into.dropped_records += part.dropped_records;
}

TrialTiming run_timed_calls(const TimedTarget& target, int warmup, int calls, bool poison, L2Flusher& flusher,
                            ActivityRecorder& recorder, cudaStream_t stream) {
  TimedTarget t = target;
  if (!poison) t.poison = nullptr;
  for (int i = 0; i < warmup; ++i) timed_call(t, flusher, stream);
  (void)recorder.drain();
  uint64_t dropped_before = recorder.dropped();

  std::vector<CallWindow> windows;
  windows.reserve(static_cast<std::size_t>(calls));
  for (int i = 0; i < calls; ++i) {
    Window w = timed_call(t, flusher, stream);
    windows.push_back({static_cast<uint64_t>(i), w.begin, w.end});
  }
  Attribution a = attribute_records(recorder.drain(), windows);

  TrialTiming out;
  out.dropped_records = recorder.dropped() - dropped_before;
  for (const auto& call : a.calls) {
    if (call.empty) ++out.empty_calls;
    out.spans_us.push_back(call.span_us);
    for (const auto& k : call.kernels) out.kernel_names.insert(k.name);
  }
  out.stray_kernels = a.stray;
  return out;
}

}  // namespace ptxbench

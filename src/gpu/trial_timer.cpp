#include "gpu/trial_timer.h"

#include <algorithm>

#include "gpu/cuda_call.h"

namespace ptxbench {
namespace {

struct Window {
  uint64_t begin, end;
};

// The candidate's own return code first, then what the device says after the synchronize.
void check_call(int rc, cudaError_t sync) {
  if (rc != 0)
    throw CallFailure(rc, std::string("returned ") + std::to_string(rc) + " (" +
                              cudaGetErrorName(static_cast<cudaError_t>(rc)) + ")");
  if (sync != cudaSuccess)
    throw CallFailure(sync, std::string("the device reported ") + cudaGetErrorName(sync) + ": " +
                                cudaGetErrorString(sync));
}

Window timed_call(const TimedTarget& target, L2Flusher& flusher, cudaStream_t stream) {
  if (target.poison) target.poison(stream);
  flusher.flush(stream);
  PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
  Window w{ActivityRecorder::now_ns(), 0};
  int rc = target.call(stream);
  cudaError_t sync = cudaDeviceSynchronize();
  w.end = ActivityRecorder::now_ns();
  check_call(rc, sync);
  return w;
}

}  // namespace

void run_checked_call(const TimedTarget& target, cudaStream_t stream) {
  if (target.poison) target.poison(stream);
  int rc = target.call(stream);
  check_call(rc, cudaDeviceSynchronize());
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

  std::vector<Window> windows;
  windows.reserve(static_cast<std::size_t>(calls));
  for (int i = 0; i < calls; ++i) windows.push_back(timed_call(t, flusher, stream));
  std::vector<DeviceRecord> records = recorder.drain();

  TrialTiming out;
  out.dropped_records = recorder.dropped() - dropped_before;
  std::vector<uint64_t> first(windows.size(), UINT64_MAX), last(windows.size(), 0);
  std::set<std::string> stray;
  for (const auto& r : records) {
    if (r.start_ns == 0 || r.end_ns < r.start_ns) continue;  // incomplete record
    // A call's own work starts inside its window (after the host timestamp, by at least the
    // launch latency). Work that only overlaps a window's start is our preceding flush/poison
    // memset seen through clock skew; a kernel or copy there is still charged to the call.
    auto it = std::find_if(windows.begin(), windows.end(),
                           [&](const Window& w) { return r.start_ns >= w.begin && r.start_ns < w.end; });
    if (it == windows.end() && r.kind != DeviceRecord::Kind::memset)
      it = std::find_if(windows.begin(), windows.end(),
                        [&](const Window& w) { return r.start_ns < w.end && r.end_ns > w.begin; });
    if (it == windows.end()) {
      // Outside every call: our own poison and flush are memsets; anything else is the candidate's.
      if (r.kind != DeviceRecord::Kind::memset)
        stray.insert(r.kind == DeviceRecord::Kind::kernel ? r.name : std::string("(memcpy)"));
      continue;
    }
    auto i = static_cast<std::size_t>(it - windows.begin());
    first[i] = std::min(first[i], r.start_ns);
    last[i] = std::max(last[i], r.end_ns);
    if (r.kind == DeviceRecord::Kind::kernel) out.kernel_names.insert(r.name);
  }
  for (std::size_t i = 0; i < windows.size(); ++i) {
    if (first[i] == UINT64_MAX) {
      ++out.empty_calls;
      out.spans_us.push_back(0.0);
    } else {
      out.spans_us.push_back(static_cast<double>(last[i] - first[i]) * 1e-3);
    }
  }
  out.stray_kernels.assign(stray.begin(), stray.end());
  return out;
}

}  // namespace ptxbench

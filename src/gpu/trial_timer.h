// One timing trial (docs/design.md §4): for each call, poison outputs and overwrite 2×L2 on the stream,
// wait for that, then time the call as the device span of all activity (any stream, any host
// thread) between the host timestamps before the call and after a device-wide synchronize.
// The same code times candidates (in the runner) and baselines (in the worker).
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "gpu/activity_recorder.h"
#include "gpu/l2_flush.h"
#include "timing/timing_policy.h"

namespace ptxbench {

struct TimedTarget {
  std::function<int(cudaStream_t)> call;      ///< returns 0, or an error code
  std::function<void(cudaStream_t)> poison;   ///< optional: fill outputs with NaN
};

struct TrialTiming {
  std::vector<double> spans_us;          ///< one per timed call
  std::set<std::string> kernel_names;    ///< kernels seen inside the calls
  std::vector<std::string> stray_kernels;  ///< kernels or copies that ran outside every call
  int empty_calls = 0;                   ///< calls with no device activity at all
  uint64_t dropped_records = 0;
};

/// Thrown when the target returns nonzero or the device reports an error during a call.
struct CallFailure : std::runtime_error {
  CallFailure(int code, const std::string& what) : std::runtime_error(what), code(code) {}
  int code;
};

/// `warmup` untimed calls, then `calls` timed calls (either may be 0), each prepared as above.
TrialTiming run_timed_calls(const TimedTarget& target, int warmup, int calls, bool poison, L2Flusher& flusher,
                            ActivityRecorder& recorder, cudaStream_t stream);

/// Appends `part` (a later block of the same trial) to `into`.
void append_timing(TrialTiming& into, const TrialTiming& part);

/// Throws CallFailure when the call returned nonzero (its code first) or the device reported an
/// error at the synchronize after it.
void check_call_result(int rc, cudaError_t sync);

/// Runs the target once with poisoning and a device-wide synchronize; throws CallFailure.
void run_checked_call(const TimedTarget& target, cudaStream_t stream);

}  // namespace ptxbench

// Device activity of this process through CUPTI's activity API: every kernel, memcpy and memset
// with device start/end timestamps (ns, the cuptiGetTimestamp clock). The timing loop attributes
// records to calls by host time windows, so work from any stream or host thread is counted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "timing/call_activity.h"

namespace ptxbench {

/// Process-wide: at most one recorder at a time (CUPTI's activity buffers are global).
class ActivityRecorder {
 public:
  ActivityRecorder();
  ~ActivityRecorder();
  ActivityRecorder(const ActivityRecorder&) = delete;
  ActivityRecorder& operator=(const ActivityRecorder&) = delete;

  /// The CUPTI clock, comparable with record timestamps.
  [[nodiscard]] static uint64_t now_ns();
  /// Flushes CUPTI's buffers and returns (and forgets) every record collected so far.
  std::vector<DeviceRecord> drain();
  /// Records CUPTI reported as dropped (buffer overflow); nonzero makes a timing invalid.
  [[nodiscard]] uint64_t dropped() const;
};

}  // namespace ptxbench

// Device activity of this process through CUPTI's activity API: every kernel, memcpy and memset
// with device start/end timestamps (ns, the cuptiGetTimestamp clock). The timing loop attributes
// records to calls by host time windows, so work from any stream or host thread is counted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench {

struct DeviceRecord {
  enum class Kind { kernel, memcpy, memset };
  Kind kind = Kind::kernel;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  std::string name;  ///< mangled kernel name (kernels only)
  uint32_t stream = 0;
};

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

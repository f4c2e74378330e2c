// Cold-L2 helper: overwrites a scratch buffer of (factor × L2 size) bytes before a timed call
// (nvbench's l2flush, sized per DESIGN §4: at least 2× L2).
#pragma once

#include <cuda_runtime.h>

#include "gpu/device_buffer.h"

namespace ptxbench {

class L2Flusher {
 public:
  /// Reads the L2 size of the current device.
  explicit L2Flusher(double factor);
  /// Enqueues the overwrite on `stream` (a memset, so it never shows up as a kernel).
  void flush(cudaStream_t stream);
  [[nodiscard]] std::size_t bytes() const noexcept { return m_buffer.bytes(); }

 private:
  DeviceBuffer m_buffer;
  int m_value = 0;
};

}  // namespace ptxbench

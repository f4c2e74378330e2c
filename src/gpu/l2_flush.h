// Cold-L2 helper: overwrites a scratch buffer of (factor × L2 size) bytes before a timed call
// (nvbench's l2flush, sized per docs/design.md §4: at least 2× L2): its own buffer, or memory shared
// with another process (the runners' common flush buffer, docs/verdict.md "Timing method").
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpu/device_buffer.h"

namespace ptxbench {

class L2Flusher {
 public:
  /// factor × the current device's L2 size, at least 1 MiB.
  static std::size_t bytes_for(double factor);
  /// Owns a buffer of bytes_for(factor).
  explicit L2Flusher(double factor);
  /// Overwrites `bytes` at `data`, which the caller keeps alive.
  L2Flusher(void* data, std::size_t bytes) : m_data(data), m_bytes(bytes) {}
  /// Enqueues the overwrite on `stream` (a memset, so it never shows up as a kernel).
  void flush(cudaStream_t stream);
  [[nodiscard]] std::size_t bytes() const noexcept { return m_bytes; }

 private:
  DeviceBuffer m_buffer;
  void* m_data = nullptr;
  std::size_t m_bytes = 0;
  int m_value = 0;
};

}  // namespace ptxbench

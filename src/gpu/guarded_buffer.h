// A device allocation with guard bands before and after the payload, filled with a known byte,
// so a write out of bounds (one the sanitizer run missed) is still caught. Shared with a runner
// by handing over a file descriptor (gpu/shared_allocation.h).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "gpu/shared_allocation.h"

namespace ptxbench {

class GuardedBuffer {
 public:
  static constexpr unsigned char kGuardByte = 0xa5;
  /// On the current device.
  GuardedBuffer(std::size_t payload_bytes, std::size_t guard_bytes);

  [[nodiscard]] void* data() const noexcept { return static_cast<char*>(m_alloc.get()) + m_guard; }
  [[nodiscard]] std::size_t payload_bytes() const noexcept { return m_payload; }
  [[nodiscard]] std::size_t offset() const noexcept { return m_guard; }
  /// The whole allocation (guards included), for a runner to map.
  [[nodiscard]] const SharedAllocation& allocation() const noexcept { return m_alloc; }

  void fill_guards(cudaStream_t stream);
  /// Empty when both guards are intact, else which one was written (synchronizes `stream`).
  [[nodiscard]] std::string check_guards(cudaStream_t stream) const;

 private:
  SharedAllocation m_alloc;
  std::size_t m_payload;
  std::size_t m_guard;
};

}  // namespace ptxbench

// A device allocation with guard bands before and after the payload, filled with a known byte,
// so a write out of bounds (one the sanitizer run missed) is still caught. Shareable by CUDA IPC.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "gpu/device_buffer.h"

namespace ptxbench {

class GuardedBuffer {
 public:
  static constexpr unsigned char kGuardByte = 0xa5;
  GuardedBuffer(std::size_t payload_bytes, std::size_t guard_bytes);

  [[nodiscard]] void* data() const noexcept { return static_cast<char*>(m_alloc.get()) + m_guard; }
  [[nodiscard]] std::size_t payload_bytes() const noexcept { return m_payload; }
  [[nodiscard]] std::size_t offset() const noexcept { return m_guard; }
  [[nodiscard]] cudaIpcMemHandle_t ipc_handle() const;

  void fill_guards(cudaStream_t stream);
  /// Empty when both guards are intact, else which one was written (synchronizes `stream`).
  [[nodiscard]] std::string check_guards(cudaStream_t stream) const;

 private:
  DeviceBuffer m_alloc;
  std::size_t m_payload;
  std::size_t m_guard;
};

}  // namespace ptxbench

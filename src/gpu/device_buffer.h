// RAII device memory. Move-only; freeing never throws.
#pragma once

#include <cstddef>
#include <utility>

namespace ptxbench {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : m_ptr(std::exchange(o.m_ptr, nullptr)), m_bytes(o.m_bytes) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;

  [[nodiscard]] void* get() const noexcept { return m_ptr; }
  template <typename T>
  [[nodiscard]] T* as() const noexcept { return static_cast<T*>(m_ptr); }
  [[nodiscard]] std::size_t bytes() const noexcept { return m_bytes; }

 private:
  void* m_ptr = nullptr;
  std::size_t m_bytes = 0;
};

}  // namespace ptxbench

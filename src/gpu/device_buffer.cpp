#include "gpu/device_buffer.h"

#include "gpu/cuda_call.h"

namespace ptxbench {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : m_bytes(bytes) {
  if (bytes) PTXB_CUDA_CALL(cudaMalloc(&m_ptr, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (m_ptr) PTXB_CUDA_CALL_NOEXCEPT(cudaFree(m_ptr));
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (m_ptr) PTXB_CUDA_CALL_NOEXCEPT(cudaFree(m_ptr));
    m_ptr = std::exchange(o.m_ptr, nullptr);
    m_bytes = o.m_bytes;
  }
  return *this;
}

}  // namespace ptxbench

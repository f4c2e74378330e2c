#include "gpu/guarded_buffer.h"

#include <vector>

#include "gpu/cuda_call.h"

namespace ptxbench {

namespace {
int current_device() {
  int device = 0;
  PTXB_CUDA_CALL(cudaGetDevice(&device));
  return device;
}
}  // namespace

GuardedBuffer::GuardedBuffer(std::size_t payload, std::size_t guard)
    : m_alloc(payload + 2 * guard, current_device()), m_payload(payload), m_guard(guard) {}

void GuardedBuffer::fill_guards(cudaStream_t stream) {
  if (!m_guard) return;
  char* base = static_cast<char*>(m_alloc.get());
  PTXB_CUDA_CALL(cudaMemsetAsync(base, kGuardByte, m_guard, stream));
  PTXB_CUDA_CALL(cudaMemsetAsync(base + m_guard + m_payload, kGuardByte, m_guard, stream));
}

std::string GuardedBuffer::check_guards(cudaStream_t stream) const {
  if (!m_guard) return "";
  std::vector<unsigned char> host(2 * m_guard);
  const char* base = static_cast<const char*>(m_alloc.get());
  PTXB_CUDA_CALL(cudaMemcpyAsync(host.data(), base, m_guard, cudaMemcpyDeviceToHost, stream));
  PTXB_CUDA_CALL(cudaMemcpyAsync(host.data() + m_guard, base + m_guard + m_payload, m_guard,
                                 cudaMemcpyDeviceToHost, stream));
  PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
  std::string where;
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (host[i] == kGuardByte) continue;
    bool before = i < m_guard;
    long offset = before ? -static_cast<long>(m_guard - i) : static_cast<long>(i - m_guard);
    where = before ? "before the start (byte offset " + std::to_string(offset) + ")"
                   : "past the end (byte " + std::to_string(offset) + " after the last element)";
    break;
  }
  return where;
}

}  // namespace ptxbench

#include "gpu/l2_flush.h"

#include <algorithm>

#include "gpu/cuda_call.h"

namespace ptxbench {

std::size_t L2Flusher::bytes_for(double factor) {
  int device = 0, l2 = 0;
  PTXB_CUDA_CALL(cudaGetDevice(&device));
  PTXB_CUDA_CALL(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  return std::max<std::size_t>(static_cast<std::size_t>(factor * static_cast<double>(l2)), 1 << 20);
}

L2Flusher::L2Flusher(double factor) : m_buffer(bytes_for(factor)), m_data(m_buffer.get()), m_bytes(m_buffer.bytes()) {}

void L2Flusher::flush(cudaStream_t stream) {
  m_value ^= 0x5a;  // a changing value, so no layer can skip an identical rewrite
  PTXB_CUDA_CALL(cudaMemsetAsync(m_data, m_value, m_bytes, stream));
}

}  // namespace ptxbench

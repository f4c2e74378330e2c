#include "gpu/l2_flush.h"

#include "gpu/cuda_call.h"

namespace ptxbench {

L2Flusher::L2Flusher(double factor) {
  int device = 0, l2 = 0;
  PTXB_CUDA_CALL(cudaGetDevice(&device));
  PTXB_CUDA_CALL(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  auto bytes = static_cast<std::size_t>(factor * static_cast<double>(l2));
  m_buffer = DeviceBuffer(std::max<std::size_t>(bytes, 1 << 20));
}

void L2Flusher::flush(cudaStream_t stream) {
  m_value ^= 0x5a;  // a changing value, so no layer can skip an identical rewrite
  PTXB_CUDA_CALL(cudaMemsetAsync(m_buffer.get(), m_value, m_buffer.bytes(), stream));
}

}  // namespace ptxbench

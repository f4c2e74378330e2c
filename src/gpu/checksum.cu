#include "gpu/checksum.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"

namespace ptxbench {
namespace {

__device__ inline uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

// Sum of mix(word ^ position): a changed word or a swap of two words changes the sum.
__global__ void ptxb_internal_checksum(const unsigned char* data, std::size_t bytes, unsigned long long* out) {
  uint64_t local = 0;
  std::size_t words = bytes / 8;
  const uint64_t* w = reinterpret_cast<const uint64_t*>(data);
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words; i += std::size_t(gridDim.x) * blockDim.x)
    local += mix(w[i] ^ (i * 0x9e3779b97f4a7c15ull));
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (std::size_t i = words * 8; i < bytes; ++i) local += mix(uint64_t(data[i]) ^ (i << 32));
  atomicAdd(out, static_cast<unsigned long long>(local));
}

}  // namespace

uint64_t device_checksum(const void* data, std::size_t bytes, cudaStream_t stream) {
  DeviceBuffer result(sizeof(unsigned long long));
  PTXB_CUDA_CALL(cudaMemsetAsync(result.get(), 0, result.bytes(), stream));
  ptxb_internal_checksum<<<264, 256, 0, stream>>>(static_cast<const unsigned char*>(data), bytes,
                                                   result.as<unsigned long long>());
  PTXB_CUDA_CALL(cudaGetLastError());
  unsigned long long host = 0;
  PTXB_CUDA_CALL(cudaMemcpyAsync(&host, result.get(), sizeof host, cudaMemcpyDeviceToHost, stream));
  PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace ptxbench

// Warp-level building blocks of the trusted row references (reference_rows.cu, gqa_reference.cu):
// blocks of 256 threads, reductions by shuffles within a warp, every lane getting the result.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace ptxbench::warp_math {

using bf16 = __nv_bfloat16;
constexpr int kWarp = 32;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / kWarp;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// a · b over n elements, split across the warp's lanes in fp32; every lane gets the sum.
__device__ __forceinline__ float warp_dot(const bf16* a, const bf16* b, int64_t n) {
  float acc = 0.0f;
  for (int64_t k = threadIdx.x % kWarp; k < n; k += kWarp) acc += __bfloat162float(a[k]) * __bfloat162float(b[k]);
  return warp_sum(acc);
}

}  // namespace ptxbench::warp_math

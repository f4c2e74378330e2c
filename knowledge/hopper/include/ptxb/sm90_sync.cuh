// ptxb Hopper templates: intra-CTA synchronisation for warp-specialised kernels.
#pragma once
#include <cstdint>

namespace ptxb {

/// @brief Named barrier `id` (1..15; 0 is __syncthreads) for `threads` threads (multiple of 32).
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/// @brief Arrive on named barrier `id` without waiting (producer side of a named-barrier handshake).
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/// @brief True in exactly one active lane of the warp (all lanes must call it).
__device__ __forceinline__ bool elect_one() {
  uint32_t pred;
  asm volatile("{\n .reg .b32 lane;\n .reg .pred p;\n elect.sync lane|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(pred));
  return pred != 0;
}

/// @brief Warpgroup index of the calling thread (threadIdx.x / 128), made warp-uniform for the compiler.
__device__ __forceinline__ int warpgroup_index() {
  return __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x) / 128, 0);
}

}  // namespace ptxb

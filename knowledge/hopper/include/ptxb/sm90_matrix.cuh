// ptxb Hopper templates: warp-wide 8×8 b16 matrix loads and stores (ldmatrix / stmatrix), e.g. to move
// accumulators to shared memory for a TMA-store epilogue. Lane L supplies the row address of matrix
// L / 8, row L % 8 (16-byte aligned); register i holds matrix i's element pair (row lane/4, cols 2·(lane%4)).
#pragma once
#include <cstdint>

#include "sm90_mbarrier.cuh"

namespace ptxb {

/// @brief Load four 8×8 b16 matrices.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_addr))
               : "memory");
}

/// @brief Load four 8×8 b16 matrices transposed.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_addr))
               : "memory");
}

/// @brief Store four 8×8 b16 matrices (ordinary generic-proxy writes: fence before a TMA store reads them).
__device__ __forceinline__ void stmatrix_x4(void* row_addr, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.x4.m8n8.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem_addr(row_addr)),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

/// @brief Store four 8×8 b16 matrices transposed.
__device__ __forceinline__ void stmatrix_x4_trans(void* row_addr, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.x4.trans.m8n8.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem_addr(row_addr)),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

/// @brief Pack two floats into a bf16x2 register (lo in the low half), as wgmma A operands and stmatrix expect.
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

}  // namespace ptxb

// ptxb Hopper templates: the bulk tensor copy engine (TMA). Tensor maps are made on the host and
// passed to kernels by value as `const __grid_constant__ CUtensorMap`.
#pragma once
#include <cuda.h>
#include <cstdint>

#include "sm90_mbarrier.cuh"

namespace ptxb {

/// @brief Host: describe a row-major 2-D tensor of `outer` rows × `inner` elements (row pitch
/// `row_stride_bytes`, a multiple of 16) whose tiles are box_outer rows × box_inner elements.
/// With a swizzle, box_inner × element size must equal the swizzle span (128 B for SWIZZLE_128B).
inline CUresult make_tensor_map_2d(CUtensorMap* map, CUtensorMapDataType dtype, const void* base, uint64_t inner,
                                   uint64_t outer, uint64_t row_stride_bytes, uint32_t box_inner, uint32_t box_outer,
                                   CUtensorMapSwizzle swizzle) {
  cuuint64_t dims[2] = {inner, outer};
  cuuint64_t strides[1] = {row_stride_bytes};
  cuuint32_t box[2] = {box_inner, box_outer};
  cuuint32_t elem_strides[2] = {1, 1};
  return cuTensorMapEncodeTiled(map, dtype, 2, const_cast<void*>(base), dims, strides, box, elem_strides,
                                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

/// @brief Load the box at (x_inner, y_outer) into shared memory; completion adds its bytes to `bar`'s
/// transaction count (arm `bar` with mbarrier_arrive_expect_tx for the sum of all boxes of the phase).
__device__ __forceinline__ void tma_load_2d(void* smem, const CUtensorMap* map, uint64_t* bar, int32_t x_inner,
                                            int32_t y_outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
          smem_addr(smem)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(x_inner), "r"(y_outer)
      : "memory");
}

/// @brief Like tma_load_2d, but the box lands at the same offset in every CTA of the cluster whose bit
/// is set in `cta_mask`, and completes on each of their barriers at `bar`'s offset.
__device__ __forceinline__ void tma_load_2d_multicast(void* smem, const CUtensorMap* map, uint64_t* bar,
                                                      int32_t x_inner, int32_t y_outer, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_addr(smem)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(x_inner), "r"(y_outer), "h"(cta_mask)
      : "memory");
}

/// @brief Store a shared-memory box to global at (x_inner, y_outer). Precede it by fence_proxy_async_shared
/// in every thread that wrote the box and a barrier; follow it by tma_store_commit / tma_store_wait.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* smem, int32_t x_inner,
                                             int32_t y_outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(smem_addr(smem)), "r"(x_inner), "r"(y_outer)
               : "memory");
}

/// @brief Close the current group of TMA stores.
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

/// @brief Wait until at most `Pending` committed store groups still read shared memory (0: all done reading).
template <int Pending>
__device__ __forceinline__ void tma_store_wait() {
  static_assert(Pending >= 0 && Pending <= 7, "bulk wait_group depth is 0..7");
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(Pending) : "memory");
}

/// @brief Prefetch a tensor map into the descriptor cache (one thread, early in the kernel).
__device__ __forceinline__ void tma_prefetch_descriptor(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

}  // namespace ptxb

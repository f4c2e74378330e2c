// ptxb Blackwell (sm_100a) templates: the asynchronous tensor-core operations of tcgen05 —
// tcgen05.mma (bf16/f16 inputs, fp32 or f16 accumulator in TMEM), tcgen05.cp (shared memory -> TMEM)
// and tcgen05.commit (completion of both, signalled on an mbarrier).
//
// tcgen05.mma, .cp and .commit have single-thread semantics: ONE thread issues them (guard with
// `if (threadIdx.x == k)` or elect.sync), unlike wgmma. They run asynchronously; the only way to
// learn that they finished is tcgen05_commit(bar) from the issuing thread followed by an mbarrier
// wait (then tcgen05_fence_after_thread_sync()) in the thread that uses the result.
// Shared-memory operands are read through the async proxy: after writing them with ordinary stores,
// execute fence.proxy.async.shared::cta and a barrier before the MMA/cp is issued (TMA writes need none).
#pragma once
#include <cstdint>

#include "sm100_desc.cuh"
#include "sm100_tmem.cuh"

namespace ptxb {

/// @brief D[d_tmem] = A*B (+ D if `accumulate`) for one M x N x 16 tile, A and B in shared memory
/// (descriptors from make_sm100_smem_desc), D fp32/f16 in TMEM at lanes 0..M-1 (M = 128: lane i = row
/// i, column j = D column j). `Idesc` comes from make_idesc_f16<M, N, ...>(). One thread issues it.
template <uint32_t Idesc>
__device__ __forceinline__ void tcgen05_mma_f16_ss(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, bool accumulate) {
  static_assert(idesc_f16_valid(Idesc), "tcgen05.mma kind::f16: illegal instruction descriptor");
  asm volatile(
      "{\n .reg .pred acc;\n setp.ne.b32 acc, %4, 0;\n"
      " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, acc;\n}\n" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(Idesc), "r"(static_cast<uint32_t>(accumulate))
      : "memory");
}

/// @brief As tcgen05_mma_f16_ss but A (M x 16, K-major, 16-bit elements packed two per column) is read
/// from TMEM at `a_tmem` (e.g. the softmax P tile of attention). One thread issues it.
template <uint32_t Idesc>
__device__ __forceinline__ void tcgen05_mma_f16_ts(uint32_t d_tmem, uint32_t a_tmem, uint64_t b_desc, bool accumulate) {
  static_assert(idesc_f16_valid(Idesc), "tcgen05.mma kind::f16: illegal instruction descriptor");
  static_assert(((Idesc >> 15) & 1u) == 0, "tcgen05.mma with A in TMEM: A must be K-major");
  asm volatile(
      "{\n .reg .pred acc;\n setp.ne.b32 acc, %4, 0;\n"
      " tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, acc;\n}\n" ::"r"(d_tmem),
      "r"(a_tmem), "l"(b_desc), "r"(Idesc), "r"(static_cast<uint32_t>(accumulate))
      : "memory");
}

/// @brief Make mbarrier `bar` (shared memory) receive one arrive when every tcgen05.mma/cp this thread
/// issued so far has completed (their smem reads and TMEM writes). Issue from the MMA thread; it
/// implies tcgen05_fence_before_thread_sync(). Count that arrive in the barrier's expected arrivals.
__device__ __forceinline__ void tcgen05_commit(uint64_t* bar) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(bar));
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(addr) : "memory");
}

/// Shapes of tcgen05.cp without warp multicast: lanes x bits per lane.
enum class TmemCopyShape { s128x256b, s128x128b, s4x256b };

/// @brief Asynchronously copy a shared-memory matrix (described by `s_desc`) into TMEM at `taddr`:
/// 128x256b = 128 lanes x 8 columns, 128x128b = 128 lanes x 4 columns, 4x256b = 4 lanes x 8 columns.
/// One thread issues it; a later tcgen05.mma from the same thread sees the data (they are pipelined);
/// anyone else waits on tcgen05_commit.
template <TmemCopyShape Shape>
__device__ __forceinline__ void tcgen05_cp(uint32_t taddr, uint64_t s_desc) {
  if constexpr (Shape == TmemCopyShape::s128x256b) {
    asm volatile("tcgen05.cp.cta_group::1.128x256b [%0], %1;" ::"r"(taddr), "l"(s_desc) : "memory");
  } else if constexpr (Shape == TmemCopyShape::s128x128b) {
    asm volatile("tcgen05.cp.cta_group::1.128x128b [%0], %1;" ::"r"(taddr), "l"(s_desc) : "memory");
  } else {
    static_assert(Shape == TmemCopyShape::s4x256b, "tcgen05.cp: unsupported shape");
    asm volatile("tcgen05.cp.cta_group::1.4x256b [%0], %1;" ::"r"(taddr), "l"(s_desc) : "memory");
  }
}

}  // namespace ptxb

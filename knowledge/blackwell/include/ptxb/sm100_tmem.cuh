// ptxb Blackwell (sm_100a) templates: tensor memory (TMEM) allocation, addressing, the fences that
// order tcgen05 operations across a thread synchronisation, and register <-> TMEM moves.
//
// TMEM is per-CTA on-chip memory read and written by the tensor core: 128 lanes (rows) x 512 columns
// of 32-bit cells (256 KiB per SM). An address is 32 bits: lane in bits 31..16, column in bits 15..0.
// Every helper here uses .cta_group::1; a kernel must not mix cta_group::1 and ::2 tcgen05 operations.
#pragma once
#include <cstdint>

namespace ptxb {

/// TMEM geometry of one CTA on sm_100a.
inline constexpr uint32_t kTmemLanes = 128;
inline constexpr uint32_t kTmemColumns = 512;

/// @brief TMEM address `lane` rows and `column` columns away from `base` (lane: bits 31..16, column: 15..0).
__host__ __device__ __forceinline__ constexpr uint32_t tmem_addr(uint32_t base, uint32_t lane, uint32_t column) {
  return base + (lane << 16) + column;
}

/// @brief First TMEM lane that warp `warp_index` may touch with tcgen05.ld/st: 32 * (warp_index % 4).
/// Warp w of a warpgroup owns lanes 32w..32w+31; no warp can read or write another quarter.
__device__ __forceinline__ uint32_t tmem_warp_lane_base(uint32_t warp_index) { return (warp_index & 3u) * 32u; }

/// @brief Allocate `NCols` TMEM columns (all 128 lanes) and write the base address to `*smem_slot`.
/// Executed by all 32 threads of ONE warp (.sync.aligned); may block until enough columns are free.
/// Publish the address with tcgen05_fence_before_thread_sync(); __syncthreads();
/// tcgen05_fence_after_thread_sync(); then every thread reads `*smem_slot`.
template <uint32_t NCols>
__device__ __forceinline__ void tcgen05_alloc(uint32_t* smem_slot) {
  static_assert(NCols >= 32 && NCols <= kTmemColumns, "tcgen05.alloc: nCols must be in [32, 512]");
  static_assert((NCols & (NCols - 1)) == 0, "tcgen05.alloc: nCols must be a power of two");
  const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem_slot));
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(dst), "r"(NCols) : "memory");
}

/// @brief Free `NCols` columns at `taddr` (a value returned by tcgen05_alloc<NCols>). One whole warp,
/// after every TMEM access of the CTA has completed (fence + barrier first). Mandatory before exit.
template <uint32_t NCols>
__device__ __forceinline__ void tcgen05_dealloc(uint32_t taddr) {
  static_assert(NCols >= 32 && NCols <= kTmemColumns, "tcgen05.dealloc: nCols must be in [32, 512]");
  static_assert((NCols & (NCols - 1)) == 0, "tcgen05.dealloc: nCols must be a power of two");
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(NCols) : "memory");
}

/// @brief Declare that this CTA will not allocate TMEM again (lets the hardware grant columns to other
/// CTAs on the SM). One whole warp, after this CTA's last tcgen05_alloc; allocating afterwards is illegal.
__device__ __forceinline__ void tcgen05_relinquish_alloc_permit() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}

/// @brief Order this thread's earlier tcgen05 operations before the barrier/mbarrier/flag that follows.
__device__ __forceinline__ void tcgen05_fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}

/// @brief Order this thread's later tcgen05 operations after the barrier/mbarrier wait that precedes.
__device__ __forceinline__ void tcgen05_fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

/// @brief Warp-collective load of 32 lanes x N columns (32-bit each): thread t of the warp gets lane
/// lane(taddr)+t, r[j] = column column(taddr)+j. Asynchronous: call tcgen05_wait_ld(r) before using r.
/// `taddr` must be the same in all threads and its lane must be tmem_warp_lane_base(warp). N = 1..128
/// (powers of two); N = 64 and 128 are issued as 32-column loads.
template <int N>
__device__ __forceinline__ void tcgen05_ld_32x32b(uint32_t taddr, uint32_t (&r)[N]) {
  static_assert(N >= 1 && N <= 128 && (N & (N - 1)) == 0, "tcgen05.ld.32x32b: .num must be x1..x128");
  if constexpr (N == 1) {
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];" : "=r"(r[0]) : "r"(taddr) : "memory");
  } else if constexpr (N == 2) {
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(taddr)
                 : "memory");
  } else if constexpr (N == 4) {
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(taddr)
                 : "memory");
  } else if constexpr (N == 8) {
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
                 : "r"(taddr)
                 : "memory");
  } else if constexpr (N == 16) {
    asm volatile(
        "tcgen05.ld.sync.aligned.32x32b.x16.b32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, [%16];"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
          "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
        : "r"(taddr)
        : "memory");
  } else if constexpr (N == 32) {
    asm volatile(
        "tcgen05.ld.sync.aligned.32x32b.x32.b32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
          "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15]),
          "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]),
          "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
        : "r"(taddr)
        : "memory");
  } else {
#pragma unroll
    for (int i = 0; i < N / 32; ++i) {
      tcgen05_ld_32x32b(taddr + 32u * i, *reinterpret_cast<uint32_t(*)[32]>(&r[32 * i]));
    }
  }
}

/// @brief Warp-collective store of 32 lanes x N columns: thread t writes r[j] to lane lane(taddr)+t,
/// column column(taddr)+j. Asynchronous: tcgen05_wait_st() before anything that must see the data.
/// Same lane rule as tcgen05_ld_32x32b. N = 1..128 (powers of two).
template <int N>
__device__ __forceinline__ void tcgen05_st_32x32b(uint32_t taddr, const uint32_t (&r)[N]) {
  static_assert(N >= 1 && N <= 128 && (N & (N - 1)) == 0, "tcgen05.st.32x32b: .num must be x1..x128");
  if constexpr (N == 1) {
    asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};" ::"r"(taddr), "r"(r[0]) : "memory");
  } else if constexpr (N == 2) {
    asm volatile("tcgen05.st.sync.aligned.32x32b.x2.b32 [%0], {%1, %2};" ::"r"(taddr), "r"(r[0]), "r"(r[1])
                 : "memory");
  } else if constexpr (N == 4) {
    asm volatile("tcgen05.st.sync.aligned.32x32b.x4.b32 [%0], {%1, %2, %3, %4};" ::"r"(taddr), "r"(r[0]), "r"(r[1]),
                 "r"(r[2]), "r"(r[3])
                 : "memory");
  } else if constexpr (N == 8) {
    asm volatile("tcgen05.st.sync.aligned.32x32b.x8.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8};" ::"r"(taddr),
                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7])
                 : "memory");
  } else if constexpr (N == 16) {
    asm volatile(
        "tcgen05.st.sync.aligned.32x32b.x16.b32 [%0], "
        "{%1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16};" ::"r"(taddr),
        "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7]), "r"(r[8]), "r"(r[9]),
        "r"(r[10]), "r"(r[11]), "r"(r[12]), "r"(r[13]), "r"(r[14]), "r"(r[15])
        : "memory");
  } else if constexpr (N == 32) {
    asm volatile(
        "tcgen05.st.sync.aligned.32x32b.x32.b32 [%0], "
        "{%1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, "
        "%17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32};" ::"r"(taddr),
        "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7]), "r"(r[8]), "r"(r[9]),
        "r"(r[10]), "r"(r[11]), "r"(r[12]), "r"(r[13]), "r"(r[14]), "r"(r[15]), "r"(r[16]), "r"(r[17]), "r"(r[18]),
        "r"(r[19]), "r"(r[20]), "r"(r[21]), "r"(r[22]), "r"(r[23]), "r"(r[24]), "r"(r[25]), "r"(r[26]), "r"(r[27]),
        "r"(r[28]), "r"(r[29]), "r"(r[30]), "r"(r[31])
        : "memory");
  } else {
#pragma unroll
    for (int i = 0; i < N / 32; ++i) {
      tcgen05_st_32x32b(taddr + 32u * i, *reinterpret_cast<const uint32_t(*)[32]>(&r[32 * i]));
    }
  }
}

/// @brief Wait until all of this thread's earlier tcgen05.ld have completed (whole warp, .sync.aligned).
__device__ __forceinline__ void tcgen05_wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory"); }

/// @brief tcgen05_wait_ld(), then pin `r` so the compiler cannot move reads of `r` above the wait.
template <int N>
__device__ __forceinline__ void tcgen05_wait_ld(uint32_t (&r)[N]) {
  tcgen05_wait_ld();
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

/// @brief Wait until all of this thread's earlier tcgen05.st have completed (whole warp, .sync.aligned).
__device__ __forceinline__ void tcgen05_wait_st() { asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory"); }

}  // namespace ptxb

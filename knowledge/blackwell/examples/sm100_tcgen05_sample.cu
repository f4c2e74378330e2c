// ptxb Blackwell sample: the whole tcgen05 life cycle in one CTA, for reading and as the source of
// sample SASS (cuobjdump -sass) for the tensor-core / tensor-memory instruction checks.
//
//   C[128 x 64] (fp32) = A[128 x 16] (bf16, row-major) * B[64 x 16]^T (bf16, row-major = K-major)
//
// One CTA of exactly 128 threads (one warpgroup). Steps: operands to shared memory in the canonical
// no-swizzle K-major layout -> warp 0 allocates 128 TMEM columns -> every warp tcgen05.st's 8 marker
// columns into its own 32 lanes -> thread 0 issues tcgen05.cp (A -> TMEM), tcgen05.mma (D = A*B)
// and tcgen05.commit -> all wait on the mbarrier -> each warp tcgen05.ld's its 32 rows of D (plus the
// copied and stored columns) -> C and `echo` -> warp 0 deallocates.
// Build: nvcc -gencode arch=compute_100a,code=sm_100a -O3 -std=c++17 -I knowledge/blackwell/include -cubin
#include <cstdint>

#include "ptxb/sm100.cuh"

namespace {

constexpr uint32_t kM = 128, kN = 64, kK = 16;
constexpr uint32_t kTmemCols = 128;                  // power of two >= 32 covering every column below
constexpr uint32_t kColD = 0, kColCp = 64, kColSt = 72;  // D: 0..63, copied A: 64..71, markers: 72..79
// Canonical K-major layout without swizzle: 8-row x 16-byte core matrices, each 128 contiguous bytes.
// K-adjacent core matrices are LBO = 128 bytes apart, consecutive 8-row groups SBO = 256 bytes apart.
constexpr uint32_t kLbo = 128, kSbo = 256;

/// Byte offset of element (row, k) of a 16-wide bf16 K-major tile in the canonical layout.
__device__ __forceinline__ uint32_t canonical_offset(uint32_t row, uint32_t k) {
  return (row / 8) * kSbo + (k / 8) * kLbo + (row % 8) * 16 + (k % 8) * 2;
}

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar))),
               "r"(count)
               : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(bar));
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(128, 1)
    ptxb_sm100_tcgen05_sample(const uint16_t* __restrict__ a, const uint16_t* __restrict__ b, float* __restrict__ c,
                              uint32_t* __restrict__ echo) {
  __shared__ alignas(128) uint16_t sa[kM * kK];
  __shared__ alignas(128) uint16_t sb[kN * kK];
  __shared__ alignas(8) uint64_t mma_done;
  __shared__ uint32_t tmem_slot;

  const uint32_t tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

  // 1. Operands to shared memory with ordinary stores, then make them visible to the async proxy.
  for (uint32_t i = tid; i < kM * kK; i += blockDim.x) sa[canonical_offset(i / kK, i % kK) / 2] = a[i];
  for (uint32_t i = tid; i < kN * kK; i += blockDim.x) sb[canonical_offset(i / kK, i % kK) / 2] = b[i];
  if (tid == 0) mbar_init(&mma_done, 1);  // one arrive: the tcgen05.commit below
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");

  // 2. One warp allocates TMEM; the address travels through shared memory between the two fences.
  if (warp == 0) {
    ptxb::tcgen05_alloc<kTmemCols>(&tmem_slot);
    ptxb::tcgen05_relinquish_alloc_permit();
  }
  ptxb::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptxb::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = tmem_slot;
  const uint32_t lane_base = ptxb::tmem_warp_lane_base(warp);  // this warp's 32 TMEM lanes
  const uint32_t row = lane_base + lane;                       // = TMEM lane = row of D this thread reads

  // 3. Each warp stores 8 marker columns into its own lanes.
  uint32_t marks[8];
#pragma unroll
  for (uint32_t j = 0; j < 8; ++j) marks[j] = row * 256u + j;
  ptxb::tcgen05_st_32x32b(ptxb::tmem_addr(tmem, lane_base, kColSt), marks);
  ptxb::tcgen05_wait_st();

  // 4. A single thread copies A into TMEM, issues the MMA and commits both to the mbarrier.
  if (tid == 0) {
    const uint64_t desc_a = ptxb::make_sm100_smem_desc(sa, kLbo, kSbo, ptxb::Sm100Swizzle::none);
    const uint64_t desc_b = ptxb::make_sm100_smem_desc(sb, kLbo, kSbo, ptxb::Sm100Swizzle::none);
    ptxb::tcgen05_cp<ptxb::TmemCopyShape::s128x256b>(ptxb::tmem_addr(tmem, 0, kColCp), desc_a);
    constexpr uint32_t idesc = ptxb::make_idesc_f16<kM, kN>();  // bf16 x bf16 -> f32, both K-major
    ptxb::tcgen05_mma_f16_ss<idesc>(ptxb::tmem_addr(tmem, 0, kColD), desc_a, desc_b, /*accumulate=*/false);
    ptxb::tcgen05_commit(&mma_done);
  }
  __syncwarp();

  // 5. Wait for the MMA and the copy, then order the TMEM reads after the wait.
  mbar_wait(&mma_done, 0);
  ptxb::tcgen05_fence_after_thread_sync();

  // 6. Epilogue: each warp reads its 32 rows of D, plus the copied and stored columns.
  uint32_t acc[kN], extra[16];
  ptxb::tcgen05_ld_32x32b(ptxb::tmem_addr(tmem, lane_base, kColD), acc);
  ptxb::tcgen05_ld_32x32b(ptxb::tmem_addr(tmem, lane_base, kColCp), extra);
  ptxb::tcgen05_wait_ld(acc);
  ptxb::tcgen05_wait_ld(extra);
#pragma unroll
  for (uint32_t j = 0; j < kN; ++j) c[row * kN + j] = __uint_as_float(acc[j]);
#pragma unroll
  for (uint32_t j = 0; j < 16; ++j) echo[row * 16 + j] = extra[j];

  // 7. Every TMEM access is finished before warp 0 frees the columns.
  ptxb::tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp == 0) {
    ptxb::tcgen05_fence_after_thread_sync();
    ptxb::tcgen05_dealloc<kTmemCols>(tmem);
  }
}

// Expert kernel for gemm_n7168_k5120 (C[M,N] = A[M,K]·B[N,K]ᵀ, bf16, fp32 accumulation), written only
// with the Hopper pack's templates (ptxb/sm90.cuh): the proof that the pack suffices, the calibration
// point of the instruction checks, and the "fixed kernel" of prompt-time supervision.
//
// Design: persistent grid (one CTA per SM), 384 threads = 3 warpgroups. Warpgroup 0 is the producer: it
// gives up registers (setmaxnreg) and one thread streams 128×64 A and 256×64 B tiles by TMA into a
// 4-stage ring of 128B-swizzled shared memory, each stage guarded by a "full" barrier (TMA bytes) and
// an "empty" barrier (consumer releases). Warpgroups 1 and 2 each own 64 rows of the 128×256 output
// tile and run wgmma m64n256k16 with one group in flight, releasing a stage as soon as the wgmma that
// read it has retired. Tiles are visited in groups of 16 row-blocks so that concurrently running CTAs
// share A and B rows in L2.
#include <cuda.h>
#include <cuda_bf16.h>

#include "ptxb/sm90.cuh"
#include "ptxbench_abi.h"

namespace {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, GROUP_M = 16;
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;  // 16 + 32 KiB
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;  // + room to align the ring to 1024 B
constexpr int THREADS = 384;
constexpr int CONSUMER_WARPS = 8;

struct TileCoord {
  int m0, n0;
};

// Grouped order: GROUP_M row-blocks advance together across all column blocks.
__device__ __forceinline__ TileCoord tile_coord(int tile, int m_blocks, int n_blocks) {
  const int per_group = GROUP_M * n_blocks;
  const int group = tile / per_group;
  const int first_m = group * GROUP_M;
  const int rows_in_group = min(GROUP_M, m_blocks - first_m);
  const int in_group = tile % per_group;
  return {(first_m + in_group % rows_in_group) * BM, (in_group / rows_in_group) * BN};
}

__global__ void __launch_bounds__(THREADS, 1)
expert_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
            __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full[STAGES];
  __shared__ __align__(8) uint64_t empty[STAGES];
  uint8_t* ring = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));

  const int m_blocks = (M + BM - 1) / BM, n_blocks = N / BN, k_tiles = K / BK;
  const int tiles = m_blocks * n_blocks;
  const int wg = ptxb::warpgroup_index();

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptxb::mbarrier_init(&full[s], 1);
      ptxb::mbarrier_init(&empty[s], CONSUMER_WARPS);
    }
    ptxb::fence_mbarrier_init();
    ptxb::tma_prefetch_descriptor(&map_a);
    ptxb::tma_prefetch_descriptor(&map_b);
  }
  __syncthreads();

  if (wg == 0) {
    ptxb::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      int it = 0;
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const TileCoord t = tile_coord(tile, m_blocks, n_blocks);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % STAGES;
          // A fresh barrier counts as having completed the phase before phase 0, so round 0 passes.
          ptxb::mbarrier_wait_parity(&empty[s], ((it / STAGES) & 1) ^ 1);
          uint8_t* stage = ring + s * STAGE_BYTES;
          ptxb::mbarrier_arrive_expect_tx(&full[s], STAGE_BYTES);
          ptxb::tma_load_2d(stage, &map_a, &full[s], kt * BK, t.m0);
          ptxb::tma_load_2d(stage + A_BYTES, &map_b, &full[s], kt * BK, t.n0);
        }
      }
    }
    return;
  }

  ptxb::setmaxnreg_inc<232>();
  const int consumer = wg - 1;                      // 0 or 1: rows [64·consumer, 64·consumer + 64) of the tile
  const int tid = threadIdx.x % 128, lane = tid % 32;
  float acc[BN / 2];
  int it = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const TileCoord t = tile_coord(tile, m_blocks, n_blocks);
    for (int kt = 0; kt < k_tiles; ++kt, ++it) {
      const int s = it % STAGES;
      ptxb::mbarrier_wait_parity(&full[s], (it / STAGES) & 1);
      const uint8_t* stage = ring + s * STAGE_BYTES;
      const uint32_t a = ptxb::smem_addr(stage) + consumer * (64 * 128);  // 8 swizzle atoms of 1024 B
      const uint32_t b = ptxb::smem_addr(stage + A_BYTES);
      ptxb::wgmma_fence();
#pragma unroll
      for (int k = 0; k < BK / 16; ++k)  // one k16 step = 32 bytes along the 128-byte swizzled row
        ptxb::wgmma_m64k16_bf16<BN>(acc, ptxb::make_smem_desc_addr(a + 32 * k, 16, 1024, ptxb::Swizzle::b128),
                                    ptxb::make_smem_desc_addr(b + 32 * k, 16, 1024, ptxb::Swizzle::b128),
                                    kt > 0 || k > 0);
      ptxb::wgmma_commit_group();
      ptxb::wgmma_wait_group<1>();  // the previous k-tile's wgmma has retired: its stage can be refilled
      if (kt > 0 && lane == 0) ptxb::mbarrier_arrive(&empty[(it - 1) % STAGES]);
    }
    ptxb::wgmma_wait_group<0>();
    ptxb::wgmma_fence_registers(acc);
    if (lane == 0) ptxb::mbarrier_arrive(&empty[(it - 1) % STAGES]);

    // Epilogue straight from registers: register i of this thread is (accumulator_row, accumulator_col).
    const int row = t.m0 + 64 * consumer + ptxb::accumulator_row(0, tid);
    const int col = t.n0 + ptxb::accumulator_col(0, tid);
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      if (row < M)
        *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col + 8 * j) =
            __floats2bfloat162_rn(acc[4 * j], acc[4 * j + 1]);
      if (row + 8 < M)
        *reinterpret_cast<__nv_bfloat162*>(C + (size_t)(row + 8) * N + col + 8 * j) =
            __floats2bfloat162_rn(acc[4 * j + 2], acc[4 * j + 3]);
    }
  }
}

}  // namespace

PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  if (nargs != 3) return cudaErrorInvalidValue;
  const ptxb_tensor &A = args[0], &B = args[1], &C = args[2];
  for (int i = 0; i < 3; ++i)
    if (args[i].dtype != PTXB_BF16 || args[i].ndim != 2 || args[i].stride[1] != 1 ||
        reinterpret_cast<uintptr_t>(args[i].data) % 16 != 0)
      return cudaErrorInvalidValue;
  const int64_t M = A.shape[0], K = A.shape[1], N = B.shape[0];
  if (B.shape[1] != K || C.shape[0] != M || C.shape[1] != N || N % BN || K % BK || M <= 0 || M > (1 << 30) ||
      A.stride[0] != K || B.stride[0] != K || C.stride[0] != N)
    return cudaErrorInvalidValue;

  CUtensorMap map_a, map_b;
  if (ptxb::make_tensor_map_2d(&map_a, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, A.data, K, M, K * 2, BK, BM,
                               CU_TENSOR_MAP_SWIZZLE_128B) != CUDA_SUCCESS ||
      ptxb::make_tensor_map_2d(&map_b, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, B.data, K, N, K * 2, BK, BN,
                               CU_TENSOR_MAP_SWIZZLE_128B) != CUDA_SUCCESS)
    return cudaErrorInvalidValue;

  static int sms = 0;
  if (sms == 0) {
    int device = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaFuncSetAttribute(expert_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
  }
  const int tiles = static_cast<int>((M + BM - 1) / BM) * static_cast<int>(N / BN);
  expert_gemm<<<tiles < sms ? tiles : sms, THREADS, SMEM_BYTES, stream>>>(
      map_a, map_b, static_cast<__nv_bfloat16*>(C.data), static_cast<int>(M), static_cast<int>(N), static_cast<int>(K));
  return static_cast<int>(cudaGetLastError());
}

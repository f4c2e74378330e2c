// Every function of the Hopper pack (knowledge/hopper/include/ptxb) run on the GPU in a tiny kernel
// that checks its effect: barriers, TMA loads (swizzled layout), stores, multicast in a cluster,
// wgmma from shared memory and from registers for every N, ldmatrix/stmatrix, named barriers,
// elect, setmaxnreg. The pack shown to models is known to work because of these tests.
#include <cuda_bf16.h>

#include <vector>

#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"
#include "gpu_test_support.h"
#include "ptxb/sm90.cuh"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

constexpr int kCols = 256;  // test matrices in global memory: rows × 256 uint16/bf16 elements

// A rows×256 uint16 matrix whose element (r, c) is r*256 + c (exact, so positions can be checked).
DeviceBuffer index_matrix(int rows) {
  std::vector<uint16_t> h(rows * kCols);
  for (int i = 0; i < rows * kCols; ++i) h[i] = static_cast<uint16_t>(i);
  DeviceBuffer d(h.size() * 2);
  PTXB_CUDA_CALL(cudaMemcpy(d.get(), h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  return d;
}

CUtensorMap map_of(const void* base, int rows, CUtensorMapDataType type, uint32_t box_inner, uint32_t box_outer,
                   CUtensorMapSwizzle swizzle) {
  CUtensorMap m;
  CUresult r = ptxb::make_tensor_map_2d(&m, type, base, kCols, rows, kCols * 2, box_inner, box_outer, swizzle);
  if (r != CUDA_SUCCESS) throw std::runtime_error("cuTensorMapEncodeTiled failed: " + std::to_string(r));
  return m;
}

template <typename T>
std::vector<T> to_host(const DeviceBuffer& d) {
  std::vector<T> h(d.bytes() / sizeof(T));
  PTXB_CUDA_CALL(cudaMemcpy(h.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

// Byte offset of element (r, c) of a 2-byte box with 128-byte rows under the 128B swizzle: the 16-byte
// chunk index is XORed with the row index modulo 8.
int swizzle128_offset(int r, int c) { return r * 128 + ((((c * 2) / 16) ^ (r % 8)) * 16) + (c * 2) % 16; }

// ---- mbarrier + TMA load ------------------------------------------------------------------------

__global__ void k_tma_load(const __grid_constant__ CUtensorMap swz, const __grid_constant__ CUtensorMap plain,
                           uint16_t* out, int* flags) {
  __shared__ __align__(1024) uint16_t tile[2][64 * 64];
  __shared__ __align__(8) uint64_t bar[2];
  __shared__ __align__(8) uint64_t counted;
  if (threadIdx.x == 0) {
    ptxb::mbarrier_init(&bar[0], 1);
    ptxb::mbarrier_init(&bar[1], 1);
    ptxb::mbarrier_init(&counted, 2);
    ptxb::fence_mbarrier_init();
    ptxb::tma_prefetch_descriptor(&swz);
  }
  __syncthreads();
  // A two-arrival phase: incomplete after one arrival, complete after both.
  if (threadIdx.x == 0) ptxb::mbarrier_arrive(&counted);
  __syncthreads();
  if (threadIdx.x == 0) flags[0] = ptxb::mbarrier_try_wait_parity(&counted, 0);
  __syncthreads();
  if (threadIdx.x == 32) ptxb::mbarrier_arrive(&counted);
  ptxb::mbarrier_wait_parity(&counted, 0);
  if (threadIdx.x == 0) flags[1] = ptxb::mbarrier_try_wait_parity(&counted, 0);
  if (threadIdx.x == 0) {
    ptxb::mbarrier_arrive_expect_tx(&bar[0], sizeof(tile[0]));
    ptxb::tma_load_2d(tile[0], &swz, &bar[0], 64, 32);  // box of 64 elements × 64 rows at column 64, row 32
    ptxb::mbarrier_expect_tx(&bar[1], sizeof(tile[1]));  // arm without arriving, then arrive separately
    ptxb::tma_load_2d(tile[1], &plain, &bar[1], 64, 32);
    ptxb::mbarrier_arrive(&bar[1]);
  }
  ptxb::mbarrier_wait_parity(&bar[0], 0);
  ptxb::mbarrier_wait_parity(&bar[1], 0);
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) {
    out[i] = tile[0][i];
    out[64 * 64 + i] = tile[1][i];
  }
}

// ---- proxy fences + TMA store -------------------------------------------------------------------

__global__ void k_tma_store_and_global_fence(const __grid_constant__ CUtensorMap dst, const __grid_constant__ CUtensorMap src,
                                             uint16_t* written, uint16_t* out) {
  __shared__ __align__(1024) uint16_t tile[64 * 64];
  __shared__ __align__(8) uint64_t bar;
  // Generic-proxy smem writes, then fence + barrier, then a TMA store reads them.
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) tile[i] = static_cast<uint16_t>(3 * i + 1);
  ptxb::fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxb::tma_store_2d(&dst, tile, 0, 64);
    ptxb::tma_store_commit();
    ptxb::tma_store_wait<0>();
    ptxb::mbarrier_init(&bar, 1);
    ptxb::fence_mbarrier_init();
  }
  // Generic-proxy global writes, then fence + barrier, then a TMA load reads them back.
  for (int i = threadIdx.x; i < 64 * kCols; i += blockDim.x) written[i] = static_cast<uint16_t>(7 * i + 5);
  ptxb::fence_proxy_async_global();
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxb::mbarrier_arrive_expect_tx(&bar, sizeof(tile));
    ptxb::tma_load_2d(tile, &src, &bar, 0, 0);
  }
  ptxb::mbarrier_wait_parity(&bar, 0);
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) out[i] = tile[i];
}

// ---- cluster: multicast, remote arrive, distributed shared memory -----------------------------------

__global__ void k_cluster(const __grid_constant__ CUtensorMap map, uint16_t* out, int* info) {
  __shared__ __align__(1024) uint16_t tile[64 * 64];
  __shared__ __align__(8) uint64_t full, remote, peer;
  __shared__ int mine;
  const uint32_t rank = ptxb::cluster_ctarank();
  if (threadIdx.x == 0) {
    ptxb::mbarrier_init(&full, 1);
    ptxb::mbarrier_init(&remote, 1);
    ptxb::mbarrier_init(&peer, 1);
    ptxb::fence_mbarrier_init();
    mine = 100 + static_cast<int>(rank);
    ptxb::mbarrier_arrive_expect_tx(&full, sizeof(tile));  // every receiving CTA arms its own barrier
  }
  ptxb::cluster_sync();  // barriers initialised and armed in both CTAs before any multicast
  if (rank == 0 && threadIdx.x == 0) ptxb::tma_load_2d_multicast(tile, &map, &full, 0, 0, 0b11);
  ptxb::mbarrier_wait_parity(&full, 0);
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) out[rank * 64 * 64 + i] = tile[i];
  if (rank == 1 && threadIdx.x == 0) ptxb::mbarrier_arrive_cluster(&remote, 0);
  if (rank == 0) ptxb::mbarrier_wait_parity(&remote, 0);
  // The CTA-scope remote arrive (a multicasting producer's "stage free"): rank 0 waits a bounded
  // time, so a lost arrive reads as a failed flag instead of a hung test.
  int peer_seen = 1;
  if (rank == 1 && threadIdx.x == 0) ptxb::mbarrier_arrive_peer(&peer, 0);
  if (rank == 0) {
    peer_seen = 0;
    for (int spin = 0; spin < (1 << 22) && !peer_seen; ++spin) peer_seen = ptxb::mbarrier_try_wait_parity(&peer, 0);
  }
  if (threadIdx.x == 0) {
    int other;
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(other) : "r"(ptxb::map_shared_to_cta(&mine, rank ^ 1)));
    info[rank * 3 + 0] = static_cast<int>(ptxb::cluster_nctarank());
    info[rank * 3 + 1] = other;
    info[rank * 3 + 2] = peer_seen;
  }
  ptxb::fence_acq_rel_cluster();
  ptxb::cluster_sync();  // no CTA leaves while the other may still touch its shared memory
}

// ---- wgmma ----------------------------------------------------------------------------------------

// Shared by the wgmma kernels: a 1024-aligned operand area, one barrier, TMA loads of the tiles
// (a map may be null), and the accumulators written back through accumulator_row/col.
__device__ uint8_t* aligned_smem(uint8_t* raw) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
}

__device__ void load_tiles(uint64_t* bar, uint8_t* a, const CUtensorMap* map_a, uint32_t a_bytes, uint8_t* b,
                           const CUtensorMap* map_b, uint32_t b_bytes) {
  if (threadIdx.x == 0) {
    ptxb::mbarrier_init(bar, 1);
    ptxb::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxb::mbarrier_arrive_expect_tx(bar, a_bytes + b_bytes);
    if (map_a) ptxb::tma_load_2d(a, map_a, bar, 0, 0);
    ptxb::tma_load_2d(b, map_b, bar, 0, 0);
  }
  ptxb::mbarrier_wait_parity(bar, 0);
}

template <int N>
__device__ void store_accumulators(float (&acc)[N / 2], float* out) {
  ptxb::wgmma_commit_group();
  ptxb::wgmma_wait_group<0>();
  ptxb::wgmma_fence_registers(acc);
  for (int i = 0; i < N / 2; ++i)
    out[ptxb::accumulator_row(i, threadIdx.x) * N + ptxb::accumulator_col(i, threadIdx.x)] = acc[i];
}

// A (64×64) by TMA with the 128B swizzle; B either N×64 K-major (a k16 step is 32 bytes along the
// row) or, TransB, 64×N MN-major = Bᵀ stored [k][n] (a k16 step is 16 rows = 2048 bytes; the LBO
// of 8192 B would separate 64-wide N panels). C = A·B through 4 k16 steps.
template <int N, bool TransB>
__global__ void __launch_bounds__(128, 1)
k_wgmma_ss(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, float* out) {
  extern __shared__ uint8_t raw[];
  __shared__ __align__(8) uint64_t bar;
  uint8_t* a = aligned_smem(raw);
  uint8_t* b = a + 64 * 128;
  load_tiles(&bar, a, &map_a, 64 * 128, b, &map_b, N * 128);
  float acc[N / 2];
  ptxb::wgmma_fence();
#pragma unroll
  for (int k = 0; k < 4; ++k)
    ptxb::wgmma_m64k16_bf16<N, false, TransB>(
        acc, ptxb::make_smem_desc(a + 32 * k, 16, 1024, ptxb::Swizzle::b128),
        TransB ? ptxb::make_smem_desc(b + 2048 * k, 8192, 1024, ptxb::Swizzle::b128)
               : ptxb::make_smem_desc(b + 32 * k, 16, 1024, ptxb::Swizzle::b128),
        k > 0);
  store_accumulators<N>(acc, out);
}

// A from registers (fragment layout of wgmma_m64k16_bf16_rs), B N×64 by TMA.
__global__ void __launch_bounds__(128, 1)
k_wgmma_rs(const __nv_bfloat16* A, const __grid_constant__ CUtensorMap map_b, float* out) {
  constexpr int N = 64;
  extern __shared__ uint8_t raw[];
  __shared__ __align__(8) uint64_t bar;
  uint8_t* b = aligned_smem(raw);
  load_tiles(&bar, nullptr, nullptr, 0, b, &map_b, N * 128);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, r = 16 * warp + lane / 4, c = 2 * (lane % 4);
  auto pair = [&](int row, int col) {
    return ptxb::pack_bf16x2(__bfloat162float(A[row * kCols + col]), __bfloat162float(A[row * kCols + col + 1]));
  };
  float acc[N / 2];
  ptxb::wgmma_fence();
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int k0 = 16 * k;
    uint32_t a[4] = {pair(r, k0 + c), pair(r + 8, k0 + c), pair(r, k0 + c + 8), pair(r + 8, k0 + c + 8)};
    ptxb::wgmma_m64k16_bf16_rs<N>(acc, a, ptxb::make_smem_desc(b + 32 * k, 16, 1024, ptxb::Swizzle::b128), k > 0);
  }
  store_accumulators<N>(acc, out);
}

// ---- ldmatrix / stmatrix, sync helpers, setmaxnreg --------------------------------------------------

__global__ void k_matrix(uint32_t* regs, uint16_t* round_trip) {
  __shared__ __align__(16) uint16_t src[16 * 16], dst[16 * 16], dst_t[16 * 16];
  for (int i = threadIdx.x; i < 256; i += 32) src[i] = static_cast<uint16_t>(i);
  __syncwarp();
  const int lane = threadIdx.x;
  const int row = (lane % 8) + 8 * ((lane / 8) % 2), col = 8 * (lane / 16);  // matrices: TL, BL, TR, BR
  uint32_t r[4], t[4];
  ptxb::ldmatrix_x4(r, &src[row * 16 + col]);
  ptxb::ldmatrix_x4_trans(t, &src[row * 16 + col]);
  for (int i = 0; i < 4; ++i) {
    regs[lane * 8 + i] = r[i];
    regs[lane * 8 + 4 + i] = t[i];
  }
  ptxb::stmatrix_x4(&dst[row * 16 + col], r);
  ptxb::stmatrix_x4_trans(&dst_t[row * 16 + col], t);
  __syncwarp();
  for (int i = lane; i < 256; i += 32) {
    round_trip[i] = dst[i];
    round_trip[256 + i] = dst_t[i];
  }
}

__global__ void __launch_bounds__(256, 1) k_sync_and_regs(int* out, float* big) {
  __shared__ int elected, handoff;
  if (threadIdx.x == 0) elected = 0;
  __syncthreads();
  if (ptxb::elect_one()) atomicAdd(&elected, 1);
  const int warp = threadIdx.x / 32;
  if (warp == 2) {
    if (threadIdx.x == 64) handoff = 4242;
    ptxb::named_barrier_arrive(2, 64);
  } else if (warp == 3) {
    ptxb::named_barrier_sync(2, 64);
    if (threadIdx.x == 96) out[1] = handoff;
  }
  __syncthreads();
  if (threadIdx.x == 0) out[0] = elected;
  out[8 + threadIdx.x] = ptxb::warpgroup_index();
  if (ptxb::warpgroup_index() == 0) {
    ptxb::setmaxnreg_dec<40>();
  } else {
    ptxb::setmaxnreg_inc<232>();
    float v[96];
#pragma unroll
    for (int i = 0; i < 96; ++i) v[i] = big[i] * (threadIdx.x - 127);
    float s = 0;
#pragma unroll
    for (int i = 0; i < 96; ++i) s += v[i] * v[95 - i];
    big[96 + threadIdx.x - 128] = s;
  }
}

// bf16 operand matrices with small integers so every product and sum is exact in fp32.
std::vector<__nv_bfloat16> small_ints(int rows, int seed) {
  std::vector<__nv_bfloat16> h(rows * kCols);
  for (int i = 0; i < rows * kCols; ++i) h[i] = __float2bfloat16(static_cast<float>((i * 7 + seed * 13) % 7 - 3));
  return h;
}

DeviceBuffer upload(const std::vector<__nv_bfloat16>& h) {
  DeviceBuffer d(h.size() * 2);
  PTXB_CUDA_CALL(cudaMemcpy(d.get(), h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  return d;
}

// Entries of got (64×N) that differ from A·B (B given as N rows of K, or as K rows of N when `b_kn`).
int gemm_mismatches(const std::vector<float>& got, const std::vector<__nv_bfloat16>& ha,
                    const std::vector<__nv_bfloat16>& hb, int N, bool b_kn) {
  int bad = 0;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < N; ++n) {
      float want = 0;
      for (int k = 0; k < 64; ++k)
        want += __bfloat162float(ha[m * kCols + k]) * __bfloat162float(b_kn ? hb[k * kCols + n] : hb[n * kCols + k]);
      bad += got[m * N + n] != want;
    }
  return bad;
}

// TransB: B is loaded as a 64(k) × N box of a matrix stored [k][n]; N = 64 keeps one 128-byte panel.
template <int N, bool TransB = false>
void check_wgmma_ss() {
  auto ha = small_ints(64, 1), hb = small_ints(256, 2);
  DeviceBuffer a = upload(ha), b = upload(hb), out(64 * N * 4);
  auto ma = map_of(a.get(), 64, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B);
  auto mb = TransB ? map_of(b.get(), 256, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, N, 64, CU_TENSOR_MAP_SWIZZLE_128B)
                   : map_of(b.get(), 256, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 64, N, CU_TENSOR_MAP_SWIZZLE_128B);
  const int smem = 1024 + (64 + N) * 128;
  PTXB_CUDA_CALL(cudaFuncSetAttribute(k_wgmma_ss<N, TransB>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  k_wgmma_ss<N, TransB><<<1, 128, smem>>>(ma, mb, out.as<float>());
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  EXPECT_EQ(gemm_mismatches(to_host<float>(out), ha, hb, N, TransB), 0) << "N=" << N << " TransB=" << TransB;
}

}  // namespace

class Sm90Templates : public GpuTest {};

TEST_F(Sm90Templates, MbarrierPhasesAndTmaLoadWithAndWithoutSwizzle) {
  DeviceBuffer g = index_matrix(128), out(2 * 64 * 64 * 2), flags(2 * 4);
  auto swz = map_of(g.get(), 128, CU_TENSOR_MAP_DATA_TYPE_UINT16, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B);
  auto plain = map_of(g.get(), 128, CU_TENSOR_MAP_DATA_TYPE_UINT16, 64, 64, CU_TENSOR_MAP_SWIZZLE_NONE);
  k_tma_load<<<1, 128>>>(swz, plain, out.as<uint16_t>(), flags.as<int>());
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  auto f = to_host<int>(flags);
  EXPECT_EQ(f[0], 0) << "a phase needing 2 arrivals completed after 1";
  EXPECT_EQ(f[1], 1) << "the phase did not complete after 2 arrivals";
  auto o = to_host<uint16_t>(out);
  int bad_swz = 0, bad_plain = 0;
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) {
      uint16_t want = static_cast<uint16_t>((32 + r) * kCols + 64 + c);
      bad_swz += o[swizzle128_offset(r, c) / 2] != want;
      bad_plain += o[64 * 64 + r * 64 + c] != want;
    }
  EXPECT_EQ(bad_swz, 0) << "128B-swizzled layout differs from the contract's formula";
  EXPECT_EQ(bad_plain, 0);
}

TEST_F(Sm90Templates, TmaStoreAfterSharedFenceAndLoadAfterGlobalFence) {
  DeviceBuffer dst(128 * kCols * 2), src(64 * kCols * 2), out(64 * 64 * 2);
  PTXB_CUDA_CALL(cudaMemset(dst.get(), 0, dst.bytes()));
  auto mdst = map_of(dst.get(), 128, CU_TENSOR_MAP_DATA_TYPE_UINT16, 64, 64, CU_TENSOR_MAP_SWIZZLE_NONE);
  auto msrc = map_of(src.get(), 64, CU_TENSOR_MAP_DATA_TYPE_UINT16, 64, 64, CU_TENSOR_MAP_SWIZZLE_NONE);
  k_tma_store_and_global_fence<<<1, 128>>>(mdst, msrc, src.as<uint16_t>(), out.as<uint16_t>());
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  auto d = to_host<uint16_t>(dst);
  auto o = to_host<uint16_t>(out);
  int bad_store = 0, untouched = 0, bad_load = 0;
  for (int r = 0; r < 128; ++r)
    for (int c = 0; c < kCols; ++c) {
      bool in_box = r >= 64 && c < 64;
      if (in_box) bad_store += d[r * kCols + c] != static_cast<uint16_t>(3 * ((r - 64) * 64 + c) + 1);
      else untouched += d[r * kCols + c] != 0;
    }
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) bad_load += o[r * 64 + c] != static_cast<uint16_t>(7 * (r * kCols + c) + 5);
  EXPECT_EQ(bad_store, 0);
  EXPECT_EQ(untouched, 0) << "the store wrote outside its box";
  EXPECT_EQ(bad_load, 0);
}

TEST_F(Sm90Templates, ClusterMulticastRemoteArriveAndDistributedSharedMemory) {
  DeviceBuffer g = index_matrix(64), out(2 * 64 * 64 * 2), info(6 * 4);
  auto map = map_of(g.get(), 64, CU_TENSOR_MAP_DATA_TYPE_UINT16, 64, 64, CU_TENSOR_MAP_SWIZZLE_NONE);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(2);
  cfg.blockDim = dim3(128);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 2;
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  PTXB_CUDA_CALL(cudaLaunchKernelEx(&cfg, k_cluster, map, out.as<uint16_t>(), info.as<int>()));
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  auto o = to_host<uint16_t>(out);
  auto in = to_host<int>(info);
  for (int rank = 0; rank < 2; ++rank) {
    int bad = 0;
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < 64; ++c) bad += o[rank * 4096 + r * 64 + c] != static_cast<uint16_t>(r * kCols + c);
    EXPECT_EQ(bad, 0) << "CTA " << rank << " did not receive the multicast box";
    EXPECT_EQ(in[rank * 3 + 0], 2);
    EXPECT_EQ(in[rank * 3 + 1], 100 + (rank ^ 1)) << "distributed shared memory read";
    EXPECT_EQ(in[rank * 3 + 2], 1) << "CTA " << rank << ": the arrive of mbarrier_arrive_peer never came";
  }
}

TEST_F(Sm90Templates, WgmmaFromSharedMemoryEveryN) {
  check_wgmma_ss<32>();
  check_wgmma_ss<64>();
  check_wgmma_ss<128>();
  check_wgmma_ss<256>();
}

TEST_F(Sm90Templates, WgmmaWithAFromRegisters) {
  auto ha = small_ints(64, 3), hb = small_ints(64, 4);
  DeviceBuffer a = upload(ha), b = upload(hb), out(64 * 64 * 4);
  auto mb = map_of(b.get(), 64, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B);
  const int smem = 1024 + 64 * 128;
  k_wgmma_rs<<<1, 128, smem>>>(a.as<__nv_bfloat16>(), mb, out.as<float>());
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  EXPECT_EQ(gemm_mismatches(to_host<float>(out), ha, hb, 64, false), 0);
}

TEST_F(Sm90Templates, WgmmaWithTransposedB) { check_wgmma_ss<64, true>(); }

TEST_F(Sm90Templates, LdmatrixStmatrixLayoutsAndRoundTrips) {
  DeviceBuffer regs(32 * 8 * 4), trip(512 * 2);
  k_matrix<<<1, 32>>>(regs.as<uint32_t>(), trip.as<uint16_t>());
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  auto r = to_host<uint32_t>(regs);
  auto t = to_host<uint16_t>(trip);
  const int row0[4] = {0, 8, 0, 8}, col0[4] = {0, 0, 8, 8};
  int bad = 0, bad_t = 0;
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      int rr = row0[i] + lane / 4, cc = col0[i] + 2 * (lane % 4);
      bad += r[lane * 8 + i] != (static_cast<uint32_t>(rr * 16 + cc) | (static_cast<uint32_t>(rr * 16 + cc + 1) << 16));
      int tr = row0[i] + 2 * (lane % 4), tc = col0[i] + lane / 4;  // transposed: pairs run down a column
      bad_t += r[lane * 8 + 4 + i] !=
               (static_cast<uint32_t>(tr * 16 + tc) | (static_cast<uint32_t>((tr + 1) * 16 + tc) << 16));
    }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(bad_t, 0);
  int bad_trip = 0;
  for (int i = 0; i < 256; ++i) bad_trip += (t[i] != i) + (t[256 + i] != i);
  EXPECT_EQ(bad_trip, 0) << "stmatrix did not invert ldmatrix";
}

TEST_F(Sm90Templates, ElectNamedBarriersWarpgroupsAndSetmaxnreg) {
  DeviceBuffer out((8 + 256) * 4), big((96 + 128) * 4);
  std::vector<float> hb(96 + 128, 0.f);
  for (int i = 0; i < 96; ++i) hb[i] = 0.5f * i;
  PTXB_CUDA_CALL(cudaMemcpy(big.get(), hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
  k_sync_and_regs<<<1, 256>>>(out.as<int>(), big.as<float>());
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  auto o = to_host<int>(out);
  auto b = to_host<float>(big);
  EXPECT_EQ(o[0], 8) << "elect_one must pick one lane per warp";
  EXPECT_EQ(o[1], 4242) << "named barrier hand-off";
  for (int t = 0; t < 256; ++t) EXPECT_EQ(o[8 + t], t / 128);
  for (int t = 128; t < 256; ++t) {
    float s = 0;
    for (int i = 0; i < 96; ++i) s += (0.5f * i * (t - 127)) * (0.5f * (95 - i) * (t - 127));
    EXPECT_FLOAT_EQ(b[96 + t - 128], s);
  }
}

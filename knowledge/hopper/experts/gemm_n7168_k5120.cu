// Expert kernel for gemm_n7168_k5120 (C[M,N] = A[M,K]·B[N,K]ᵀ, bf16, fp32 accumulation), written only
// with the Hopper pack's templates (ptxb/sm90.cuh): the proof that the pack suffices, the calibration
// point of the instruction checks, and the "fixed kernel" of prompt-time supervision. On the H200 it
// runs at 1.005× cuBLASLt at M = 8192 (results/expert_gemm.md; the v7 before it was 0.996–0.999×,
// the earlier cooperative kernel with a register epilogue 0.921×).
//
// Design: persistent 2×1 clusters, 384 threads = 1 producer + 2 consumer warpgroups per CTA.
// - Tiles of 128×256; the two CTAs of a cluster take vertically adjacent tiles and share the B box:
//   each loads its own A (128×64) and one 128-row half of B, multicast to both (TMA, 128B swizzle),
//   into a 4-stage ring of 48 KiB. A stage is refilled once all 16 consumer warps of both CTAs have
//   released it; the remote release is mbarrier_arrive_peer (CTA-scope: the cluster-scope release of
//   mbarrier_arrive_cluster made this kernel 2.3× slower).
// - Each consumer owns 64 rows of the tile: wgmma m64n256k16, one group in flight.
// - A seamless tile boundary: the last k-step of a tile runs as two m64n128 halves (lo, hi); in the
//   next tile's first k-step the consumer packs lo into bf16 registers while hi still computes, issues
//   the new lo, packs hi, issues the new hi; from k-step 1 on it is m64n256 again. Both shape switches
//   start with wgmma_wait_group<0> (another shape on the same accumulators may issue only once every
//   group has retired: without it ptxas serialises every wgmma, info C7511).
// - Epilogue off the critical path: during the next tile's first four k-steps, while each wgmma group
//   runs, it writes one 64×64 box of the previous tile to shared memory (stmatrix, 128B-swizzled panel)
//   and one thread stores it by TMA (bulk-group waits guard panel reuse).
// - Hybrid stream-K tail: the whole waves are data-parallel, the last partial wave is split along K
//   over all clusters; a tile cut in up to three pieces is summed in a fixed order (deterministic)
//   through a static fp32 workspace and per-slot flags stamped with a per-call epoch.
// - Grouped raster (8 cluster rows) so that co-running clusters share A and B in L2.
// Rows ≥ M are zero-filled by the TMA loads and clipped by the TMA stores.
// Variants measured on the way (v1–v9, with their numbers): results/expert_gemm.md.
#include <cuda.h>
#include <cuda_bf16.h>

#include "ptxb/sm90.cuh"
#include "ptxbench_abi.h"

namespace {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, GROUP_P = 8, CLUSTER = 2;
constexpr int EPI_PANELS = 2;  // 64×64 staging boxes per consumer warpgroup: 1, 2 or 4 (= whole 64×256 slice)
constexpr bool kStreamK = true;
constexpr bool kLightPeerArrive = true;
constexpr bool kHandoff = true;        // false: v7's tile boundary (every k-step m64n256)
constexpr bool kStagger = false;       // consumer 1 enters the halves one k-step earlier and leaves one later
constexpr bool kLightRelease = false;  // v8b's stage release: 1 arrive per consumer warpgroup and CTA
constexpr int A_BYTES = BM * BK * 2;                 // 16 KiB: own A box (128 rows × 128 B)
constexpr int B_HALF_ROWS = BN / CLUSTER;            // 128 rows of B loaded (and multicast) per CTA
constexpr int B_HALF_BYTES = B_HALF_ROWS * BK * 2;   // 16 KiB
constexpr int B_BYTES = BN * BK * 2;                 // 32 KiB received per stage (both halves)
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;       // 48 KiB
constexpr int RING_BYTES = STAGES * STAGE_BYTES;
constexpr int EPI_BOX = 64;                          // TMA store box: 64 rows × 64 columns (128 B rows)
constexpr int EPI_PANEL_BYTES = EPI_BOX * EPI_BOX * 2;  // 8 KiB
constexpr int EPI_WG_BYTES = EPI_PANELS * EPI_PANEL_BYTES;
constexpr int SMEM_BYTES = RING_BYTES + 2 * EPI_WG_BYTES + 1024;  // + room to align the ring to 1024 B
constexpr int THREADS = 384;
constexpr int CONSUMER_WARPS = 8;
constexpr int CONSUMER_WGS = 2;
constexpr uint32_t FIXUP_BARRIER = 1;     // named barrier of the 256 consumer threads
constexpr uint32_t EPI_BARRIER = 2;       // + consumer: named barrier of one consumer warpgroup
constexpr int kMaxCtas = 160;             // workspace slots (one per CTA)
constexpr int SLOT_FLOAT4 = BM * BN / 4;  // 8192 float4 = 128 KiB per slot
static_assert(SMEM_BYTES + 256 <= 232448, "shared memory budget (dynamic + static barriers)");
static_assert(EPI_PANELS == 1 || EPI_PANELS == 2 || EPI_PANELS == 4, "panels must divide the 4 boxes");
static_assert(STAGE_BYTES % 1024 == 0 && EPI_PANEL_BYTES % 1024 == 0, "swizzled tiles start on 1024 B");

__device__ float4 g_partials[kMaxCtas * SLOT_FLOAT4];
__device__ unsigned int g_flags[kMaxCtas];

struct TileCoord {
  int m0, n0;
};

// Cluster tile ct covers row-blocks 2p, 2p+1 (p = pair index) and column block nb; rank r takes row
// block 2p + r. Grouped order: GROUP_P pairs advance together across all column blocks.
__device__ __forceinline__ TileCoord cluster_tile_coord(int ct, int p_blocks, int n_blocks, int rank) {
  const int per_group = GROUP_P * n_blocks;
  const int group = ct / per_group;
  const int first_p = group * GROUP_P;
  const int rows_in_group = min(GROUP_P, p_blocks - first_p);
  const int in_group = ct % per_group;
  const int p = first_p + in_group % rows_in_group;
  return {(2 * p + rank) * BM, (in_group / rows_in_group) * BN};
}

// One work item: k-steps [kb, ke) of cluster tile `tile`.
struct Work {
  int tile, kb, ke;
};

// v4's work list (see there): data-parallel cluster tiles, then this cluster's stream-K range.
struct Schedule {
  int next_dp, dp_tiles, stride, k_tiles, units, u, u_end;

  // Stream-K region: the partial wave alone when it is at least half a wave (ranges ≥ k_tiles/2: ≤ 2
  // contributors per tile), else the partial wave + one full wave (ranges ≥ k_tiles: ≤ 1). 32-bit on
  // purpose (a 64-bit division is a called routine); the host enables stream-K only when 2·G²·k_tiles < 2³¹.
  __device__ __forceinline__ Schedule(int cluster, int clusters, int tiles, int k_tiles_, bool stream_k)
      : next_dp(cluster), dp_tiles(tiles), stride(clusters), k_tiles(k_tiles_), units(0), u(0), u_end(0) {
    if (stream_k && tiles > clusters && tiles % clusters != 0) {
      const int rest = tiles % clusters;
      dp_tiles = tiles - (2 * rest >= clusters ? rest : rest + clusters);
      units = (tiles - dp_tiles) * k_tiles;
      u = range_begin(cluster);
      u_end = range_begin(cluster + 1);
    }
  }

  /// First stream-K k-step of work unit `c` (CTA or cluster index); range_begin(G) = units.
  __device__ __forceinline__ int range_begin(int c) const { return units * c / stride; }

  /// The next data-parallel (whole) tile only; next() then yields the rest (stream-K items).
  __device__ __forceinline__ bool next_whole(Work& w) {
    if (next_dp < dp_tiles) {
      w = {next_dp, 0, k_tiles};
      next_dp += stride;
      return true;
    }
    return false;
  }

  __device__ __forceinline__ bool next(Work& w) {
    if (next_dp < dp_tiles) {
      w = {next_dp, 0, k_tiles};
      next_dp += stride;
      return true;
    }
    if (u < u_end) {
      const int t = u / k_tiles, kb = u - t * k_tiles;
      const int ke = min(k_tiles, kb + (u_end - u));
      w = {dp_tiles + t, kb, ke};
      u += ke - kb;
      return true;
    }
    return false;
  }
};

// Stage release in both CTAs, called by all 128 threads of a consumer warpgroup once wgmma_wait_group
// has retired the stage's group. v7: lane 0 of every warp arrives locally and on the peer (16 arrivals
// per stage). kLightRelease (v8b, CUTLASS's PipelineTmaAsync::consumer_release): thread 0 arrives here,
// thread 32 on the peer (4 arrivals per stage); valid because the group is the warpgroup's.
__device__ __forceinline__ void release_stage(uint64_t* bar, uint32_t peer, int tid) {
  if constexpr (kLightRelease) {
    if (tid == 0) ptxb::mbarrier_arrive(bar);
    else if (tid == 32) ptxb::mbarrier_arrive_peer(bar, peer);
  } else if (tid % 32 == 0) {
    ptxb::mbarrier_arrive(bar);
    if constexpr (kLightPeerArrive) ptxb::mbarrier_arrive_peer(bar, peer);
    else ptxb::mbarrier_arrive_cluster(bar, peer);
  }
}

// Compile-time lag of a consumer's shape switches (a generic lambda's tag).
template <int L>
struct Lag {
  static constexpr int value = L;
};

// v4's register epilogue, kept for stream-K head tiles (adds NP partials in a fixed order).
template <int NP>
__device__ __forceinline__ void store_tile(__nv_bfloat16* __restrict__ C, const float (&acc)[BN / 2],
                                           const float4* p0, const float4* p1, int row, int col, int M, int N) {
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    float4 v = make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
    if constexpr (NP >= 1) {
      const float4 p = __ldcg(p0 + j * 128);
      v.x += p.x;
      v.y += p.y;
      v.z += p.z;
      v.w += p.w;
    }
    if constexpr (NP >= 2) {
      const float4 p = __ldcg(p1 + j * 128);
      v.x += p.x;
      v.y += p.y;
      v.z += p.z;
      v.w += p.w;
    }
    if (row < M) *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col + 8 * j) = __floats2bfloat162_rn(v.x, v.y);
    if (row + 8 < M)
      *reinterpret_cast<__nv_bfloat162*>(C + (size_t)(row + 8) * N + col + 8 * j) = __floats2bfloat162_rn(v.z, v.w);
  }
}

// Box Q (columns 64Q..64Q+63) of a deferred 64×256 slice (first global row row0 < M, columns n0..):
// pk[4·jg + i] holds the bf16 pair of accumulator registers 8·jg + 2i, 8·jg + 2i + 1 (jg = 16-column
// block). Staged with stmatrix in panel Q % EPI_PANELS (row r at r·128 B, 16-byte chunk c at
// (c ^ r%8)·16: the TMA's 128B swizzle, conflict-free), stored by thread tid == 0 as one bulk group.
// Before the panel is rewritten, the group that last read it (EPI_PANELS groups back: every deferred
// slice commits exactly 4 groups) must be done reading: wait_group.read EPI_PANELS-1 by the issuer
// (bulk groups are per thread), then the warpgroup's named barrier.
template <int Q>
__device__ __forceinline__ void store_box(const CUtensorMap* map_c, uint8_t* staging, const uint32_t (&pk)[BN / 4],
                                          int row0, int n0, int tid, uint32_t bar_id) {
  const int warp = tid / 32, lane = tid % 32;
  const int m = lane / 8;                                // stmatrix: lane L addresses matrix L/8, row L%8
  const int row = 16 * warp + (lane % 8) + 8 * (m % 2);  // matrices 0,2: rows 0-7; 1,3: rows 8-15
  const uint32_t row_off = row * 128, sw = row % 8;
  uint8_t* panel = staging + (Q % EPI_PANELS) * EPI_PANEL_BYTES;
  if (tid == 0) ptxb::tma_store_wait<EPI_PANELS - 1>();
  ptxb::named_barrier_sync(bar_id, 128);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int jg = 4 * Q + j;  // 16-column block within the 256 columns
    const uint32_t r[4] = {pk[4 * jg + 0], pk[4 * jg + 1], pk[4 * jg + 2], pk[4 * jg + 3]};
    const uint32_t chunk = 2 * j + m / 2;  // 16-byte chunk (8 columns) within the 128-byte box row
    ptxb::stmatrix_x4(panel + row_off + ((chunk ^ sw) * 16), r);
  }
  ptxb::fence_proxy_async_shared();  // this thread's stmatrix writes → visible to the TMA (async proxy)
  ptxb::named_barrier_sync(bar_id, 128);
  if (tid == 0) {
    ptxb::tma_store_2d(map_c, panel, n0 + EPI_BOX * Q, row0);
    ptxb::tma_store_commit();
  }
}

__global__ void __launch_bounds__(THREADS, 1)
expert_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                     const __grid_constant__ CUtensorMap map_c, __nv_bfloat16* __restrict__ C, int M, int N, int K,
                     unsigned int epoch, int stream_k) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full[STAGES];
  __shared__ __align__(8) uint64_t empty[STAGES];
  // Identical in both CTAs (same kernel, same static and dynamic sizes): multicast needs equal offsets.
  uint8_t* ring = smem_raw + ((1024 - (ptxb::smem_addr(smem_raw) & 1023)) & 1023);

  const int m_blocks = (M + BM - 1) / BM, n_blocks = N / BN, k_tiles = K / BK;
  const int p_blocks = (m_blocks + 1) / 2;
  const int ctiles = p_blocks * n_blocks;
  const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  const uint32_t rank = ptxb::cluster_ctarank(), peer = rank ^ 1;
  const int wg = ptxb::warpgroup_index();

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptxb::mbarrier_init(&full[s], 1);
      ptxb::mbarrier_init(&empty[s], CLUSTER * (kLightRelease ? CONSUMER_WGS : CONSUMER_WARPS));
    }
    ptxb::fence_mbarrier_init();
    ptxb::tma_prefetch_descriptor(&map_a);
    ptxb::tma_prefetch_descriptor(&map_b);
    ptxb::tma_prefetch_descriptor(&map_c);
  }
  ptxb::cluster_sync();  // both CTAs' barriers exist before any multicast or remote arrive

  Schedule sched(cluster_id, clusters, ctiles, k_tiles, stream_k != 0);
  Work w;

  if (wg == 0) {
    ptxb::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      int it = 0;
      while (sched.next(w)) {
        const TileCoord t = cluster_tile_coord(w.tile, p_blocks, n_blocks, rank);
        const bool has_a = t.m0 < M;  // rank 1 of the last pair may lie wholly below M: no A box
        const int n_half = t.n0 + static_cast<int>(rank) * B_HALF_ROWS;
        for (int kt = w.kb; kt < w.ke; ++kt, ++it) {
          const int s = it % STAGES;
          ptxb::mbarrier_wait_parity(&empty[s], ((it / STAGES) & 1) ^ 1);
          uint8_t* stage = ring + s * STAGE_BYTES;
          // Bytes landing here: own A box (if any) + both B halves (one multicast by the peer).
          ptxb::mbarrier_arrive_expect_tx(&full[s], (has_a ? A_BYTES : 0) + B_BYTES);
          if (has_a) ptxb::tma_load_2d(stage, &map_a, &full[s], kt * BK, t.m0);
          ptxb::tma_load_2d_multicast(stage + A_BYTES + rank * B_HALF_BYTES, &map_b, &full[s], kt * BK, n_half,
                                      static_cast<uint16_t>(0x3));
        }
      }
      // Drain: every stage filled here was released by both CTAs' consumers, so no remote arrive can
      // target this CTA's barriers once it leaves.
      for (int i = 0; i < STAGES; ++i, ++it) ptxb::mbarrier_wait_parity(&empty[it % STAGES], ((it / STAGES) & 1) ^ 1);
    }
    __syncwarp();
    ptxb::cluster_sync();
    return;
  }

  ptxb::setmaxnreg_inc<232>();
  const int consumer = wg - 1;  // rows [64·consumer, 64·consumer + 64) of this CTA's tile
  const int tid = threadIdx.x % 128;
  const uint32_t epi_bar = EPI_BARRIER + consumer;
  uint8_t* staging = ring + RING_BYTES + consumer * EPI_WG_BYTES;
  float acc[BN / 2];
  // Column halves: an m64n128 accumulator has the layout of either half of an m64n256 one (register i
  // ↔ column 8·(i/4) + …), so each half is the target of its own wgmma.
  float(&acc_lo)[BN / 4] = *reinterpret_cast<float(*)[BN / 4]>(&acc[0]);
  float(&acc_hi)[BN / 4] = *reinterpret_cast<float(*)[BN / 4]>(&acc[BN / 4]);
  constexpr uint32_t B_HI = (BN / 2) * 128;  // B rows 128..255 of a stage (16 KiB, 1024-aligned)
  uint32_t pk[BN / 4];      // the deferred slice, bf16x2
  bool pending = false;     // pk holds a slice still to be stored (warpgroup-uniform)
  int pend_row0 = 0, pend_n0 = 0;
  int it = 0;

  // Stage `it`'s operands.
  auto stage_a = [&]() { return ptxb::smem_addr(ring + (it % STAGES) * STAGE_BYTES) + consumer * (64 * 128); };
  auto stage_b = [&]() { return ptxb::smem_addr(ring + (it % STAGES) * STAGE_BYTES + A_BYTES); };
  // The 4 k16 slices of a k-step on the whole 64×256 accumulator (the first of an item overwrites).
  auto mma_full = [&](uint32_t a, uint32_t b, bool first) {
#pragma unroll
    for (int k = 0; k < BK / 16; ++k)
      ptxb::wgmma_m64k16_bf16<BN>(acc, ptxb::make_smem_desc_addr(a + 32 * k, 16, 1024, ptxb::Swizzle::b128),
                                  ptxb::make_smem_desc_addr(b + 32 * k, 16, 1024, ptxb::Swizzle::b128),
                                  !first || k > 0);
  };
  // The same on one column half (m64n128; B rows 0..127 or 128..255 of the stage).
  auto mma_half = [&](float(&d)[BN / 4], uint32_t a, uint32_t b, bool first) {
#pragma unroll
    for (int k = 0; k < BK / 16; ++k)
      ptxb::wgmma_m64k16_bf16<BN / 2>(d, ptxb::make_smem_desc_addr(a + 32 * k, 16, 1024, ptxb::Swizzle::b128),
                                      ptxb::make_smem_desc_addr(b + 32 * k, 16, 1024, ptxb::Swizzle::b128),
                                      !first || k > 0);
  };
  // Both halves of a k-step as one batch, k16 slice by slice (v8a's order).
  auto mma_both = [&](uint32_t a, uint32_t b) {
#pragma unroll
    for (int k = 0; k < BK / 16; ++k) {
      const uint64_t da = ptxb::make_smem_desc_addr(a + 32 * k, 16, 1024, ptxb::Swizzle::b128);
      ptxb::wgmma_m64k16_bf16<BN / 2>(acc_lo, da, ptxb::make_smem_desc_addr(b + 32 * k, 16, 1024, ptxb::Swizzle::b128),
                                      true);
      ptxb::wgmma_m64k16_bf16<BN / 2>(acc_hi, da,
                                      ptxb::make_smem_desc_addr(b + B_HI + 32 * k, 16, 1024, ptxb::Swizzle::b128),
                                      true);
    }
  };
  auto wait_full = [&]() { ptxb::mbarrier_wait_parity(&full[it % STAGES], (it / STAGES) & 1); };
  auto release_prev = [&]() { release_stage(&empty[(it - 1) % STAGES], peer, tid); };

  // An ordinary k-step (m64n256, one group): issue, let the previous group retire, release its stage.
  auto kstep = [&](int kt, int kb) {
    wait_full();
    const uint32_t a = stage_a(), b = stage_b();
    ptxb::wgmma_fence();  // also orders the pack's reads of acc before the first wgmma overwrites it
    mma_full(a, b, kt == kb);
    ptxb::wgmma_commit_group();
    ptxb::wgmma_wait_group<1>();
    if (kt > kb) release_prev();
    ++it;
  };
  // A shape switch (m64n256 ↔ m64n128 on the same registers) issues only after every group in flight
  // has retired (wait_group 0). Without that, ptxas serializes every wgmma of the kernel (C7511).
  // Switch into halves: both halves as one group (kt ≥ 1).
  auto kstep_enter_both = [&]() {
    wait_full();
    const uint32_t a = stage_a(), b = stage_b();
    ptxb::wgmma_wait_group<0>();
    release_prev();
    ptxb::wgmma_fence_registers(acc);
    ptxb::wgmma_fence();
    mma_both(a, b);
    ptxb::wgmma_commit_group();
    ++it;
  };
  // A k-step in halves after one in halves: v8a's k-step.
  auto kstep_both = [&]() {
    wait_full();
    const uint32_t a = stage_a(), b = stage_b();
    ptxb::wgmma_fence();
    mma_both(a, b);
    ptxb::wgmma_commit_group();
    ptxb::wgmma_wait_group<1>();
    release_prev();
    ++it;
  };
  // The last k-step of a whole tile followed by another: lo and hi as two groups. Enter = true: the
  // k-step before was m64n256 (switch); false: it was in halves (v8a).
  auto kstep_split_last = [&](auto enter) {
    wait_full();
    const uint32_t a = stage_a(), b = stage_b();
    if constexpr (decltype(enter)::value != 0) {
      ptxb::wgmma_wait_group<0>();
      release_prev();
      ptxb::wgmma_fence_registers(acc);
    }
    ptxb::wgmma_fence();
    mma_half(acc_lo, a, b, false);
    ptxb::wgmma_commit_group();
    mma_half(acc_hi, a, b + B_HI, false);
    ptxb::wgmma_commit_group();
    if constexpr (decltype(enter)::value == 0) {
      ptxb::wgmma_wait_group<2>();
      release_prev();
    }
    ++it;
  };
  // The first k-step of the next whole tile (v8a): pack each half of the previous tile into pk as soon
  // as its group retires, then start the new tile on that half while the other half still runs.
  auto kstep_handoff = [&]() {
    ptxb::wgmma_wait_group<1>();  // lo of the previous tile retired; hi still runs
    ptxb::wgmma_fence_registers(acc_lo);
#pragma unroll
    for (int i = 0; i < BN / 8; ++i) pk[i] = ptxb::pack_bf16x2(acc[2 * i], acc[2 * i + 1]);
    wait_full();
    const uint32_t a = stage_a(), b = stage_b();
    ptxb::wgmma_fence();  // the pack's reads of lo before the wgmma that overwrites it
    mma_half(acc_lo, a, b, true);
    ptxb::wgmma_commit_group();
    ptxb::wgmma_wait_group<1>();  // hi of the previous tile retired
    ptxb::wgmma_fence_registers(acc_hi);
#pragma unroll
    for (int i = BN / 8; i < BN / 4; ++i) pk[i] = ptxb::pack_bf16x2(acc[2 * i], acc[2 * i + 1]);
    ptxb::wgmma_fence();
    mma_half(acc_hi, a, b + B_HI, true);
    ptxb::wgmma_commit_group();
    release_prev();  // the previous tile's last stage
    ++it;
  };
  // Switch back to m64n256 once the halves' groups have retired.
  auto kstep_leave = [&]() {
    wait_full();
    const uint32_t a = stage_a(), b = stage_b();
    ptxb::wgmma_wait_group<0>();
    release_prev();
    ptxb::wgmma_fence_registers(acc);
    ptxb::wgmma_fence();
    mma_full(a, b, false);
    ptxb::wgmma_commit_group();
    ++it;
  };

  // Phase 1: the data-parallel whole tiles, each one's epilogue deferred into the next one's first 4
  // k-steps. (Two phases so that pk is provably dead in the stream-K paths: no spills.) The boundary
  // between two tiles is straight-line code inside one loop iteration, and the loop carries exactly
  // one m64n256 group (C7514 otherwise). Lag L (0 or 1): this warpgroup runs k-steps k_tiles-1-L ..
  // k_tiles-1 of a tile and 0 .. L of the next in halves. Consumer 1 with L = 1 (kStagger) has its two
  // switch drains one k-step away from consumer 0's, so the other warpgroup's queued wgmma fill them.
  auto phase1 = [&](auto lag) {
    constexpr int L = decltype(lag)::value;
    if (!sched.next_whole(w)) return;
    for (int kt = 0; kt < k_tiles - 1 - L; ++kt) kstep(kt, 0);  // the first tile, up to the halves
    Work nx;
    while (sched.next_whole(nx)) {
      const TileCoord t = cluster_tile_coord(w.tile, p_blocks, n_blocks, rank);
      pend_row0 = t.m0 + 64 * consumer;  // first global row of this warpgroup's 64×256 slice
      pend_n0 = t.n0;
      pending = pend_row0 < M;  // a slice wholly below M defers nothing (rows ≥ M: clipped by the TMA)
      if constexpr (L == 1) {
        kstep_enter_both();
        kstep_split_last(Lag<0>{});
      } else {
        kstep_split_last(Lag<1>{});
      }
      w = nx;
      kstep_handoff();  // packs the previous tile, issues k-step 0 of this one
      // k-steps 1..3: one box of the deferred slice stored after each k-step's group is issued.
      if (pending) store_box<0>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
      if constexpr (L == 1) kstep_both();
      else kstep_leave();
      if (pending) store_box<1>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
      if constexpr (L == 1) kstep_leave();
      else kstep(2, 0);
      if (pending) store_box<2>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
      kstep(3, 0);
      if (pending) store_box<3>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
      for (int kt = 4; kt < k_tiles - 1 - L; ++kt) kstep(kt, 0);
    }
    // The last whole tile: its remaining k-steps, then pack and flush synchronously (nothing follows
    // in this phase).
    for (int kt = k_tiles - 1 - L; kt < k_tiles; ++kt) kstep(kt, 0);
    ptxb::wgmma_wait_group<0>();
    ptxb::wgmma_fence_registers(acc);
    release_prev();
    const TileCoord t = cluster_tile_coord(w.tile, p_blocks, n_blocks, rank);
    pend_row0 = t.m0 + 64 * consumer;
    pend_n0 = t.n0;
    pending = pend_row0 < M;
    if (pending) {
#pragma unroll
      for (int i = 0; i < BN / 4; ++i) pk[i] = ptxb::pack_bf16x2(acc[2 * i], acc[2 * i + 1]);
    }
  };

  if (kHandoff && k_tiles >= 6) {
    if constexpr (kStagger) {
      if (consumer == 1) phase1(Lag<1>{});
      else phase1(Lag<0>{});
    } else {
      phase1(Lag<0>{});
    }
  } else {
    // kHandoff off, or K < 384 (never for this definition): v7's loop, no split boundary.
    while (sched.next_whole(w)) {
      const TileCoord t = cluster_tile_coord(w.tile, p_blocks, n_blocks, rank);
      int kt = 0;
      if (kt < k_tiles) kstep(kt++, 0);
      if (pending) store_box<0>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
      if (kt < k_tiles) kstep(kt++, 0);
      if (pending) store_box<1>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
      if (kt < k_tiles) kstep(kt++, 0);
      if (pending) store_box<2>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
      if (kt < k_tiles) kstep(kt++, 0);
      if (pending) store_box<3>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
      for (; kt < k_tiles; ++kt) kstep(kt, 0);
      ptxb::wgmma_wait_group<0>();
      ptxb::wgmma_fence_registers(acc);
      release_prev();
      pend_row0 = t.m0 + 64 * consumer;
      pend_n0 = t.n0;
      pending = pend_row0 < M;
      if (pending) {
#pragma unroll
        for (int i = 0; i < BN / 4; ++i) pk[i] = ptxb::pack_bf16x2(acc[2 * i], acc[2 * i + 1]);
      }
    }
  }
  if (pending) {  // the last data-parallel tile: flush it now
    store_box<0>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
    store_box<1>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
    store_box<2>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
    store_box<3>(&map_c, staging, pk, pend_row0, pend_n0, tid, epi_bar);
  }

  // Phase 2: this cluster's stream-K items (v4's synchronous register epilogues).
  while (sched.next(w)) {
    const TileCoord t = cluster_tile_coord(w.tile, p_blocks, n_blocks, rank);
    for (int kt = w.kb; kt < w.ke; ++kt) kstep(kt, w.kb);
    ptxb::wgmma_wait_group<0>();
    ptxb::wgmma_fence_registers(acc);
    release_prev();

    const int row0 = t.m0 + 64 * consumer;
    if (w.kb == 0 && w.ke == k_tiles) {
      // A whole tile inside the stream-K range (only when ranges ≥ k_tiles; never at M = 8192): v4's
      // register epilogue (a TMA store from pk here made the head path below spill; no commit, so the
      // panel cycle stays aligned).
      store_tile<0>(C, acc, nullptr, nullptr, row0 + ptxb::accumulator_row(0, tid), t.n0 + ptxb::accumulator_col(0, tid),
                    M, N);
      continue;
    }

    // Slot layout: float4 j of thread tid of consumer c at (c·32 + j)·128 + tid (writer = reader mapping).
    const int slot_index = (consumer * (BN / 8)) * 128 + tid;
    const int slot_cta = cluster_id * CLUSTER + static_cast<int>(rank);  // this CTA's slot and flag
    if (w.kb > 0) {
      // Tail or middle of a split tile (only ever the cluster's first stream-K item): publish this CTA's
      // partial for the same-rank CTA of the cluster that holds the tile's head (1 or 2 clusters back).
      float4* slot = g_partials + static_cast<size_t>(slot_cta) * SLOT_FLOAT4 + slot_index;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
        __stcg(slot + j * 128, make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
      ptxb::named_barrier_sync(FIXUP_BARRIER, 256);  // all 256 consumer threads have written
      if (threadIdx.x == 128) {
        __threadfence();  // release: the slot is visible before the flag
        atomicExch(&g_flags[slot_cta], epoch);
      }
      continue;
    }
    // Head of a split tile (the cluster's last item): wait for the 1 or 2 tails (v4), add, store.
    const int row = row0 + ptxb::accumulator_row(0, tid);  // rows ≥ M are skipped
    const int col = t.n0 + ptxb::accumulator_col(0, tid);
    const int tile_end = (w.tile - sched.dp_tiles + 1) * k_tiles;  // in stream-K k-steps
    const int count = sched.range_begin(cluster_id + 2) < tile_end ? 2 : 1;
    const int first = slot_cta + CLUSTER;
    if (threadIdx.x == 128) {
      for (int c = 0; c < count; ++c) {
        const volatile unsigned int* flag = &g_flags[first + c * CLUSTER];
        while (*flag != epoch) {
        }
      }
      __threadfence();  // acquire: the slots are read after the flags
    }
    ptxb::named_barrier_sync(FIXUP_BARRIER, 256);
    const float4* p0 = g_partials + static_cast<size_t>(first) * SLOT_FLOAT4 + slot_index;
    if (count == 2) store_tile<2>(C, acc, p0, p0 + CLUSTER * SLOT_FLOAT4, row, col, M, N);
    else store_tile<1>(C, acc, p0, nullptr, row, col, M, N);
  }
  // The staging buffer must outlive the bulk stores' shared-memory reads.
  if (tid == 0) ptxb::tma_store_wait<0>();
  __syncwarp();
  ptxb::cluster_sync();
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
  if (B.shape[1] != K || C.shape[0] != M || C.shape[1] != N || N % BN || K % BK || K <= 0 || M <= 0 ||
      M > (1 << 30) || A.stride[0] != K || B.stride[0] != K || C.stride[0] != N)
    return cudaErrorInvalidValue;

  CUtensorMap map_a, map_b, map_c;
  if (ptxb::make_tensor_map_2d(&map_a, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, A.data, K, M, K * 2, BK, BM,
                               CU_TENSOR_MAP_SWIZZLE_128B) != CUDA_SUCCESS ||
      ptxb::make_tensor_map_2d(&map_b, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, B.data, K, N, K * 2, BK, B_HALF_ROWS,
                               CU_TENSOR_MAP_SWIZZLE_128B) != CUDA_SUCCESS ||
      ptxb::make_tensor_map_2d(&map_c, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, C.data, N, M, N * 2, EPI_BOX, EPI_BOX,
                               CU_TENSOR_MAP_SWIZZLE_128B) != CUDA_SUCCESS)
    return cudaErrorInvalidValue;

  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CLUSTER;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.blockDim = dim3(THREADS, 1, 1);
  cfg.dynamicSmemBytes = SMEM_BYTES;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;

  static int max_clusters = 0;
  static unsigned int epoch = 0;
  if (max_clusters == 0) {
    cudaError_t err =
        cudaFuncSetAttribute(expert_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
    if (err != cudaSuccess) return static_cast<int>(err);
    int device = 0, sms = 0;
    err = cudaGetDevice(&device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return static_cast<int>(err);
    cfg.gridDim = dim3(sms - sms % CLUSTER, 1, 1);
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, expert_gemm, &cfg) != cudaSuccess || n <= 0) {
      cudaGetLastError();  // clear a failed query; fall back to one cluster per SM pair
      n = sms / CLUSTER;
    }
    if (n > sms / CLUSTER) n = sms / CLUSTER;
    max_clusters = n > 0 ? n : 1;
  }
  if (++epoch == 0) epoch = 1;  // flags start at 0: never wait for epoch 0
  const int64_t m_blocks = (M + BM - 1) / BM;
  const int64_t ctiles = ((m_blocks + 1) / 2) * (N / BN);
  const int clusters = static_cast<int>(ctiles < max_clusters ? ctiles : max_clusters);
  // Stream-K relies on every cluster being resident at once (a head waits for the next cluster's tail).
  const int stream_k =
      kStreamK && CLUSTER * clusters <= kMaxCtas && 2LL * clusters * clusters * (K / BK) < (1LL << 31) ? 1 : 0;
  cfg.gridDim = dim3(CLUSTER * clusters, 1, 1);
  cudaError_t err = cudaLaunchKernelEx(&cfg, expert_gemm, map_a, map_b, map_c,
                                       static_cast<__nv_bfloat16*>(C.data), static_cast<int>(M), static_cast<int>(N),
                                       static_cast<int>(K), epoch, stream_k);
  if (err != cudaSuccess) return static_cast<int>(err);
  return static_cast<int>(cudaGetLastError());
}

// Expert kernel for mha_bwd_d128: dQ, dK, dV of O = softmax(Q·Kᵀ/√128)·V from Q, K, V, O, dO and the
// forward's natural-log LSE, B×H heads of S×128 bf16 (non-causal; causal with kCausal below), fp32
// accumulation, written with the Hopper pack (ptxb/sm90.cuh) plus a few local helpers (below).
//
// Three kernels on `stream` (FlashAttention-2/3 scheme, patterns/fa3_backward.md):
//  1. bwd_pre: per row, Dl = Σ_d dO·O (fp32) and LSE·log2(e), stored per 64-row query block as one
//     512-B record [64 × LSE·log2e | 64 × Dl] (one TMA box); zero the fp32 dQ accumulator.
//  2. bwd_main: one CTA per (128-key block n, head, batch), 384 threads = 3 warpgroups. WG0 = producer
//     (setmaxnreg 24): one thread loads K_n, V_n once (TMA, 128B swizzle) and streams Q_m, dO_m (64 rows,
//     two 64-column panels) and the LSE/Dl record of query block m through a 2-stage ring. WG1, WG2
//     (setmaxnreg 240) each own 64 keys (kv rows 64·cw..) and per query block m compute the transposes
//       Sᵀ  = K_w·Q_mᵀ    (m64n64k16 SS, A = K rows K-major, B = Q rows K-major, 8 k-steps over d)
//       dPᵀ = V_w·dO_mᵀ   (the same with V and dO)
//       Pᵀ  = exp2(Sᵀ·τ·log2e − LSE·log2e[q]) (causal: 0 where key > query), dSᵀ = Pᵀ∘(dPᵀ − Dl[q])
//       dV_w += Pᵀ·dO_m   (m64n128k16 RS: Pᵀ straight from the accumulator registers; B = dO MN-major)
//       dK_w += dSᵀ·Q_m   (RS, B = Q MN-major)
//       dSᵀ (bf16) → sdS [128 kv rows × 64 q, 128B swizzle] by both consumers; named barrier;
//       dQ_part[64 q × 64 d] = dS·K[:, 64·cw..]  (m64n64k16 SS, A = sdS MN-major (TransA), B = K MN-major)
//     dQ_part goes to a 32 KB fp32 staging buffer in a thread-order layout (conflict-free float4
//     stores), and one thread adds the whole 32 KB block into the accumulator with
//     cp.reduce.async.bulk .add.f32 (the accumulator uses the same per-block permutation; kernel 3
//     undoes it). Epilogue: dK·τ, dV → bf16 stores from registers.
//  3. bwd_post: dQ = bf16(τ · accumulator), un-permuting each 64×128 block.
//
// Register layouts (thread t = 0..127 of a consumer warpgroup, w = t/32, l = t%32):
//  * m64nN fp32 accumulator d[i]: row = 16w + l/4 + 8·((i/2)%2), col = 8·(i/4) + 2·(l%4) + (i%2).
//    Sᵀ/dPᵀ rows are keys, columns are queries: LSE and Dl are per column.
//  * RS A fragment of k-slice kk (query columns 16kk..16kk+15): a[q] = pack(x[8kk+2q], x[8kk+2q+1]),
//    as in the forward expert (P there).
// Shared-memory operand layouts (TMA box 64 columns × 64 rows, SWIZZLE_128B; row r at r·128 B of its
// 64-column panel, 16-B chunk c stored at c ^ (r%8); checked by a Python model of TMA + descriptors):
//  * K, V tiles: 128 rows, panels 16 KiB apart. As K-major A (Sᵀ, dPᵀ): K + (k/4)·16384 + cw·8192 +
//    (k%4)·32, SBO 1024. As MN-major B of dQ (N = d, K = keys): K + cw·16384 + k·2048, LBO 16384, SBO 1024.
//  * Q, dO tiles: 64 rows, panels 8 KiB apart. As K-major B (Sᵀ, dPᵀ): Q + (k/4)·8192 + (k%4)·32.
//    As MN-major B (dV, dK; N = d over two panels, K = queries): Q + k·2048, LBO 8192, SBO 1024.
//  * sdS: dSᵀ rows (keys) of 64 queries = 128 B, i.e. dS with M = q contiguous: MN-major A of the dQ
//    GEMM, sdS + k·2048 (16 keys per k-step), SBO 1024 (one 64-wide M panel, LBO unused). Thread
//    writes of pack i (even) of key row kv: kv·128 + (((i/4) ^ (kv%8))·16) + 4·(l%4), kv%8 = l/4.
//    kDsKMajor = true (the default) instead stores dS K-major (q rows, keys contiguous, two 8 KiB
//    panels) with stmatrix.trans and uses a plain K-major A (no TransA). Both were correct on the
//    H200 (2026-12-01, S = 4096); K-major ran 7693 µs against 8043 µs with TransA.
#include <cuda.h>
#include <cuda_bf16.h>

#include "ptxb/sm90.cuh"
#include "ptxbench_abi.h"

namespace {

// Causal switch: key j attended by query i only if j <= i (KV block n meets query blocks m >= 2n;
// blocks 2n and 2n+1 straddle the diagonal and are masked). The causal expert (mha_bwd_d128_causal)
// is this file with this set to true.
constexpr bool kCausal = false;
constexpr bool kDsKMajor = true;            // dS for the dQ GEMM: false = MN-major A (TransA), true = K-major
constexpr int D = 128;                      // head dimension
constexpr int BQ = 64, BKV = 128;           // query rows per step, keys per CTA
constexpr int STAGES = 2;                   // Q/dO ring depth
constexpr int KV_TILE = BKV * D * 2;        // 32 KiB: two 16 KiB panels of 128 rows × 128 B
constexpr int Q_TILE = BQ * D * 2;          // 16 KiB: two 8 KiB panels of 64 rows × 128 B
constexpr int LD_BYTES = 2 * BQ * 4;        // 512 B: 64 × LSE·log2e, 64 × Dl
constexpr int K_OFF = 0;
constexpr int V_OFF = K_OFF + KV_TILE;
constexpr int Q_OFF = V_OFF + KV_TILE;
constexpr int DO_OFF = Q_OFF + STAGES * Q_TILE;
constexpr int DS_OFF = DO_OFF + STAGES * Q_TILE;  // 16 KiB: 128 keys × 64 queries bf16
constexpr int DQ_OFF = DS_OFF + BKV * BQ * 2;     // 32 KiB fp32 staging of a 64 × 128 dQ block
constexpr int LD_OFF = DQ_OFF + BQ * D * 4;       // STAGES × 512 B
constexpr int SMEM_BYTES = LD_OFF + STAGES * LD_BYTES + 1024;  // + room to align to 1024 B (178 KiB)
constexpr int THREADS = 384;
constexpr int CONSUMER_WARPS = 8;  // empty barriers: one arrival per consumer warp
constexpr uint32_t BAR_DS = 1, BAR_DQ = 2;  // named barriers of the two consumer warpgroups (256 threads)
constexpr float kScale = 0.08838834764831845f;             // 1/√128
constexpr float kScaleLog2 = kScale * 1.4426950408889634f;  // τ · log2(e)
constexpr float kLog2e = 1.4426950408889634f;

static_assert(SMEM_BYTES <= 232448, "shared memory budget");

// ---- local helpers (not in the pack) -------------------------------------------------------------
// exp2 on the MUFU unit without exp2f's range fix-up; ex2.approx(-inf) = +0.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Keep RS A-fragment registers alive and unmoved up to this point (called after the wait that retires
// the wgmma reading them).
__device__ __forceinline__ void keep_fragment(uint32_t (&p)[4][4]) {
#pragma unroll
  for (int k = 0; k < 4; ++k)
#pragma unroll
    for (int q = 0; q < 4; ++q) asm volatile("" : "+r"(p[k][q])::"memory");
}

// Bulk (non-tensor) reduction of `bytes` of fp32 from shared memory into global memory (async proxy,
// bulk-group completion: commit with tma_store_commit, wait with tma_store_wait / bulk_wait_all).
__device__ __forceinline__ void bulk_reduce_add_f32(float* gdst, const void* ssrc, uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(gdst),
               "r"(ptxb::smem_addr(ssrc)), "r"(bytes)
               : "memory");
}

// Wait until every committed bulk group of this thread has completed (writes included).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
// ---------------------------------------------------------------------------------------------------

__device__ __forceinline__ uint64_t desc_kmajor(uint32_t addr) {
  return ptxb::make_smem_desc_addr(addr, 16, 1024, ptxb::Swizzle::b128);
}
__device__ __forceinline__ uint64_t desc_mn(uint32_t addr, uint32_t panel_bytes) {
  return ptxb::make_smem_desc_addr(addr, panel_bytes, 1024, ptxb::Swizzle::b128);
}

// X[64 kv × 64 q] = KV_w[64 × 128] · QO[64 × 128]ᵀ: 8 k16 steps over the head dimension.
__device__ __forceinline__ void issue_kq(float (&x)[32], uint32_t kv_addr, uint32_t q_addr) {
#pragma unroll
  for (int k = 0; k < 8; ++k)
    ptxb::wgmma_m64k16_bf16<64>(x, desc_kmajor(kv_addr + (k / 4) * (KV_TILE / 2) + (k % 4) * 32),
                                desc_kmajor(q_addr + (k / 4) * (Q_TILE / 2) + (k % 4) * 32), k > 0);
}

// Acc[64 kv × 128 d] += Frag[64 kv × 64 q] · T[64 q × 128 d]: 4 k16 steps over the queries.
__device__ __forceinline__ void issue_acc(float (&acc)[64], const uint32_t (&f)[4][4], uint32_t t_addr) {
#pragma unroll
  for (int k = 0; k < 4; ++k)
    ptxb::wgmma_m64k16_bf16_rs<128, /*TransB=*/true>(acc, f[k], desc_mn(t_addr + k * 2048, Q_TILE / 2), true);
}

// dQ_part[64 q × 64 d] = dS[64 q × 128 kv] · K[128 kv × 64 d (half cw)]: 8 k16 steps over the keys.
__device__ __forceinline__ void issue_dq(float (&dq)[32], uint32_t ds_addr, uint32_t k_half_addr) {
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    if constexpr (kDsKMajor)
      ptxb::wgmma_m64k16_bf16<64, false, true>(dq, desc_kmajor(ds_addr + (k / 4) * 8192 + (k % 4) * 32),
                                               desc_mn(k_half_addr + k * 2048, KV_TILE / 2), k > 0);
    else
      ptxb::wgmma_m64k16_bf16<64, true, true>(dq, desc_mn(ds_addr + k * 2048, 8192),
                                              desc_mn(k_half_addr + k * 2048, KV_TILE / 2), k > 0);
  }
}

__global__ void __launch_bounds__(THREADS, 1)
bwd_main(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
         const __grid_constant__ CUtensorMap map_v, const __grid_constant__ CUtensorMap map_do,
         const __grid_constant__ CUtensorMap map_ld, float* __restrict__ dQacc, __nv_bfloat16* __restrict__ dK,
         __nv_bfloat16* __restrict__ dV, int S) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t kv_full;
  __shared__ __align__(8) uint64_t q_full[STAGES], q_empty[STAGES], do_full[STAGES], do_empty[STAGES];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));

  const int wg = ptxb::warpgroup_index();
  const int n = blockIdx.x;                            // key block (causal: small n = most work, first)
  const int bh = blockIdx.z * gridDim.y + blockIdx.y;  // (batch, head)
  const int row0 = bh * S;                             // first row of this head in the [B·H·S, 128] view
  const int kv0 = n * BKV;                             // first key of this CTA within the head
  const int m_begin = kCausal ? kv0 / BQ : 0;          // first query block meeting these keys
  const int n_steps = S / BQ - m_begin;                // producer and consumers run exactly this many

  if (threadIdx.x == 0) {
    ptxb::mbarrier_init(&kv_full, 1);
    for (int s = 0; s < STAGES; ++s) {
      ptxb::mbarrier_init(&q_full[s], 1);
      ptxb::mbarrier_init(&do_full[s], 1);
      ptxb::mbarrier_init(&q_empty[s], CONSUMER_WARPS);
      ptxb::mbarrier_init(&do_empty[s], CONSUMER_WARPS);
    }
    ptxb::fence_mbarrier_init();
    ptxb::tma_prefetch_descriptor(&map_q);
    ptxb::tma_prefetch_descriptor(&map_k);
    ptxb::tma_prefetch_descriptor(&map_v);
    ptxb::tma_prefetch_descriptor(&map_do);
    ptxb::tma_prefetch_descriptor(&map_ld);
  }
  __syncthreads();  // the last CTA-wide barrier

  if (wg == 0) {
    // ---------------- producer ----------------
    ptxb::setmaxnreg_dec<24>();
    if (threadIdx.x == 0) {
      ptxb::mbarrier_arrive_expect_tx(&kv_full, 2 * KV_TILE);
      for (int p = 0; p < 2; ++p)    // 64-column panel
        for (int h = 0; h < 2; ++h) {  // 64-row half
          ptxb::tma_load_2d(smem + K_OFF + p * (KV_TILE / 2) + h * 8192, &map_k, &kv_full, 64 * p, row0 + kv0 + 64 * h);
          ptxb::tma_load_2d(smem + V_OFF + p * (KV_TILE / 2) + h * 8192, &map_v, &kv_full, 64 * p, row0 + kv0 + 64 * h);
        }
      for (int it = 0; it < n_steps; ++it) {
        const int s = it % STAGES;
        const uint32_t ph = (it / STAGES) & 1;
        const int m = m_begin + it;
        const int qrow = row0 + m * BQ;
        uint8_t* sq = smem + Q_OFF + s * Q_TILE;
        uint8_t* sdo = smem + DO_OFF + s * Q_TILE;
        ptxb::mbarrier_wait_parity(&q_empty[s], ph ^ 1);  // first STAGES waits pass on fresh barriers
        ptxb::mbarrier_arrive_expect_tx(&q_full[s], Q_TILE + LD_BYTES);
        ptxb::tma_load_2d(sq, &map_q, &q_full[s], 0, qrow);
        ptxb::tma_load_2d(sq + Q_TILE / 2, &map_q, &q_full[s], 64, qrow);
        ptxb::tma_load_2d(smem + LD_OFF + s * LD_BYTES, &map_ld, &q_full[s], 0, qrow / BQ);
        ptxb::mbarrier_wait_parity(&do_empty[s], ph ^ 1);
        ptxb::mbarrier_arrive_expect_tx(&do_full[s], Q_TILE);
        ptxb::tma_load_2d(sdo, &map_do, &do_full[s], 0, qrow);
        ptxb::tma_load_2d(sdo + Q_TILE / 2, &map_do, &do_full[s], 64, qrow);
      }
    }
    return;  // the consumers wait for every load, so the CTA outlives all TMA traffic
  }

  // ---------------- consumers ----------------
  ptxb::setmaxnreg_inc<240>();
  const int cw = wg - 1;  // keys [64·cw, 64·cw + 64) of the KV block; d columns [64·cw, +64) of dQ
  const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
  const bool leader = threadIdx.x == 128;  // issues (and waits for) the dQ bulk reductions
  const uint32_t base = ptxb::smem_addr(smem);
  const uint32_t k_rows = base + K_OFF + cw * 8192;  // this warpgroup's 64 key rows (8 atoms: 1024-aligned)
  const uint32_t v_rows = base + V_OFF + cw * 8192;
  const uint32_t k_half = base + K_OFF + cw * (KV_TILE / 2);  // d panel cw of K (B of the dQ GEMM)
  const uint32_t ds_addr = base + DS_OFF;
  uint8_t* sds = smem + DS_OFF;
  float* sdq = reinterpret_cast<float*>(smem + DQ_OFF);
  const int kv_lo = 64 * cw + 16 * warp + lane / 4;  // this thread's key row in the block (and + 8)
  const int qc = 2 * (lane % 4);                      // its query column offset inside each 8-column group

  float dv_acc[64], dk_acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) dv_acc[i] = dk_acc[i] = 0.f;

  ptxb::mbarrier_wait_parity(&kv_full, 0);

  for (int it = 0; it < n_steps; ++it) {
    const int s = it % STAGES;
    const uint32_t ph = (it / STAGES) & 1;
    const int m = m_begin + it;
    const uint32_t q_addr = base + Q_OFF + s * Q_TILE;
    const uint32_t do_addr = base + DO_OFF + s * Q_TILE;
    const float* ld = reinterpret_cast<const float*>(smem + LD_OFF + s * LD_BYTES);  // [64 lse2 | 64 Dl]

    float s_acc[32], dp_acc[32];
    ptxb::mbarrier_wait_parity(&q_full[s], ph);
    ptxb::wgmma_fence();
    issue_kq(s_acc, k_rows, q_addr);
    ptxb::wgmma_commit_group();
    ptxb::mbarrier_wait_parity(&do_full[s], ph);
    ptxb::wgmma_fence();
    issue_kq(dp_acc, v_rows, do_addr);
    ptxb::wgmma_commit_group();

    // Pᵀ = exp2(Sᵀ·τlog2e − lse2[q]) once Sᵀ has retired (dPᵀ may still run).
    ptxb::wgmma_wait_group<1>();
    ptxb::wgmma_fence_registers(s_acc);
    const bool diag = kCausal && m * BQ < kv0 + BKV;  // only blocks 2n, 2n+1 can hold key > query
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float2 l2 = *reinterpret_cast<const float2*>(ld + 8 * j + qc);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float x0 = s_acc[4 * j + 2 * h], x1 = s_acc[4 * j + 2 * h + 1];
        if (diag) {  // key kv0 + kv_lo + 8h > query m·64 + 8j + qc + e  →  P = 0
          const int lim = m * BQ + 8 * j + qc - kv0 - kv_lo - 8 * h;
          if (lim < 0) x0 = -INFINITY;
          if (lim + 1 < 0) x1 = -INFINITY;
        }
        s_acc[4 * j + 2 * h] = fast_exp2(fmaf(x0, kScaleLog2, -l2.x));
        s_acc[4 * j + 2 * h + 1] = fast_exp2(fmaf(x1, kScaleLog2, -l2.y));
      }
    }
    uint32_t pf[4][4], dsf[4][4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
      for (int q = 0; q < 4; ++q) pf[k][q] = ptxb::pack_bf16x2(s_acc[8 * k + 2 * q], s_acc[8 * k + 2 * q + 1]);

    // dSᵀ = Pᵀ ∘ (dPᵀ − Dl[q]) in fp32, then bf16.
    ptxb::wgmma_wait_group<0>();
    ptxb::wgmma_fence_registers(dp_acc);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float2 dl = *reinterpret_cast<const float2*>(ld + BQ + 8 * j + qc);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        dp_acc[4 * j + 2 * h] = s_acc[4 * j + 2 * h] * (dp_acc[4 * j + 2 * h] - dl.x);
        dp_acc[4 * j + 2 * h + 1] = s_acc[4 * j + 2 * h + 1] * (dp_acc[4 * j + 2 * h + 1] - dl.y);
      }
    }
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
      for (int q = 0; q < 4; ++q) dsf[k][q] = ptxb::pack_bf16x2(dp_acc[8 * k + 2 * q], dp_acc[8 * k + 2 * q + 1]);

    // dSᵀ → sdS (free: both warpgroups passed BAR_DQ after their previous dQ GEMM retired).
    if constexpr (kDsKMajor) {
      // stmatrix.trans: lane L gives row q = 16k + 8·(mat/2) + L%8 of matrix mat = L/8, whose 8 keys
      // kv0 = 64cw + 16w + 8·(mat%2).. form chunk 2w + mat%2 of panel cw.
      const int mat = lane / 8;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const int q = 16 * k + 8 * (mat / 2) + lane % 8;
        ptxb::stmatrix_x4_trans(sds + cw * 8192 + q * 128 + (((2 * warp + mat % 2) ^ (q % 8)) * 16), dsf[k]);
      }
    } else {
#pragma unroll
      for (int k = 0; k < 4; ++k)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int kv = kv_lo + 8 * (q % 2);  // kv % 8 == lane / 4
          *reinterpret_cast<uint32_t*>(sds + kv * 128 + (((2 * k + q / 2) ^ (lane / 4)) * 16) + 4 * (lane % 4)) =
              dsf[k][q];
        }
    }
    ptxb::fence_proxy_async_shared();

    // dV += Pᵀ·dO, dK += dSᵀ·Q (RS), running while the other warpgroup finishes its dS.
    ptxb::wgmma_fence();
    issue_acc(dv_acc, pf, do_addr);
    issue_acc(dk_acc, dsf, q_addr);
    ptxb::wgmma_commit_group();

    if (leader) ptxb::tma_store_wait<0>();  // the previous bulk reduction has read the dQ staging buffer
    ptxb::named_barrier_sync(BAR_DS, 256);  // both halves of dS written; staging free

    float dq_acc[32];
    ptxb::wgmma_fence();
    issue_dq(dq_acc, ds_addr, k_half);
    ptxb::wgmma_commit_group();
    ptxb::wgmma_wait_group<0>();  // dV, dK and dQ GEMMs retired: Q, dO, sdS no longer read
    ptxb::wgmma_fence_registers(dq_acc);
    ptxb::wgmma_fence_registers(dv_acc);
    ptxb::wgmma_fence_registers(dk_acc);
    keep_fragment(pf);
    keep_fragment(dsf);
    if (lane == 0) {
      ptxb::mbarrier_arrive(&q_empty[s]);
      ptxb::mbarrier_arrive(&do_empty[s]);
    }

    // dQ part → staging (float4 g = d[4g..4g+3] of thread t at cw·4096 + g·512 + 4t floats).
#pragma unroll
    for (int g = 0; g < 8; ++g)
      *reinterpret_cast<float4*>(sdq + cw * 4096 + g * 512 + 4 * tid) =
          make_float4(dq_acc[4 * g], dq_acc[4 * g + 1], dq_acc[4 * g + 2], dq_acc[4 * g + 3]);
    ptxb::fence_proxy_async_shared();
    ptxb::named_barrier_sync(BAR_DQ, 256);  // staging complete; both dQ GEMMs retired (sdS free)
    if (leader) {
      bulk_reduce_add_f32(dQacc + (size_t)(row0 + m * BQ) * D, sdq, BQ * D * 4);
      ptxb::tma_store_commit();
    }
  }
  if (leader) bulk_wait_all();

  // Epilogue: dK = τ·dSᵀQ, dV; bf16 pairs straight from the accumulators.
  const size_t r = (size_t)(row0 + kv0 + kv_lo);
  __nv_bfloat16* k0p = dK + r * D + qc;
  __nv_bfloat16* v0p = dV + r * D + qc;
#pragma unroll
  for (int jj = 0; jj < 16; ++jj) {
    *reinterpret_cast<uint32_t*>(k0p + 8 * jj) = ptxb::pack_bf16x2(dk_acc[4 * jj] * kScale, dk_acc[4 * jj + 1] * kScale);
    *reinterpret_cast<uint32_t*>(k0p + 8 * D + 8 * jj) =
        ptxb::pack_bf16x2(dk_acc[4 * jj + 2] * kScale, dk_acc[4 * jj + 3] * kScale);
    *reinterpret_cast<uint32_t*>(v0p + 8 * jj) = ptxb::pack_bf16x2(dv_acc[4 * jj], dv_acc[4 * jj + 1]);
    *reinterpret_cast<uint32_t*>(v0p + 8 * D + 8 * jj) = ptxb::pack_bf16x2(dv_acc[4 * jj + 2], dv_acc[4 * jj + 3]);
  }
}

// One warp per row: Dl = Σ_d dO·O, LSE·log2e into the block record; zero the row's 128 accumulator floats
// (the accumulator is permuted only within 64-row blocks, so zeroing row by row covers it).
__global__ void __launch_bounds__(256)
bwd_pre(const __nv_bfloat16* __restrict__ O, const __nv_bfloat16* __restrict__ dO, const float* __restrict__ LSE,
        float* __restrict__ LD, float* __restrict__ dQacc, int64_t rows) {
  const int lane = threadIdx.x & 31;
  const int64_t r = (int64_t)blockIdx.x * 8 + (threadIdx.x >> 5);
  if (r >= rows) return;  // whole warps leave together
  const uint2 uo = *reinterpret_cast<const uint2*>(O + r * D + lane * 4);
  const uint2 ud = *reinterpret_cast<const uint2*>(dO + r * D + lane * 4);
  const float2 o0 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&uo.x));
  const float2 o1 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&uo.y));
  const float2 d0 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&ud.x));
  const float2 d1 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&ud.y));
  float sum = o0.x * d0.x + o0.y * d0.y + o1.x * d1.x + o1.y * d1.y;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (lane == 0) {
    const int64_t blk = r / BQ, w = r % BQ;
    LD[blk * 2 * BQ + w] = LSE[r] * kLog2e;
    LD[blk * 2 * BQ + BQ + w] = sum;
  }
  *reinterpret_cast<float4*>(dQacc + r * D + lane * 4) = make_float4(0.f, 0.f, 0.f, 0.f);
}

// dQ = bf16(τ · accumulator): one CTA per 64-row block, float f of the block holds (see bwd_main)
// half cw = f/4096, group g = (f/512)%8, thread t = (f/4)%128, element e = f%4.
__global__ void __launch_bounds__(256)
bwd_post(const float* __restrict__ dQacc, __nv_bfloat16* __restrict__ dQ) {
  const size_t blk = blockIdx.x;
  const float4* src = reinterpret_cast<const float4*>(dQacc + blk * (BQ * D));
  __nv_bfloat16* dst = dQ + blk * (BQ * D);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int f4 = k * 256 + threadIdx.x;
    const int t = f4 % 128, g = (f4 / 128) % 8, cw = f4 / 1024;
    const int row = 16 * (t / 32) + (t % 32) / 4, col = 64 * cw + 8 * g + 2 * (t % 4);
    const float4 v = src[f4];
    *reinterpret_cast<uint32_t*>(dst + row * D + col) = ptxb::pack_bf16x2(v.x * kScale, v.y * kScale);
    *reinterpret_cast<uint32_t*>(dst + (row + 8) * D + col) = ptxb::pack_bf16x2(v.z * kScale, v.w * kScale);
  }
}

bool is_bhsd(const ptxb_tensor& t, int32_t dtype, int ndim, const int64_t* shape) {
  if (t.dtype != dtype || t.ndim != ndim || !t.data || reinterpret_cast<uintptr_t>(t.data) % (dtype == PTXB_BF16 ? 16 : 4) != 0)
    return false;
  int64_t stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (t.shape[d] != shape[d] || t.stride[d] != stride) return false;
    stride *= shape[d];
  }
  return true;
}

// fp32 scratch (dQ accumulator rows·128, then the LSE/Dl records rows·2), kept and grown across calls.
float* g_scratch = nullptr;
size_t g_scratch_bytes = 0;

// Tensor maps of the last call (encoding them costs host time on every call otherwise).
struct MapCache {
  const void *q = nullptr, *k = nullptr, *v = nullptr, *dO = nullptr, *ld = nullptr;
  int64_t rows = 0;
  CUtensorMap map_q, map_k, map_v, map_do, map_ld;
};

}  // namespace

PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  if (nargs != 9 || !args) return (int)cudaErrorInvalidValue;
  if (args[0].ndim != 4) return (int)cudaErrorInvalidValue;
  const int64_t* shape = args[0].shape;  // [B, H, S, D]
  const int64_t B = shape[0], H = shape[1], S = shape[2];
  if (shape[3] != D || B <= 0 || H <= 0 || S <= 0 || S % BKV != 0 || B > 65535 || H > 65535 ||
      B * H * S > (int64_t(1) << 31) - 1)
    return (int)cudaErrorInvalidValue;
  for (int i = 0; i < 9; ++i) {  // Q, K, V, O, dO, LSE, dQ, dK, dV
    const bool ok = i == 5 ? is_bhsd(args[i], PTXB_F32, 3, shape) : is_bhsd(args[i], PTXB_BF16, 4, shape);
    if (!ok) return (int)cudaErrorInvalidValue;
  }
  const int64_t rows = B * H * S;
  const size_t need = (size_t)rows * (D + 2) * sizeof(float);
  if (need > g_scratch_bytes) {
    if (g_scratch) cudaFree(g_scratch);  // synchronizes: earlier calls are done with it
    g_scratch = nullptr;
    g_scratch_bytes = 0;
    const cudaError_t e = cudaMalloc(&g_scratch, need);
    if (e != cudaSuccess) return (int)e;
    g_scratch_bytes = need;
  }
  float* dQacc = g_scratch;
  float* LD = g_scratch + rows * D;  // 512-B records, 16-B aligned (rows·128 floats in)

  static bool configured = false;
  if (!configured) {
    const cudaError_t e = cudaFuncSetAttribute(bwd_main, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
    if (e != cudaSuccess) return (int)e;
    configured = true;
  }

  static MapCache cache;
  if (cache.q != args[0].data || cache.k != args[1].data || cache.v != args[2].data || cache.dO != args[4].data ||
      cache.ld != LD || cache.rows != rows) {
    cache.q = cache.k = cache.v = cache.dO = cache.ld = nullptr;
    const void* src[4] = {args[0].data, args[1].data, args[2].data, args[4].data};
    CUtensorMap* dst[4] = {&cache.map_q, &cache.map_k, &cache.map_v, &cache.map_do};
    for (int i = 0; i < 4; ++i)  // [B·H·S, 128] bf16, 256-B rows; box 64 columns (128 B) × 64 rows
      if (ptxb::make_tensor_map_2d(dst[i], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, src[i], D, (uint64_t)rows, D * 2, 64, 64,
                                   CU_TENSOR_MAP_SWIZZLE_128B) != CUDA_SUCCESS)
        return (int)cudaErrorInvalidValue;
    // [rows/64, 128] fp32 records, box = one record (512 B), no swizzle.
    if (ptxb::make_tensor_map_2d(&cache.map_ld, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, LD, 2 * BQ, (uint64_t)(rows / BQ),
                                 2 * BQ * 4, 2 * BQ, 1, CU_TENSOR_MAP_SWIZZLE_NONE) != CUDA_SUCCESS)
      return (int)cudaErrorInvalidValue;
    cache.q = args[0].data;
    cache.k = args[1].data;
    cache.v = args[2].data;
    cache.dO = args[4].data;
    cache.ld = LD;
    cache.rows = rows;
  }

  bwd_pre<<<(unsigned)((rows + 7) / 8), 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(args[3].data),
                                                          static_cast<const __nv_bfloat16*>(args[4].data),
                                                          static_cast<const float*>(args[5].data), LD, dQacc, rows);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return (int)e;
  const dim3 grid((unsigned)(S / BKV), (unsigned)H, (unsigned)B);
  bwd_main<<<grid, THREADS, SMEM_BYTES, stream>>>(cache.map_q, cache.map_k, cache.map_v, cache.map_do, cache.map_ld,
                                                  dQacc, static_cast<__nv_bfloat16*>(args[7].data),
                                                  static_cast<__nv_bfloat16*>(args[8].data), (int)S);
  e = cudaGetLastError();
  if (e != cudaSuccess) return (int)e;
  bwd_post<<<(unsigned)(rows / BQ), 256, 0, stream>>>(dQacc, static_cast<__nv_bfloat16*>(args[6].data));
  return (int)cudaGetLastError();
}

// Expert kernel for mha_with_lse_d128: O = softmax(Q·Kᵀ/√128)·V and LSE = ln Σ exp(Q·Kᵀ/√128) per query
// row, B×H heads of S×128 bf16 (non-causal; causal with kCausal below), fp32 accumulation, written
// only with the Hopper pack's templates (ptxb/sm90.cuh) plus two tiny local helpers (fast exp2,
// register keep-alive; see below).
//
// Design (FlashAttention-3 style): one CTA per (128-query block, head, batch), 384 threads = 3
// warpgroups. Warpgroup 0 is the producer: it gives registers away (setmaxnreg 24) and one thread loads
// the 128×128 Q tile once and streams 128×128 K and V tiles by TMA (128B swizzle, two 64-column panels
// each) into a 2-stage ring with separate full/empty barriers for K and V. Warpgroups 1 and 2 (setmaxnreg
// 240) each own 64 query rows. Per KV block j a consumer issues S_j = Q·K_jᵀ (wgmma m64n128k16 SS,
// K-major A and B) and, behind it, O += P_{j-1}·V_{j-1} (wgmma m64n128k16 RS: P from registers, V as an
// MN-major B operand), then runs the online softmax of S_j while the PV wgmma is still in flight
// (intra-warpgroup overlap); the O rescale of block j is applied just before the next PV is issued.
// The two consumers ping-pong their wgmma issue through two named barriers so that one warpgroup's
// softmax (MUFU) overlaps the other's tensor-core work. Epilogue: O /= rowsum, bf16x2 stores, LSE.
//
// Register layouts relied on (re-derived; thread t = 0..127 of a consumer warpgroup, w = t/32, l = t%32):
//  * m64nNk16 fp32 accumulator d[i], i = 0..N/2-1:
//      row = 16w + l/4 + 8·((i/2)%2),  col = 8·(i/4) + 2·(l%4) + (i%2).
//    So i%4 ∈ {0,1} is row r = 16w + l/4 and i%4 ∈ {2,3} is row r+8; the 4 lanes of a quad (same l/4)
//    hold all 128 columns of their two rows: row max / sum = thread-local loop + shfl_xor 1, 2.
//  * RS A fragment (bf16, 64×16 slice k = columns 16k..16k+15), 4 × b32 registers a[0..3]:
//      a[0] = (r, 2·(l%4) + {0,1}), a[1] = (r+8, same), a[2] = (r, 8 + 2·(l%4) + {0,1}), a[3] = (r+8, same)
//    (lower 16 bits = lower column). The accumulator entries of columns 16k..16k+15 are i = 8k..8k+7:
//      8k,8k+1 → (r, 16k+2(l%4)+{0,1});  8k+2,8k+3 → (r+8, same);  8k+4,8k+5 → (r, 16k+8+2(l%4)+{0,1});
//      8k+6,8k+7 → (r+8, same),
//    hence P[k][q] = pack_bf16x2(S[8k+2q], S[8k+2q+1]) with no data movement (pack puts lo in bits 0..15).
//  * Shared memory tiles (TMA box 64 columns × 128 rows, SWIZZLE_128B): a 128×128 tile is two 16 KiB
//    panels (columns 0..63, then 64..127), row r of a panel at r·128 B, 16-byte chunk c stored at c^(r%8).
//    - Q (A operand, K-major, K = head dim): desc(Q + (k/4)·16384 + 64·128·cw + (k%4)·32, LBO 16, SBO
//      1024, b128): rows of 128 B, 8-row groups 1024 B apart, k16 step = +32 B inside the swizzled row.
//    - K (B operand of S, N = keys, K = head dim, "K-major"/not transposed): the same descriptor shape,
//      N = 128 rows = 16 groups at SBO = 1024.
//    - V (B operand of O, K = keys, N = head dim contiguous → MN-major, TransB = 1): canonical layout
//      Swizzle<3,4,3> ∘ ((8,8,m),(8,k)):((1,8,LBO),(64,SBO)) in elements: 64 N-elements per 128-B row,
//      LBO = 16384 B between the two 64-wide N panels, SBO = 1024 B between 8-key-row groups; the k16
//      step (16 key rows) adds 16·128 = 2048 B, which keeps the 1024-B atom alignment.
#include <cuda.h>
#include <cuda_bf16.h>

#include "ptxb/sm90.cuh"
#include "ptxbench_abi.h"

namespace {

// Causal switch: query i attends keys j <= i (KV tiles 0..query block only, diagonal tile masked).
// The causal expert (mha_with_lse_d128_causal) is this file with this set to true.
constexpr bool kCausal = false;
constexpr int D = 128;                     // head dimension
constexpr int BQ = 128, BKV = 128;         // query rows per CTA, keys per block
constexpr int STAGES = 2;                  // K/V ring depth
constexpr int PANEL_BYTES = 128 * 128;     // 128 rows × 64 bf16 (one TMA box, 16 KiB)
constexpr int TILE_BYTES = 2 * PANEL_BYTES;  // 128 × 128 bf16 (32 KiB)
constexpr int Q_OFF = 0;
constexpr int K_OFF = Q_OFF + TILE_BYTES;
constexpr int V_OFF = K_OFF + STAGES * TILE_BYTES;
constexpr int SMEM_BYTES = V_OFF + STAGES * TILE_BYTES + 1024;  // + room to align to 1024 B (161 KiB)
constexpr int THREADS = 384;
constexpr int CONSUMER_WARPS = 8;  // empty barriers: one arrival per consumer warp
constexpr bool kPingPong = true;   // order the two consumers' wgmma issue (named barriers 1 and 2)
constexpr float kScaleLog2 = 0.08838834764831845f * 1.4426950408889634f;  // 1/√128 · log2(e)
constexpr float kLn2 = 0.6931471805599453f;

static_assert(SMEM_BYTES <= 232448, "shared memory budget");

// ---- local helpers (not in the pack) -------------------------------------------------------------
// exp2 on the MUFU unit without exp2f's range fix-up; ex2.approx(-inf) = +0.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Keep the RS A-fragment registers alive (and unmoved) up to this point: called after the
// wgmma_wait_group that retires the wgmma reading them, so nothing reuses them while it is in flight.
__device__ __forceinline__ void keep_fragment(uint32_t (&p)[8][4]) {
#pragma unroll
  for (int k = 0; k < 8; ++k)
#pragma unroll
    for (int q = 0; q < 4; ++q) asm volatile("" : "+r"(p[k][q])::"memory");
}
// ---------------------------------------------------------------------------------------------------

__device__ __forceinline__ uint64_t desc_kmajor(uint32_t addr) {
  return ptxb::make_smem_desc_addr(addr, 16, 1024, ptxb::Swizzle::b128);
}
__device__ __forceinline__ uint64_t desc_v(uint32_t addr) {
  return ptxb::make_smem_desc_addr(addr, PANEL_BYTES, 1024, ptxb::Swizzle::b128);
}

// S[64×128] = Q_rows[64×128] · K_tileᵀ: 8 k16 steps over the head dimension (2 panels × 4 steps).
__device__ __forceinline__ void issue_qk(float (&s)[64], uint32_t q_addr, uint32_t k_addr) {
#pragma unroll
  for (int k = 0; k < 8; ++k)
    ptxb::wgmma_m64k16_bf16<128>(s, desc_kmajor(q_addr + (k / 4) * PANEL_BYTES + (k % 4) * 32),
                                 desc_kmajor(k_addr + (k / 4) * PANEL_BYTES + (k % 4) * 32), k > 0);
}

// O[64×128] += P[64×128 keys] · V_tile[128 keys × 128]: 8 k16 steps over the keys.
__device__ __forceinline__ void issue_pv(float (&o)[64], const uint32_t (&p)[8][4], uint32_t v_addr) {
#pragma unroll
  for (int k = 0; k < 8; ++k) ptxb::wgmma_m64k16_bf16_rs<128, /*TransB=*/true>(o, p[k], desc_v(v_addr + k * 2048), true);
}

// Online softmax of one score block (in place: s becomes exp2(s·c − m_new)); m in scaled base-2 units,
// l thread-partial row sums, scale = exp2(m_old − m_new) for the O rescale (0 on the first block).
__device__ __forceinline__ void online_softmax(float (&s)[64], float (&m)[2], float (&l)[2], float (&scale)[2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {  // h = 0: row r (i%4 ∈ {0,1}); h = 1: row r + 8 (i%4 ∈ {2,3})
    float mx = fmaxf(s[2 * h], s[2 * h + 1]);
#pragma unroll
    for (int i = 2 * h + 4; i < 64; i += 4) mx = fmaxf(mx, fmaxf(s[i], s[i + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(m[h], mx * kScaleLog2);  // c > 0: max(s)·c = max(s·c)
    scale[h] = fast_exp2(m[h] - m_new);
    m[h] = m_new;
    float sum = 0.f;
#pragma unroll
    for (int i = 2 * h; i < 64; i += 4) {
      s[i] = fast_exp2(fmaf(s[i], kScaleLog2, -m_new));
      s[i + 1] = fast_exp2(fmaf(s[i + 1], kScaleLog2, -m_new));
      sum += s[i] + s[i + 1];
    }
    l[h] = l[h] * scale[h] + sum;
  }
}

// Causal mask of the diagonal tile (key block == query block, BQ == BKV, so both start at q0): score
// (row, col) of this warpgroup's 64×128 block gets -inf when col > 64·cw + row. row_lo = the thread's
// row r within the Q block (64·cw + 16w + l/4); its second row is r + 8. Column 0 (key q0) is never
// masked, so every row keeps a finite max on this tile (and tile 0 is always visited first).
__device__ __forceinline__ void causal_mask(float (&s)[64], int row_lo, int lane) {
  const int lim0 = row_lo - 2 * (lane % 4);  // masked iff 8·(i/4) + (i%2) > lim_h
#pragma unroll
  for (int i = 0; i < 64; ++i) {
    const int lim = lim0 + 8 * ((i / 2) % 2);
    if (8 * (i / 4) + (i % 2) > lim) s[i] = -INFINITY;
  }
}

__device__ __forceinline__ void to_fragment(uint32_t (&p)[8][4], const float (&s)[64]) {
#pragma unroll
  for (int k = 0; k < 8; ++k)
#pragma unroll
    for (int q = 0; q < 4; ++q) p[k][q] = ptxb::pack_bf16x2(s[8 * k + 2 * q], s[8 * k + 2 * q + 1]);
}

__device__ __forceinline__ void rescale(float (&o)[64], const float (&scale)[2]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] *= scale[(i / 2) % 2];
}

__global__ void __launch_bounds__(THREADS, 1)
mha_fwd(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
        const __grid_constant__ CUtensorMap map_v, __nv_bfloat16* __restrict__ O, float* __restrict__ LSE, int S) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t q_full;
  __shared__ __align__(8) uint64_t k_full[STAGES], k_empty[STAGES], v_full[STAGES], v_empty[STAGES];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));

  const int wg = ptxb::warpgroup_index();
  // Causal: the longest rows first (blockIdx.x reversed within each head, so the CTAs running together
  // still share one head's K/V in L2), and only KV tiles 0..qt, the last one being the diagonal tile.
  const int qt = kCausal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;  // query block index
  const int n_blocks = kCausal ? qt + 1 : S / BKV;  // producer and both consumers run exactly this many
  const int bh = blockIdx.z * gridDim.y + blockIdx.y;  // (batch, head)
  const int row0 = bh * S;                             // first row of this head in the [B·H·S, 128] view
  const int q0 = qt * BQ;                              // first query row of this CTA within the head

  if (threadIdx.x == 0) {
    ptxb::mbarrier_init(&q_full, 1);
    for (int s = 0; s < STAGES; ++s) {
      ptxb::mbarrier_init(&k_full[s], 1);
      ptxb::mbarrier_init(&v_full[s], 1);
      ptxb::mbarrier_init(&k_empty[s], CONSUMER_WARPS);
      ptxb::mbarrier_init(&v_empty[s], CONSUMER_WARPS);
    }
    ptxb::fence_mbarrier_init();
    ptxb::tma_prefetch_descriptor(&map_q);
    ptxb::tma_prefetch_descriptor(&map_k);
    ptxb::tma_prefetch_descriptor(&map_v);
  }
  __syncthreads();  // the last CTA-wide barrier

  if (wg == 0) {
    // ---------------- producer ----------------
    ptxb::setmaxnreg_dec<24>();
    if (threadIdx.x == 0) {
      uint8_t* sq = smem + Q_OFF;
      ptxb::mbarrier_arrive_expect_tx(&q_full, TILE_BYTES);
      ptxb::tma_load_2d(sq, &map_q, &q_full, 0, row0 + q0);
      ptxb::tma_load_2d(sq + PANEL_BYTES, &map_q, &q_full, 64, row0 + q0);
      for (int j = 0; j < n_blocks; ++j) {
        const int s = j % STAGES;
        const uint32_t ph = (j / STAGES) & 1;
        const int kv_row = row0 + j * BKV;
        uint8_t* sk = smem + K_OFF + s * TILE_BYTES;
        uint8_t* sv = smem + V_OFF + s * TILE_BYTES;
        ptxb::mbarrier_wait_parity(&k_empty[s], ph ^ 1);  // first STAGES waits pass on fresh barriers
        ptxb::mbarrier_arrive_expect_tx(&k_full[s], TILE_BYTES);
        ptxb::tma_load_2d(sk, &map_k, &k_full[s], 0, kv_row);
        ptxb::tma_load_2d(sk + PANEL_BYTES, &map_k, &k_full[s], 64, kv_row);
        ptxb::mbarrier_wait_parity(&v_empty[s], ph ^ 1);
        ptxb::mbarrier_arrive_expect_tx(&v_full[s], TILE_BYTES);
        ptxb::tma_load_2d(sv, &map_v, &v_full[s], 0, kv_row);
        ptxb::tma_load_2d(sv + PANEL_BYTES, &map_v, &v_full[s], 64, kv_row);
      }
    }
    return;  // the consumers wait for every load, so the CTA outlives all TMA traffic
  }

  // ---------------- consumers ----------------
  ptxb::setmaxnreg_inc<240>();
  const int cw = wg - 1;  // rows [64·cw, 64·cw + 64) of the Q block
  const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
  const uint32_t base = ptxb::smem_addr(smem);
  const uint32_t q_addr = base + Q_OFF + cw * (64 * 128);  // 8 swizzle atoms further: stays 1024-aligned
  // Ping-pong: consumer cw syncs on barrier 1 + cw (256 = its 128 threads + the other's 128 arrivals)
  // before issuing, and arrives on the other's barrier after. Consumer 1 gives consumer 0 the first turn
  // and skips its arrival after its last turn, so every barrier sees n_blocks complete phases.
  const uint32_t my_bar = 1 + cw, other_bar = 2 - cw;

  float s_acc[64], o_acc[64];
  uint32_t p[8][4];
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}, scale[2];
#pragma unroll
  for (int i = 0; i < 64; ++i) o_acc[i] = 0.f;

  ptxb::mbarrier_wait_parity(&q_full, 0);
  if (kPingPong && cw == 1) ptxb::named_barrier_arrive(1, 256);

  // Block 0: S_0 only.
  ptxb::mbarrier_wait_parity(&k_full[0], 0);
  if (kPingPong) ptxb::named_barrier_sync(my_bar, 256);
  ptxb::wgmma_fence();
  issue_qk(s_acc, q_addr, base + K_OFF);
  ptxb::wgmma_commit_group();
  if (kPingPong && !(cw == 1 && n_blocks == 1)) ptxb::named_barrier_arrive(other_bar, 256);
  ptxb::wgmma_wait_group<0>();
  ptxb::wgmma_fence_registers(s_acc);
  if (lane == 0) ptxb::mbarrier_arrive(&k_empty[0]);
  if constexpr (kCausal) {
    if (n_blocks == 1) causal_mask(s_acc, 64 * cw + 16 * warp + lane / 4, lane);  // block 0: tile 0 is diagonal
  }
  online_softmax(s_acc, m, l, scale);
  to_fragment(p, s_acc);

  for (int j = 1; j < n_blocks; ++j) {
    const int s = j % STAGES;
    const uint32_t ph = (j / STAGES) & 1;
    const int sp = (j - 1) % STAGES;
    const uint32_t php = ((j - 1) / STAGES) & 1;
    ptxb::mbarrier_wait_parity(&k_full[s], ph);
    if (kPingPong) ptxb::named_barrier_sync(my_bar, 256);
    ptxb::wgmma_fence();  // orders the ALU writes of p (and o below) before the wgmma that read them
    issue_qk(s_acc, q_addr, base + K_OFF + s * TILE_BYTES);
    ptxb::wgmma_commit_group();
    rescale(o_acc, scale);  // O (no wgmma in flight on it) to block j-1's running max
    ptxb::mbarrier_wait_parity(&v_full[sp], php);
    ptxb::wgmma_fence();
    issue_pv(o_acc, p, base + V_OFF + sp * TILE_BYTES);
    ptxb::wgmma_commit_group();
    if (kPingPong && !(cw == 1 && j == n_blocks - 1)) ptxb::named_barrier_arrive(other_bar, 256);
    ptxb::wgmma_wait_group<1>();  // S_j has retired (the PV group may still run)
    ptxb::wgmma_fence_registers(s_acc);
    if (lane == 0) ptxb::mbarrier_arrive(&k_empty[s]);
    if constexpr (kCausal) {
      if (j == n_blocks - 1) causal_mask(s_acc, 64 * cw + 16 * warp + lane / 4, lane);  // diagonal tile
    }
    online_softmax(s_acc, m, l, scale);
    ptxb::wgmma_wait_group<0>();  // PV_{j-1} has retired: O readable, p and V stage free
    ptxb::wgmma_fence_registers(o_acc);
    keep_fragment(p);
    if (lane == 0) ptxb::mbarrier_arrive(&v_empty[sp]);
    to_fragment(p, s_acc);
  }

  // Last PV.
  {
    const int sp = (n_blocks - 1) % STAGES;
    const uint32_t php = ((n_blocks - 1) / STAGES) & 1;
    rescale(o_acc, scale);
    ptxb::mbarrier_wait_parity(&v_full[sp], php);
    ptxb::wgmma_fence();
    issue_pv(o_acc, p, base + V_OFF + sp * TILE_BYTES);
    ptxb::wgmma_commit_group();
    ptxb::wgmma_wait_group<0>();
    ptxb::wgmma_fence_registers(o_acc);
    keep_fragment(p);
    if (lane == 0) ptxb::mbarrier_arrive(&v_empty[sp]);
  }

  // Epilogue: full row sums, O /= l, LSE = ln(Σ exp(τ·s)) = (m + log2 l)·ln 2.
  float inv[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    inv[h] = 1.f / l[h];
  }
  const int r = q0 + 64 * cw + 16 * warp + lane / 4;  // query row within the head (and r + 8)
  const int c = 2 * (lane % 4);
  __nv_bfloat16* o0 = O + (size_t)(row0 + r) * D + c;
  __nv_bfloat16* o1 = o0 + 8 * D;
#pragma unroll
  for (int jj = 0; jj < 16; ++jj) {
    *reinterpret_cast<uint32_t*>(o0 + 8 * jj) = ptxb::pack_bf16x2(o_acc[4 * jj] * inv[0], o_acc[4 * jj + 1] * inv[0]);
    *reinterpret_cast<uint32_t*>(o1 + 8 * jj) =
        ptxb::pack_bf16x2(o_acc[4 * jj + 2] * inv[1], o_acc[4 * jj + 3] * inv[1]);
  }
  if (lane % 4 == 0) {
    LSE[(size_t)row0 + r] = (m[0] + log2f(l[0])) * kLn2;
    LSE[(size_t)row0 + r + 8] = (m[1] + log2f(l[1])) * kLn2;
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

// Tensor maps of the last call (encoding them costs host time on every call otherwise).
struct MapCache {
  const void *q = nullptr, *k = nullptr, *v = nullptr;
  int64_t rows = 0;
  CUtensorMap map_q, map_k, map_v;
};

}  // namespace

PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  if (nargs != 5 || !args) return (int)cudaErrorInvalidValue;
  const int64_t* shape = args[0].shape;  // [B, H, S, D]
  if (args[0].ndim != 4) return (int)cudaErrorInvalidValue;
  const int64_t B = shape[0], H = shape[1], S = shape[2];
  if (shape[3] != D || B <= 0 || H <= 0 || S <= 0 || S % BQ != 0 || B > 65535 || H > 65535 ||
      B * H * S > (int64_t(1) << 31) - 1)
    return (int)cudaErrorInvalidValue;
  for (int i = 0; i < 4; ++i)  // Q, K, V, O
    if (!is_bhsd(args[i], PTXB_BF16, 4, shape)) return (int)cudaErrorInvalidValue;
  if (!is_bhsd(args[4], PTXB_F32, 3, shape)) return (int)cudaErrorInvalidValue;  // LSE [B, H, S]

  static bool configured = false;
  if (!configured) {
    const cudaError_t e = cudaFuncSetAttribute(mha_fwd, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
    if (e != cudaSuccess) return (int)e;
    configured = true;
  }

  static MapCache cache;
  const int64_t rows = B * H * S;
  if (cache.q != args[0].data || cache.k != args[1].data || cache.v != args[2].data || cache.rows != rows) {
    cache.q = cache.k = cache.v = nullptr;
    const void* src[3] = {args[0].data, args[1].data, args[2].data};
    CUtensorMap* dst[3] = {&cache.map_q, &cache.map_k, &cache.map_v};
    for (int i = 0; i < 3; ++i)  // [B·H·S, 128] bf16, 256-B rows; box 64 columns (128 B) × 128 rows
      if (ptxb::make_tensor_map_2d(dst[i], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, src[i], D, (uint64_t)rows, D * 2, 64,
                                   BKV, CU_TENSOR_MAP_SWIZZLE_128B) != CUDA_SUCCESS)
        return (int)cudaErrorInvalidValue;
    cache.q = args[0].data;
    cache.k = args[1].data;
    cache.v = args[2].data;
    cache.rows = rows;
  }

  const dim3 grid((unsigned)(S / BQ), (unsigned)H, (unsigned)B);
  mha_fwd<<<grid, THREADS, SMEM_BYTES, stream>>>(cache.map_q, cache.map_k, cache.map_v,
                                                 static_cast<__nv_bfloat16*>(args[3].data),
                                                 static_cast<float*>(args[4].data), (int)S);
  return (int)cudaGetLastError();
}

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"
#include "reference/mha_reference.h"
#include "reference/register_tile.cuh"

namespace ptxbench {
namespace {

using reference::kDepth;
using reference::kPer;
using reference::kTile;
constexpr int kThreads = 256;
// Upper bound of the fp32 score scratch (one matrix forward, two backward), whatever S is.
constexpr int64_t kScratchBytes = int64_t(1) << 30;

// A strided matrix per batch: element (r, c) of batch z sits at data[z·batch + r·row + c·col].
// Strides express the transposes (Pᵀ as an operand is {P, ·, 1, S}), so one kernel serves every
// product of the attention references.
template <typename T>
struct Strided {
  T* data;
  int64_t batch, row, col;
};

// C = alpha·A·B, or C += alpha·A·B (`accumulate`, fp32 C only), for every batch; A is M×K, B K×N.
template <typename TA, typename TB, typename TC>
struct BatchedGemm {
  Strided<const TA> A;
  Strided<const TB> B;
  Strided<TC> C;
  int64_t M, N, K;
  float alpha;
  bool accumulate;
};

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline void store(float* p, float v, bool accumulate) { *p = accumulate ? *p + v : v; }
__device__ inline void store(__nv_bfloat16* p, float v, bool) { *p = __float2bfloat16_rn(v); }

// Same scheme as the GEMM reference: stage a 64×16 slice of A and a 16×64 slice of B in shared
// memory (zeros outside), each thread accumulates a 4×4 block of C in fp32 registers. Staging walks
// each operand along its contiguous index so that neighbouring threads read neighbouring elements.
template <typename TA, typename TB, typename TC>
__global__ void __launch_bounds__(kThreads) ptxb_internal_mha_gemm(BatchedGemm<TA, TB, TC> g) {
  __shared__ float As[kDepth][kTile];
  __shared__ float Bs[kDepth][kTile];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t m0 = int64_t(blockIdx.y) * kTile, n0 = int64_t(blockIdx.x) * kTile, z = blockIdx.z;
  const TA* A = g.A.data + z * g.A.batch;
  const TB* B = g.B.data + z * g.B.batch;
  const bool a_k_fast = g.A.col == 1, b_n_fast = g.B.col == 1;
  float acc[kPer][kPer] = {};
  for (int64_t k0 = 0; k0 < g.K; k0 += kDepth) {
    for (int i = threadIdx.x; i < kTile * kDepth; i += blockDim.x) {
      int row = a_k_fast ? i / kDepth : i % kTile, ka = a_k_fast ? i % kDepth : i / kTile;
      int64_t m = m0 + row, k = k0 + ka;
      As[ka][row] = (m < g.M && k < g.K) ? to_float(A[m * g.A.row + k * g.A.col]) : 0.0f;
      int col = b_n_fast ? i % kTile : i / kDepth, kb = b_n_fast ? i / kTile : i % kDepth;
      int64_t n = n0 + col;
      k = k0 + kb;
      Bs[kb][col] = (n < g.N && k < g.K) ? to_float(B[k * g.B.row + n * g.B.col]) : 0.0f;
    }
    __syncthreads();
    reference::accumulate_slice(As, Bs, ty, tx, acc);
    __syncthreads();
  }
  TC* C = g.C.data + z * g.C.batch;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    int64_t m = m0 + ty * kPer + i;
    if (m >= g.M) continue;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      int64_t n = n0 + tx * kPer + j;
      if (n < g.N) store(&C[m * g.C.row + n * g.C.col], g.alpha * acc[i][j], g.accumulate);
    }
  }
}

// Block-wide reductions over kThreads threads; every thread gets the result.
__device__ float block_sum(float v, float* red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();
  return r;
}

__device__ float block_max(float v, float* red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();
  return r;
}

// Forward softmax of one score row per block (grid: rows of the chunk × heads of the chunk):
// P = exp(s − max) / Σ exp(s − max) over the attended keys (0 elsewhere), in place, and
// LSE = max + ln Σ exp(s − max). `row0` is the chunk's first query index.
__global__ void __launch_bounds__(kThreads)
    ptxb_internal_mha_softmax_rows(float* P, float* LSE, int64_t S, int64_t rows, int64_t row0, bool causal) {
  __shared__ float red[kThreads];
  const int64_t z = blockIdx.y, q = row0 + blockIdx.x;
  float* p = P + (z * rows + blockIdx.x) * S;
  const int64_t n = causal ? q + 1 : S;  // keys 0 .. n-1 are attended
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += kThreads) m = fmaxf(m, p[j]);
  m = block_max(m, red);
  float l = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += kThreads) l += expf(p[j] - m);
  l = block_sum(l, red);
  for (int64_t j = threadIdx.x; j < S; j += kThreads) p[j] = j < n ? expf(p[j] - m) / l : 0.0f;
  if (threadIdx.x == 0) LSE[z * S + q] = m + logf(l);
}

// Backward row step (grid as above): from the scores s and dP = dO·Vᵀ of one query row, writes
// P = exp(s − LSE) (0 where masked) over s and dS = P∘(dP − D) over dP, D = Σ_d dO∘O of the row.
__global__ void __launch_bounds__(kThreads)
    ptxb_internal_mha_softmax_grad_rows(float* P, float* dP, const float* LSE, const __nv_bfloat16* O,
                                        const __nv_bfloat16* dO, int64_t S, int64_t D, int64_t rows, int64_t row0,
                                        bool causal) {
  __shared__ float red[kThreads];
  const int64_t z = blockIdx.y, q = row0 + blockIdx.x;
  const __nv_bfloat16* o = O + (z * S + q) * D;
  const __nv_bfloat16* dout = dO + (z * S + q) * D;
  float d = 0.0f;
  for (int64_t k = threadIdx.x; k < D; k += kThreads) d += __bfloat162float(dout[k]) * __bfloat162float(o[k]);
  d = block_sum(d, red);
  const float lse = LSE[z * S + q];
  float* p = P + (z * rows + blockIdx.x) * S;
  float* ds = dP + (z * rows + blockIdx.x) * S;
  for (int64_t j = threadIdx.x; j < S; j += kThreads) {
    float pj = (!causal || j <= q) ? expf(p[j] - lse) : 0.0f;
    p[j] = pj;
    ds[j] = pj * (ds[j] - d);
  }
}

template <typename TA, typename TB, typename TC>
void launch_gemm(Strided<const TA> A, Strided<const TB> B, Strided<TC> C, int64_t M, int64_t N, int64_t K, float alpha,
                 bool accumulate, int64_t batch, cudaStream_t stream) {
  dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile), static_cast<unsigned>((M + kTile - 1) / kTile),
            static_cast<unsigned>(batch));
  ptxb_internal_mha_gemm<<<grid, kThreads, 0, stream>>>(BatchedGemm<TA, TB, TC>{A, B, C, M, N, K, alpha, accumulate});
  PTXB_CUDA_CALL(cudaGetLastError());
}

// Heads × query rows processed per step, so that `matrices` fp32 score matrices of
// heads × rows × S stay within kScratchBytes: whole heads when one fits, else row slices of one.
struct Chunking {
  int64_t heads = 1, rows = 1;
};

Chunking chunking(const AttentionDims& d, int matrices) {
  PTXB_ENSURE(d.heads > 0 && d.seq > 0 && d.dim > 0, "reference", "attention dims must be positive");
  PTXB_ENSURE(d.heads <= 65535 && d.seq <= int64_t(65535) * kTile, "reference", "attention dims out of grid range");
  const int64_t row_bytes = d.seq * int64_t(sizeof(float)) * matrices;
  const int64_t rows_fit = kScratchBytes / row_bytes;
  Chunking c;
  if (rows_fit >= d.seq) {
    c.rows = d.seq;
    c.heads = std::min(d.heads, rows_fit / d.seq);
  } else {
    c.rows = std::max<int64_t>(kTile, rows_fit / kTile * kTile);
  }
  return c;
}

using bf16 = __nv_bfloat16;

template <typename TO>
void forward(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, TO* O, float* LSE,
             const AttentionDims& d, cudaStream_t stream) {
  const Chunking ch = chunking(d, 1);
  const int64_t S = d.seq, D = d.dim, head = S * D;
  DeviceBuffer scores(static_cast<std::size_t>(ch.heads * ch.rows * S) * sizeof(float));
  float* P = scores.as<float>();
  for (int64_t h0 = 0; h0 < d.heads; h0 += ch.heads) {
    const int64_t nh = std::min(ch.heads, d.heads - h0);
    for (int64_t r0 = 0; r0 < S; r0 += ch.rows) {
      const int64_t nr = std::min(ch.rows, S - r0);
      // scores(i, j) = scale · Q(r0 + i, :) · K(j, :)
      launch_gemm<bf16, bf16, float>({Q + h0 * head + r0 * D, head, D, 1}, {K + h0 * head, head, 1, D},
                                     {P, nr * S, S, 1}, nr, S, D, d.scale(), false, nh, stream);
      ptxb_internal_mha_softmax_rows<<<dim3(static_cast<unsigned>(nr), static_cast<unsigned>(nh)), kThreads, 0,
                                       stream>>>(P, LSE + h0 * S, S, nr, r0, d.causal);
      PTXB_CUDA_CALL(cudaGetLastError());
      // O(r0 + i, :) = P(i, :) · V
      launch_gemm<float, bf16, TO>({P, nr * S, S, 1}, {V + h0 * head, head, D, 1}, {O + h0 * head + r0 * D, head, D, 1},
                                   nr, D, S, 1.0f, false, nh, stream);
    }
  }
  // Keep the scratch alive until the chunks that use it have run (its free would wait anyway).
  PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
}

}  // namespace

float AttentionDims::scale() const { return 1.0f / std::sqrt(static_cast<float>(dim)); }

void mha_forward_reference(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, float* O, float* LSE,
                           const AttentionDims& dims, cudaStream_t stream) {
  forward(Q, K, V, O, LSE, dims, stream);
}

void mha_forward_reference(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O,
                           float* LSE, const AttentionDims& dims, cudaStream_t stream) {
  forward(Q, K, V, O, LSE, dims, stream);
}

void mha_backward_reference(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                            const __nv_bfloat16* O, const __nv_bfloat16* dO, const float* LSE, float* dQ, float* dK,
                            float* dV, const AttentionDims& d, cudaStream_t stream) {
  const Chunking ch = chunking(d, 2);
  const int64_t S = d.seq, D = d.dim, head = S * D;
  const std::size_t matrix_bytes = static_cast<std::size_t>(ch.heads * ch.rows * S) * sizeof(float);
  DeviceBuffer scores(matrix_bytes), dscores(matrix_bytes);
  float* P = scores.as<float>();
  float* dS = dscores.as<float>();
  for (int64_t h0 = 0; h0 < d.heads; h0 += ch.heads) {
    const int64_t nh = std::min(ch.heads, d.heads - h0);
    for (int64_t r0 = 0; r0 < S; r0 += ch.rows) {
      const int64_t nr = std::min(ch.rows, S - r0), rows_off = h0 * head + r0 * D;
      const bool later = r0 > 0;  // dK and dV accumulate over the row slices of a head
      // scores = scale · Q_r·Kᵀ;  dP = dO_r·Vᵀ (into dS's space)
      launch_gemm<bf16, bf16, float>({Q + rows_off, head, D, 1}, {K + h0 * head, head, 1, D}, {P, nr * S, S, 1}, nr, S,
                                     D, d.scale(), false, nh, stream);
      launch_gemm<bf16, bf16, float>({dO + rows_off, head, D, 1}, {V + h0 * head, head, 1, D}, {dS, nr * S, S, 1}, nr,
                                     S, D, 1.0f, false, nh, stream);
      ptxb_internal_mha_softmax_grad_rows<<<dim3(static_cast<unsigned>(nr), static_cast<unsigned>(nh)), kThreads, 0,
                                            stream>>>(P, dS, LSE + h0 * S, O + h0 * head, dO + h0 * head, S, D, nr, r0,
                                                      d.causal);
      PTXB_CUDA_CALL(cudaGetLastError());
      // dV(j, :) += Σ_i P(i, j) · dO(r0 + i, :)
      launch_gemm<float, bf16, float>({P, nr * S, 1, S}, {dO + rows_off, head, D, 1}, {dV + h0 * head, head, D, 1}, S,
                                      D, nr, 1.0f, later, nh, stream);
      // dQ(r0 + i, :) = scale · Σ_j dS(i, j) · K(j, :)
      launch_gemm<float, bf16, float>({dS, nr * S, S, 1}, {K + h0 * head, head, D, 1}, {dQ + rows_off, head, D, 1}, nr,
                                      D, S, d.scale(), false, nh, stream);
      // dK(j, :) += scale · Σ_i dS(i, j) · Q(r0 + i, :)
      launch_gemm<float, bf16, float>({dS, nr * S, 1, S}, {Q + rows_off, head, D, 1}, {dK + h0 * head, head, D, 1}, S,
                                      D, nr, d.scale(), later, nh, stream);
    }
  }
  PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
}

}  // namespace ptxbench

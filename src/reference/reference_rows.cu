#include "reference/reference_rows.h"

#include "gpu/cuda_call.h"
#include "reference/warp_math.cuh"

namespace ptxbench {
namespace {

using namespace warp_math;  // NOLINT(google-build-using-namespace)

// Block-wide reduction through shared memory; every thread gets the result.
template <bool Max>
__device__ float block_reduce(float v, float* shared) {
  v = Max ? warp_max(v) : warp_sum(v);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float r = Max ? -INFINITY : 0.0f;
  for (int w = 0; w < kWarps; ++w) r = Max ? fmaxf(r, shared[w]) : r + shared[w];
  __syncthreads();
  return r;
}

// One warp per (row, column): the warp splits K.
__global__ void __launch_bounds__(kThreads) ptxb_internal_gemm_rows(const bf16* A, const bf16* B, const int64_t* rows,
                                                                   int64_t n_rows, float* out, int64_t N, int64_t K) {
  const int64_t warp = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / kWarp;
  if (warp >= n_rows * N) return;
  const int64_t r = warp / N, col = warp % N;
  float v = warp_dot(A + rows[r] * K, B + col * K, K);
  if (threadIdx.x % kWarp == 0) out[r * N + col] = v;
}

// One block per query row: scores into scratch, softmax, then P·V.
__global__ void __launch_bounds__(kThreads) ptxb_internal_mha_fwd_rows(const bf16* Q, const bf16* K, const bf16* V,
                                                                      const int64_t* rows, float* O_rows,
                                                                      float* LSE_rows, float* scratch,
                                                                      AttentionDims dims, float scale) {
  __shared__ float red[kWarps];
  const int64_t S = dims.seq, D = dims.dim, row = rows[blockIdx.x];
  const int64_t head = row / S, i = row % S;
  const bf16* q = Q + row * D;
  const bf16* Kh = K + head * S * D;
  const bf16* Vh = V + head * S * D;
  float* s = scratch + int64_t(blockIdx.x) * S;
  const int64_t keys = dims.causal ? i + 1 : S;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x / kWarp; j < keys; j += kWarps) {
    float v = warp_dot(q, Kh + j * D, D) * scale;
    if (threadIdx.x % kWarp == 0) s[j] = v;
    m = fmaxf(m, v);
  }
  m = block_reduce<true>(m, red);
  float l = 0.0f;
  for (int64_t j = threadIdx.x; j < keys; j += kThreads) l += expf(s[j] - m);
  l = block_reduce<false>(l, red);
  for (int64_t j = threadIdx.x; j < keys; j += kThreads) s[j] = expf(s[j] - m) / l;
  __syncthreads();
  for (int64_t d = threadIdx.x; d < D; d += kThreads) {
    float o = 0.0f;
    for (int64_t j = 0; j < keys; ++j) o += s[j] * __bfloat162float(Vh[j * D + d]);
    O_rows[int64_t(blockIdx.x) * D + d] = o;
  }
  if (threadIdx.x == 0) LSE_rows[blockIdx.x] = m + logf(l);
}

// One warp per query row of every head.
__global__ void __launch_bounds__(kThreads) ptxb_internal_mha_delta(const bf16* O, const bf16* dO, float* delta,
                                                                   int64_t rows, int64_t D) {
  const int64_t row = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / kWarp;
  if (row >= rows) return;
  float v = warp_dot(O + row * D, dO + row * D, D);
  if (threadIdx.x % kWarp == 0) delta[row] = v;
}

// dS_ij = P_ij·(dP_ij − D_i) with P_ij = exp(scale·q_i·k_j − LSE_i), dP_ij = dO_i·v_j.
__device__ __forceinline__ void score_terms(const bf16* q, const bf16* k, const bf16* dout, const bf16* v, float scale,
                                            float lse, float delta, int64_t D, float& p, float& ds) {
  float sc = warp_dot(q, k, D) * scale;
  float dp = warp_dot(dout, v, D);
  p = expf(sc - lse);
  ds = p * (dp - delta);
}

__global__ void __launch_bounds__(kThreads) ptxb_internal_mha_dq_rows(const bf16* Q, const bf16* K, const bf16* V,
                                                                     const bf16* dO, const float* LSE,
                                                                     const float* delta, const int64_t* rows,
                                                                     float* dQ_rows, float* scratch,
                                                                     AttentionDims dims, float scale) {
  const int64_t S = dims.seq, D = dims.dim, row = rows[blockIdx.x];
  const int64_t head = row / S, i = row % S;
  const bf16* Kh = K + head * S * D;
  const bf16* Vh = V + head * S * D;
  float* coef = scratch + int64_t(blockIdx.x) * 2 * S;
  const int64_t keys = dims.causal ? i + 1 : S;
  for (int64_t j = threadIdx.x / kWarp; j < keys; j += kWarps) {
    float p, ds;
    score_terms(Q + row * D, Kh + j * D, dO + row * D, Vh + j * D, scale, LSE[row], delta[row], D, p, ds);
    if (threadIdx.x % kWarp == 0) coef[j] = ds;
  }
  __syncthreads();
  for (int64_t d = threadIdx.x; d < D; d += kThreads) {
    float acc = 0.0f;
    for (int64_t j = 0; j < keys; ++j) acc += coef[j] * __bfloat162float(Kh[j * D + d]);
    dQ_rows[int64_t(blockIdx.x) * D + d] = acc * scale;
  }
}

__global__ void __launch_bounds__(kThreads) ptxb_internal_mha_dkdv_rows(const bf16* Q, const bf16* K, const bf16* V,
                                                                       const bf16* dO, const float* LSE,
                                                                       const float* delta, const int64_t* rows,
                                                                       float* dK_rows, float* dV_rows, float* scratch,
                                                                       AttentionDims dims, float scale) {
  const int64_t S = dims.seq, D = dims.dim, row = rows[blockIdx.x];
  const int64_t head = row / S, j = row % S;
  const bf16* Qh = Q + head * S * D;
  const bf16* dOh = dO + head * S * D;
  const float* lse = LSE + head * S;
  const float* dl = delta + head * S;
  float* pcoef = scratch + int64_t(blockIdx.x) * 2 * S;
  float* dscoef = pcoef + S;
  const int64_t first = dims.causal ? j : 0;  // queries i ≥ j attend key j
  for (int64_t i = first + threadIdx.x / kWarp; i < S; i += kWarps) {
    float p, ds;
    score_terms(Qh + i * D, K + row * D, dOh + i * D, V + row * D, scale, lse[i], dl[i], D, p, ds);
    if (threadIdx.x % kWarp == 0) {
      pcoef[i] = p;
      dscoef[i] = ds;
    }
  }
  __syncthreads();
  for (int64_t d = threadIdx.x; d < D; d += kThreads) {
    float dk = 0.0f, dv = 0.0f;
    for (int64_t i = first; i < S; ++i) {
      dk += dscoef[i] * __bfloat162float(Qh[i * D + d]);
      dv += pcoef[i] * __bfloat162float(dOh[i * D + d]);
    }
    dK_rows[int64_t(blockIdx.x) * D + d] = dk * scale;
    dV_rows[int64_t(blockIdx.x) * D + d] = dv;
  }
}

unsigned blocks_for_warps(int64_t warps) { return static_cast<unsigned>((warps * kWarp + kThreads - 1) / kThreads); }

}  // namespace

void gemm_reference_rows(const bf16* A, const bf16* B, const int64_t* rows, int64_t n_rows, float* out, int64_t N,
                         int64_t K, cudaStream_t stream) {
  if (n_rows == 0) return;
  ptxb_internal_gemm_rows<<<blocks_for_warps(n_rows * N), kThreads, 0, stream>>>(A, B, rows, n_rows, out, N, K);
  PTXB_CUDA_CALL(cudaGetLastError());
}

int64_t mha_rows_scratch_floats(const AttentionDims& dims, int64_t n_rows) { return 2 * dims.seq * n_rows; }

void mha_forward_reference_rows(const bf16* Q, const bf16* K, const bf16* V, const int64_t* rows, int64_t n_rows,
                                float* O_rows, float* LSE_rows, float* scratch, const AttentionDims& dims,
                                cudaStream_t stream) {
  if (n_rows == 0) return;
  ptxb_internal_mha_fwd_rows<<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(Q, K, V, rows, O_rows, LSE_rows,
                                                                                      scratch, dims, dims.scale());
  PTXB_CUDA_CALL(cudaGetLastError());
}

void mha_backward_delta(const bf16* O, const bf16* dO, float* delta, const AttentionDims& dims, cudaStream_t stream) {
  const int64_t rows = dims.heads * dims.seq;
  ptxb_internal_mha_delta<<<blocks_for_warps(rows), kThreads, 0, stream>>>(O, dO, delta, rows, dims.dim);
  PTXB_CUDA_CALL(cudaGetLastError());
}

void mha_backward_dq_rows(const bf16* Q, const bf16* K, const bf16* V, const bf16* dO, const float* LSE,
                          const float* delta, const int64_t* rows, int64_t n_rows, float* dQ_rows, float* scratch,
                          const AttentionDims& dims, cudaStream_t stream) {
  if (n_rows == 0) return;
  ptxb_internal_mha_dq_rows<<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(Q, K, V, dO, LSE, delta, rows,
                                                                                     dQ_rows, scratch, dims, dims.scale());
  PTXB_CUDA_CALL(cudaGetLastError());
}

void mha_backward_dkdv_rows(const bf16* Q, const bf16* K, const bf16* V, const bf16* dO, const float* LSE,
                            const float* delta, const int64_t* rows, int64_t n_rows, float* dK_rows, float* dV_rows,
                            float* scratch, const AttentionDims& dims, cudaStream_t stream) {
  if (n_rows == 0) return;
  ptxb_internal_mha_dkdv_rows<<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(
      Q, K, V, dO, LSE, delta, rows, dK_rows, dV_rows, scratch, dims, dims.scale());
  PTXB_CUDA_CALL(cudaGetLastError());
}

}  // namespace ptxbench

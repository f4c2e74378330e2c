#include "reference/gqa_reference.h"

#include <climits>
#include <cmath>
#include <string>

#include "common/error.h"
#include "gpu/cuda_call.h"
#include "reference/warp_math.cuh"

namespace ptxbench {
namespace {

using namespace warp_math;  // NOLINT(google-build-using-namespace)
constexpr int kMaxDim = 256;
constexpr int kPerLane = kMaxDim / kWarp;  // output elements d = lane + 32·t each lane accumulates

struct RowArgs {
  const bf16 *q, *k, *v;
  GqaIndexView index;
  GqaDims dims;
  const int64_t* rows;  // nullptr: block x is row x
  float* out;           // nullptr: not written
  float* lse;           // nullptr: not written
};

// The sequence holding query token `token`: the last b with qo_indptr[b] ≤ token (empty
// sequences before it share its start).
__device__ int64_t sequence_of(const GqaIndexView& ix, int64_t batch, int64_t token) {
  if (ix.qo_indptr == nullptr) return token;
  int64_t lo = 0, hi = batch - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (ix.qo_indptr[mid] <= token) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

__global__ void __launch_bounds__(kThreads) ptxb_internal_gqa_rows(RowArgs a) {
  __shared__ float red[kWarps];
  __shared__ float acc[kWarps][kMaxDim];
  const GqaDims& g = a.dims;
  const int64_t slot = blockIdx.x, row = a.rows ? a.rows[slot] : slot;
  const int64_t token = row / g.num_qo_heads, head = row % g.num_qo_heads;
  const int64_t kv_head = head / (g.num_qo_heads / g.num_kv_heads), D = g.head_dim;
  const int64_t b = sequence_of(a.index, g.batch, token);
  const int64_t q_start = a.index.qo_indptr ? a.index.qo_indptr[b] : b;
  const int64_t q_len = a.index.qo_indptr ? a.index.qo_indptr[b + 1] - q_start : 1;
  const int64_t kv_start = a.index.kv_indptr[b], kv_len = a.index.kv_indptr[b + 1] - kv_start;
  int64_t seen = kv_len;
  if (g.causal) seen = max(int64_t(0), min(kv_len, token - q_start + 1 + kv_len - q_len));
  const bf16* q = a.q + row * D;
  auto key_row = [&](int64_t j) -> int64_t {
    const int64_t r = a.index.kv_indices ? int64_t(a.index.kv_indices[kv_start + j]) : kv_start + j;
    return (r * g.num_kv_heads + kv_head) * D;
  };
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;

  // Pass 1: the row maximum of the scaled scores.
  float m = -INFINITY;
  for (int64_t j = warp; j < seen; j += kWarps) m = fmaxf(m, warp_dot(q, a.k + key_row(j), D) * g.sm_scale);
  if (lane == 0) red[warp] = m;
  __syncthreads();
  m = -INFINITY;
  for (int w = 0; w < kWarps; ++w) m = fmaxf(m, red[w]);
  __syncthreads();

  // Pass 2: l = Σ exp(s − m) and o = Σ exp(s − m)·v, each warp over its keys, then across warps.
  float l = 0.0f, o[kPerLane] = {};
  for (int64_t j = warp; j < seen; j += kWarps) {
    const int64_t kr = key_row(j);
    const float p = expf(warp_dot(q, a.k + kr, D) * g.sm_scale - m);
    l += p;
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int64_t d = lane + kWarp * t;
      if (d < D) o[t] += p * __bfloat162float(a.v[kr + d]);
    }
  }
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) acc[warp][lane + kWarp * t] = o[t];
  if (lane == 0) red[warp] = l;
  __syncthreads();
  l = 0.0f;
  for (int w = 0; w < kWarps; ++w) l += red[w];
  if (a.out)
    for (int64_t d = threadIdx.x; d < D; d += kThreads) {
      float sum = 0.0f;
      for (int w = 0; w < kWarps; ++w) sum += acc[w][d];
      a.out[slot * D + d] = seen > 0 ? sum / l : 0.0f;
    }
  // log2 Σ exp(s) = (m + ln l) / ln 2
  if (a.lse && threadIdx.x == 0) a.lse[slot] = seen > 0 ? (m + logf(l)) * 1.4426950408889634f : -INFINITY;
}

void launch(const RowArgs& a, int64_t n_rows, cudaStream_t stream) {
  const GqaDims& g = a.dims;
  PTXB_ENSURE(g.num_qo_heads > 0 && g.num_kv_heads > 0 && g.num_qo_heads % g.num_kv_heads == 0, "reference",
              "GQA needs num_qo_heads a multiple of num_kv_heads");
  PTXB_ENSURE(g.head_dim > 0 && g.head_dim <= kMaxDim, "reference",
              "GQA reference supports head_dim ≤ " + std::to_string(kMaxDim));
  PTXB_ENSURE(g.batch > 0 && a.index.kv_indptr != nullptr, "reference", "GQA reference needs kv_indptr");
  PTXB_ENSURE(n_rows <= INT_MAX, "reference", "GQA reference: too many rows for one grid");
  if (n_rows == 0) return;
  ptxb_internal_gqa_rows<<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(a);
  PTXB_CUDA_CALL(cudaGetLastError());
}

}  // namespace

void gqa_reference(const bf16* q, const bf16* k, const bf16* v, const GqaIndexView& index, const GqaDims& dims,
                   float* out, float* lse, cudaStream_t stream) {
  launch({q, k, v, index, dims, nullptr, out, lse}, dims.total_q * dims.num_qo_heads, stream);
}

void gqa_reference_rows(const bf16* q, const bf16* k, const bf16* v, const GqaIndexView& index, const GqaDims& dims,
                        const int64_t* rows, int64_t n_rows, float* out_rows, float* lse_rows, cudaStream_t stream) {
  launch({q, k, v, index, dims, rows, out_rows, lse_rows}, n_rows, stream);
}

}  // namespace ptxbench

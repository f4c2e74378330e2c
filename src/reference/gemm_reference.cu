#include "gpu/cuda_call.h"
#include "reference/gemm_reference.h"
#include "reference/register_tile.cuh"

namespace ptxbench {
namespace {

using reference::kDepth;
using reference::kPer;
using reference::kTile;

// Each block stages A[m0:m0+64, k0:k0+16] and B[n0:n0+64, k0:k0+16] transposed (k-major) in shared
// memory, then every thread accumulates a 4×4 block of C in fp32 registers. Out-of-range rows and
// K positions are staged as zeros, so any M, N, K works.
__global__ void __launch_bounds__(256) ptxb_internal_gemm_reference(const __nv_bfloat16* __restrict__ A,
                                                                   const __nv_bfloat16* __restrict__ B,
                                                                   float* __restrict__ C, int64_t M,
                                                                   int64_t N, int64_t K) {
  __shared__ float As[kDepth][kTile];
  __shared__ float Bs[kDepth][kTile];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t m0 = int64_t(blockIdx.y) * kTile, n0 = int64_t(blockIdx.x) * kTile;
  float acc[kPer][kPer] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
    for (int i = threadIdx.x; i < kTile * kDepth; i += blockDim.x) {
      int row = i / kDepth, kk = i % kDepth;
      int64_t m = m0 + row, n = n0 + row, k = k0 + kk;
      As[kk][row] = (m < M && k < K) ? __bfloat162float(A[m * K + k]) : 0.0f;
      Bs[kk][row] = (n < N && k < K) ? __bfloat162float(B[n * K + k]) : 0.0f;
    }
    __syncthreads();
    reference::accumulate_slice(As, Bs, ty, tx, acc);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    int64_t m = m0 + ty * kPer + i;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      int64_t n = n0 + tx * kPer + j;
      if (n < N) C[m * N + n] = acc[i][j];
    }
  }
}

}  // namespace

void gemm_reference(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int64_t M, int64_t N,
                    int64_t K, cudaStream_t stream) {
  dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile), static_cast<unsigned>((M + kTile - 1) / kTile));
  ptxb_internal_gemm_reference<<<grid, 256, 0, stream>>>(A, B, C, M, N, K);
  PTXB_CUDA_CALL(cudaGetLastError());
}

}  // namespace ptxbench

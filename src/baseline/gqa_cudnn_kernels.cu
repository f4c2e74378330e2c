#include "baseline/gqa_cudnn_kernels.h"

namespace ptxbench {
namespace {

__global__ void scale_f32(float* x, int64_t n, float factor) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] *= factor;
}

// One block per sequence.
__global__ void pad_page_table(const int32_t* indptr, const int32_t* indices, int64_t width, int32_t* table) {
  const int64_t b = blockIdx.x;
  const int32_t begin = indptr[b], len = indptr[b + 1] - begin;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) table[b * width + j] = j < len ? indices[begin + j] : 0;
}

}  // namespace

cudaError_t launch_scale_f32(float* x, int64_t n, float factor, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  scale_f32<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), kThreads, 0, stream>>>(x, n, factor);
  return cudaGetLastError();
}

cudaError_t launch_pad_page_table(const int32_t* indptr, const int32_t* indices, int64_t batch, int64_t width,
                                  int32_t* table, cudaStream_t stream) {
  if (batch <= 0 || width <= 0) return cudaSuccess;
  pad_page_table<<<static_cast<unsigned>(batch), 256, 0, stream>>>(indptr, indices, width, table);
  return cudaGetLastError();
}

}  // namespace ptxbench

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/parallel.h"
#include "gpu/cuda_call.h"
#include "gpu/random_fill.h"

namespace ptxbench {
namespace {

// splitmix64: a good 64-bit mixer; one call per element index keeps generation stateless.
__host__ __device__ inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Box-Muller on two 24-bit uniforms in (0, 1].
__host__ __device__ inline float normal_at(uint64_t seed, uint64_t i) {
  uint64_t r = mix64(seed ^ mix64(i));
  float u1 = (static_cast<float>(r >> 40) + 1.0f) * (1.0f / 16777216.0f);
  float u2 = static_cast<float>((r >> 16) & 0xffffff) * (1.0f / 16777216.0f);
  return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
}

template <typename T>
__device__ inline T from_float(float v);
template <>
__device__ inline float from_float<float>(float v) { return v; }
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ inline __half from_float<__half>(float v) { return __float2half_rn(v); }

template <typename T>
__global__ void ptxb_internal_fill_normal(T* out, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = from_float<T>(normal_at(seed, static_cast<uint64_t>(i)));
}

template <typename T>
__global__ void ptxb_internal_fill_constant(T* out, int64_t n, float value) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = from_float<T>(value);
}

template <template <typename> class Launch, typename... Args>
void dispatch(DType dtype, Args&&... args) {
  switch (dtype) {
    case DType::bf16: Launch<__nv_bfloat16>::run(args...); break;
    case DType::f16: Launch<__half>::run(args...); break;
    case DType::f32: Launch<float>::run(args...); break;
    default: throw Error("random_fill", "unsupported dtype " + dtype_name(dtype));
  }
}

constexpr int kThreads = 256;
inline int blocks_for(int64_t n) { return static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 132 * 32)); }

template <typename T>
struct NormalLaunch {
  static void run(void* data, int64_t n, uint64_t seed, cudaStream_t s) {
    ptxb_internal_fill_normal<T><<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(data), n, seed);
  }
};
template <typename T>
struct ConstantLaunch {
  static void run(void* data, int64_t n, float value, cudaStream_t s) {
    ptxb_internal_fill_constant<T><<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(data), n, value);
  }
};

}  // namespace

void fill_normal(void* data, DType dtype, int64_t n, uint64_t seed, cudaStream_t stream) {
  if (n <= 0) return;
  dispatch<NormalLaunch>(dtype, data, n, seed, stream);
  PTXB_CUDA_CALL(cudaGetLastError());
}

void fill_constant(void* data, DType dtype, int64_t n, double value, cudaStream_t stream) {
  if (n <= 0) return;
  dispatch<ConstantLaunch>(dtype, data, n, static_cast<float>(value), stream);
  PTXB_CUDA_CALL(cudaGetLastError());
}

float normal_sample_host(uint64_t seed, uint64_t index) { return normal_at(seed, index); }

void fill_normal_host(void* host, DType dtype, int64_t n, uint64_t seed) {
  if (n <= 0) return;
  if (dtype != DType::bf16 && dtype != DType::f16 && dtype != DType::f32)
    throw Error("random_fill", "unsupported dtype " + dtype_name(dtype));
  for_each_slice(n, slice_count(n), [&](unsigned, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float v = normal_at(seed, static_cast<uint64_t>(i));
      if (dtype == DType::bf16) static_cast<__nv_bfloat16*>(host)[i] = __float2bfloat16_rn(v);
      else if (dtype == DType::f16) static_cast<__half*>(host)[i] = __float2half_rn(v);
      else static_cast<float*>(host)[i] = v;
    }
  });
}

void fill_values_host(void* host, DType dtype, const std::vector<double>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    switch (dtype) {
      case DType::bf16: static_cast<__nv_bfloat16*>(host)[i] = __float2bfloat16_rn(static_cast<float>(v)); break;
      case DType::f16: static_cast<__half*>(host)[i] = __float2half_rn(static_cast<float>(v)); break;
      case DType::f32: static_cast<float*>(host)[i] = static_cast<float>(v); break;
      case DType::i32: static_cast<int32_t*>(host)[i] = static_cast<int32_t>(v); break;
      case DType::i64: static_cast<int64_t*>(host)[i] = static_cast<int64_t>(v); break;
      default: throw Error("random_fill", "no fixed values of dtype " + dtype_name(dtype));
    }
  }
}

uint64_t derive_seed(uint64_t seed, uint64_t salt) { return mix64(seed * 0x100000001b3ull + salt); }

}  // namespace ptxbench

// The trusted pieces on the GPU: input generation, the reference GEMM against fp64 on the CPU, and
// the cuBLASLt baseline against the reference under the verdict's own correctness rule.
#include <cuda_bf16.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/error.h"
#include "definitions/catalog.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"
#include "gpu/random_fill.h"
#include "gpu_test_support.h"
#include "reference/gemm_reference.h"
#include "evaluator/workload_state.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

std::vector<float> to_host_bf16(const DeviceBuffer& d, std::size_t n) {
  std::vector<__nv_bfloat16> h(n);
  PTXB_CUDA_CALL(cudaMemcpy(h.data(), d.get(), n * 2, cudaMemcpyDeviceToHost));
  std::vector<float> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

// Checks C = A·Bᵀ at the given entries against fp64 sums of the same bf16 inputs.
void expect_gemm_entries(int64_t M, int64_t N, int64_t K, const std::vector<std::pair<int64_t, int64_t>>& entries) {
  DeviceBuffer A(M * K * 2), B(N * K * 2), C(M * N * 4);
  fill_normal(A.get(), DType::bf16, M * K, 11, nullptr);
  fill_normal(B.get(), DType::bf16, N * K, 12, nullptr);
  gemm_reference(A.as<__nv_bfloat16>(), B.as<__nv_bfloat16>(), C.as<float>(), M, N, K, nullptr);
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  auto a = to_host_bf16(A, M * K), b = to_host_bf16(B, N * K);
  std::vector<float> c(M * N);
  PTXB_CUDA_CALL(cudaMemcpy(c.data(), C.get(), c.size() * 4, cudaMemcpyDeviceToHost));
  for (auto [m, n] : entries) {
    double want = 0, mag = 0;
    for (int64_t k = 0; k < K; ++k) {
      want += double(a[m * K + k]) * double(b[n * K + k]);
      mag += std::fabs(double(a[m * K + k]) * double(b[n * K + k]));
    }
    // fp32 accumulation error is bounded by ~K·eps·Σ|a·b|; be generous but far below 1e-2.
    EXPECT_NEAR(c[m * N + n], want, 1e-5 * mag + 1e-6) << "C[" << m << "," << n << "]";
  }
}

}  // namespace

class RandomFillTest : public GpuTest {};
TEST_F(RandomFillTest, DeviceSamplesMatchTheHostGeneratorAndAreStandardNormal) {
  const int64_t n = 1 << 20;
  DeviceBuffer d(n * 4);
  fill_normal(d.get(), DType::f32, n, 1234, nullptr);
  std::vector<float> h(n);
  PTXB_CUDA_CALL(cudaMemcpy(h.data(), d.get(), n * 4, cudaMemcpyDeviceToHost));
  for (int64_t i : {0L, 1L, 777L, n - 1}) EXPECT_NEAR(h[i], normal_sample_host(1234, i), 1e-5);
  double sum = 0, sq = 0;
  for (float v : h) {
    sum += v;
    sq += double(v) * v;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.01);
  fill_normal(d.get(), DType::f32, n, 1235, nullptr);
  std::vector<float> other(n);
  PTXB_CUDA_CALL(cudaMemcpy(other.data(), d.get(), n * 4, cudaMemcpyDeviceToHost));
  EXPECT_NE(h[5], other[5]);
}

// Needs no device (runs under the cpu label): the host fill used by runtime SASS counting gives
// the sampler's values on any number of threads, rounded to the dtype.
TEST(RandomFillHost, MatchesTheSamplerOnEveryThreadAndRounds) {
  const int64_t n = (1 << 20) + 3;  // above the single-thread cut-off, not a multiple of it
  std::vector<float> f(n);
  fill_normal_host(f.data(), DType::f32, n, 99);
  for (int64_t i : {int64_t{0}, int64_t{1}, n / 3, n / 2 + 1, n - 1}) EXPECT_FLOAT_EQ(f[i], normal_sample_host(99, i));
  std::vector<__nv_bfloat16> b(n);
  fill_normal_host(b.data(), DType::bf16, n, 99);
  for (int64_t i : {int64_t{0}, n - 1}) EXPECT_EQ(__bfloat162float(b[i]), __bfloat162float(__float2bfloat16_rn(f[i])));
  EXPECT_THROW(fill_normal_host(f.data(), DType::i32, 4, 1), Error);
}

class GemmReferenceTest : public GpuTest {};
TEST_F(GemmReferenceTest, SmallOddShapeMatchesFp64Everywhere) {
  std::vector<std::pair<int64_t, int64_t>> all;
  for (int64_t m = 0; m < 70; ++m)
    for (int64_t n = 0; n < 97; ++n) all.push_back({m, n});
  expect_gemm_entries(70, 97, 203, all);
}

TEST_F(GemmReferenceTest, EvaluationShapeMatchesFp64OnSampledEntries) {
  std::mt19937_64 rng(7);
  std::vector<std::pair<int64_t, int64_t>> picks = {{0, 0}, {8191, 7167}, {4096, 31}};
  for (int i = 0; i < 200; ++i) picks.push_back({int64_t(rng() % 8192), int64_t(rng() % 7168)});
  expect_gemm_entries(8192, 7168, 5120, picks);
}

class BaselineTest : public GpuTest {};
TEST_F(BaselineTest, CublasLtPassesTheCorrectnessRuleAgainstTheReference) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  const Definition& d = catalog.definition("gemm_n7168_k5120");
  for (const char* selector : {"M=8192", "M=70"}) {
    WorkloadState state(resolve_workload(d, catalog.find_workload(d.name, selector)), make_operator("gemm"));
    for (uint64_t seed : {1u, 2u}) {
      state.prepare_trial(seed);
      run_checked_call(state.baseline_target(), state.stream());
      OutputCheck check = state.check_baseline(Tolerance{});
      ASSERT_EQ(check.tensors.size(), 1u);
      EXPECT_TRUE(check.passed()) << selector << ": " << check.tensors[0].mismatches << " mismatches, max abs "
                                  << check.tensors[0].max_abs_error;
    }
  }
}

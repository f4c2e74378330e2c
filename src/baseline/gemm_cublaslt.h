// cuBLASLt baseline for C = A·Bᵀ (bf16 in/out, fp32 compute), with the heuristic's plan cached
// for the shape it was built for.
#pragma once

#include <cublasLt.h>

#include <cstdint>

#include "baseline/baseline.h"
#include "gpu/device_buffer.h"

namespace ptxbench {

class GemmCublasLt final : public Baseline {
 public:
  GemmCublasLt(int64_t M, int64_t N, int64_t K);
  ~GemmCublasLt() override;
  GemmCublasLt(const GemmCublasLt&) = delete;
  GemmCublasLt& operator=(const GemmCublasLt&) = delete;

  [[nodiscard]] std::string name() const override { return "cuBLASLt"; }
  int run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) override;
  [[nodiscard]] bool matches(int64_t M, int64_t N, int64_t K) const noexcept {
    return M == m_M && N == m_N && K == m_K;
  }

 private:
  int64_t m_M, m_N, m_K;
  cublasLtHandle_t m_handle = nullptr;
  cublasLtMatmulDesc_t m_desc = nullptr;
  cublasLtMatrixLayout_t m_a = nullptr, m_b = nullptr, m_c = nullptr;
  cublasLtMatmulAlgo_t m_algo{};
  DeviceBuffer m_workspace;
};

}  // namespace ptxbench

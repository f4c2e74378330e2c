// op_type "gemm": C[M,N] = A[M,K]·B[N,K]ᵀ, bf16 in/out, fp32 accumulation; 2·M·N·K FLOPs.
#pragma once

#include "ops/operator.h"

namespace ptxbench {

class GemmOperator final : public Operator {
 public:
  void reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                 const std::vector<float*>& outputs, cudaStream_t stream) const override;
  [[nodiscard]] std::unique_ptr<Baseline> make_baseline(const ResolvedWorkload& w) const override;
  [[nodiscard]] double flops(const ResolvedWorkload& w) const override;
  [[nodiscard]] std::size_t row_scratch_bytes(const ResolvedWorkload& w, int64_t rows) const override;
  void reference_rows(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                      const std::vector<RowSample>& samples, const std::vector<float*>& out, void* scratch,
                      cudaStream_t stream) const override;
};

}  // namespace ptxbench

// op_types "mha_fwd" / "mha_fwd_causal" and "mha_bwd" / "mha_bwd_causal": multi-head attention on
// [B, H, S, D] bf16 tensors, scale 1/√D, LSE in fp32 natural log. FLOPs (the FlashAttention
// convention): forward 4·B·H·S²·D (two S×S×D products), halved when causal; backward 2.5× the
// forward (five products; the recomputation of the scores counts as one of them).
#pragma once

#include "ops/operator.h"

namespace ptxbench {

/// Inputs Q, K, V → outputs O (bf16), LSE (fp32, [B, H, S]).
class MhaFwdOperator final : public Operator {
 public:
  explicit MhaFwdOperator(bool causal) : m_causal(causal) {}
  void reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, const std::vector<float*>& outputs,
                 cudaStream_t stream) const override;
  [[nodiscard]] std::unique_ptr<Baseline> make_baseline(const ResolvedWorkload& w) const override;
  [[nodiscard]] double flops(const ResolvedWorkload& w) const override;
  /// LSE rows are single elements (one per query), so O and LSE samples name the same queries.
  [[nodiscard]] int64_t row_length(const ResolvedWorkload& w, std::size_t o) const override;
  [[nodiscard]] std::size_t row_scratch_bytes(const ResolvedWorkload& w, int64_t rows) const override;
  void reference_rows(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                      const std::vector<RowSample>& samples, const std::vector<float*>& out, void* scratch,
                      cudaStream_t stream) const override;

 private:
  bool m_causal;
};

/// Inputs Q, K, V, O, dO (bf16), LSE (fp32) → outputs dQ, dK, dV (bf16). O and LSE are the
/// "derived" inputs: the trusted forward on the trial's Q, K, V, O rounded to bf16.
class MhaBwdOperator final : public Operator {
 public:
  explicit MhaBwdOperator(bool causal) : m_causal(causal) {}
  void make_inputs(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, uint64_t seed,
                   cudaStream_t stream) const override;
  void reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, const std::vector<float*>& outputs,
                 cudaStream_t stream) const override;
  [[nodiscard]] std::unique_ptr<Baseline> make_baseline(const ResolvedWorkload& w) const override;
  [[nodiscard]] double flops(const ResolvedWorkload& w) const override;
  /// dO only: Q, K, V stay for the trial, so the derived O and LSE stay theirs.
  [[nodiscard]] std::vector<std::size_t> fresh_inputs(const ResolvedWorkload& w) const override;
  [[nodiscard]] std::size_t row_scratch_bytes(const ResolvedWorkload& w, int64_t rows) const override;
  void reference_rows(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                      const std::vector<RowSample>& samples, const std::vector<float*>& out, void* scratch,
                      cudaStream_t stream) const override;

 private:
  bool m_causal;
};

}  // namespace ptxbench

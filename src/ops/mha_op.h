// op_types "mha_fwd" / "mha_fwd_causal" and "mha_bwd" / "mha_bwd_causal": multi-head attention on
// [B, H, S, D] bf16 tensors, scale 1/√D, LSE in fp32 natural log. FLOPs (the FlashAttention
// convention): forward 4·B·H·S²·D (two S×S×D products), halved when causal; backward 2.5× the
// forward (five products; the recomputation of the scores counts as one of them).
#pragma once

#include "ops/operator.h"

namespace ptxbench {

struct MhaShape;

/// What both directions share: the shape, checked against the definition's tensors (named in ABI
/// order, [B, H, S, D] bf16 but LSE [B, H, S] fp32), the cuDNN baseline, the FLOP count and the
/// size of the row reference's scratch.
class MhaOperator : public Operator {
 public:
  [[nodiscard]] std::unique_ptr<Baseline> make_baseline(const ResolvedWorkload& w) const override;
  [[nodiscard]] double flops(const ResolvedWorkload& w) const override;
  [[nodiscard]] std::size_t row_scratch_bytes(const ResolvedWorkload& w, int64_t rows) const override;

 protected:
  MhaOperator(bool causal, bool backward) : m_causal(causal), m_backward(backward) {}
  /// Throws InputError when a tensor's name, shape or dtype is not the family's.
  [[nodiscard]] MhaShape shape(const ResolvedWorkload& w) const;

 private:
  bool m_causal;
  bool m_backward;
};

/// Inputs Q, K, V → outputs O (bf16), LSE (fp32, [B, H, S]).
class MhaFwdOperator final : public MhaOperator {
 public:
  explicit MhaFwdOperator(bool causal) : MhaOperator(causal, false) {}
  void reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, const std::vector<float*>& outputs,
                 cudaStream_t stream) const override;
  /// LSE rows are single elements (one per query), so O and LSE samples name the same queries.
  [[nodiscard]] int64_t row_length(const ResolvedWorkload& w, std::size_t o) const override;
  void reference_rows(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                      const std::vector<RowSample>& samples, const std::vector<float*>& out, void* scratch,
                      cudaStream_t stream) const override;
};

/// Inputs Q, K, V, O, dO (bf16), LSE (fp32) → outputs dQ, dK, dV (bf16). O and LSE are the
/// "derived" inputs: the trusted forward on the trial's Q, K, V, O rounded to bf16.
class MhaBwdOperator final : public MhaOperator {
 public:
  explicit MhaBwdOperator(bool causal) : MhaOperator(causal, true) {}
  void make_inputs(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, uint64_t seed,
                   cudaStream_t stream) const override;
  void reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, const std::vector<float*>& outputs,
                 cudaStream_t stream) const override;
  /// dO only: Q, K, V stay for the trial, so the derived O and LSE stay theirs.
  [[nodiscard]] std::vector<std::size_t> fresh_inputs(const ResolvedWorkload& w) const override;
  void reference_rows(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                      const std::vector<RowSample>& samples, const std::vector<float*>& out, void* scratch,
                      cudaStream_t stream) const override;
};

}  // namespace ptxbench

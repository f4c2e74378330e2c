// op_types "gqa_paged_decode", "gqa_paged_prefill_causal" and "gqa_ragged_prefill_causal": the
// held-out grouped-query attention classes (docs/definitions.md, "Held-out GQA definitions"). bf16
// q/k/v, int32 index arrays, a float32 scalar sm_scale; outputs output (bf16) and lse (float32,
// base 2). Bottom-right causal mask for the prefills; query head h reads kv head h / (Hq / Hkv).
//
// Inputs: q, k, v (or k_cache, v_cache) are standard normal from the trial seed and refreshed
// before every timed call; sm_scale is the workload's scalar; the index arrays (qo_indptr,
// kv_indptr, kv_indices) are the workload's sequence layout (definitions/sequence_layout.h), drawn
// from the workload uuid alone, so every trial and every candidate sees the same layout and the
// cuDNN baseline can plan for it once. The workload must mark them "derived".
// FLOPs: 4·Hq·D·(query, key) pairs that the mask lets through, summed over the sequences.
#pragma once

#include "baseline/gqa_cudnn.h"
#include "definitions/sequence_layout.h"
#include "ops/operator.h"

namespace ptxbench {

/// The three classes, told apart by their kind: the tensors' names and shapes checked against the
/// definition, the layout, the trusted reference and rows, the cuDNN baseline, FLOPs and bytes.
///   paged_decode:          q [batch_size, Hq, D], k_cache / v_cache [num_pages, 1, Hkv, D],
///                          kv_indptr, kv_indices, sm_scale
///   paged_prefill_causal:  q [total_q, Hq, D], k_cache / v_cache [num_pages, 1, Hkv, D],
///                          qo_indptr, kv_indptr, kv_indices, sm_scale
///   ragged_prefill_causal: q [total_q, Hq, D], k / v [total_kv, Hkv, D], qo_indptr, kv_indptr, sm_scale
class GqaOperator final : public Operator {
 public:
  explicit GqaOperator(GqaProblem::Kind kind) : m_kind(kind) {}
  void make_inputs(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, uint64_t seed,
                   cudaStream_t stream) const override;
  void reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, const std::vector<float*>& outputs,
                 cudaStream_t stream) const override;
  [[nodiscard]] std::unique_ptr<Baseline> make_baseline(const ResolvedWorkload& w) const override;
  /// q and the key/value tensors: the layout and sm_scale stay for the workload.
  [[nodiscard]] std::vector<std::size_t> fresh_inputs(const ResolvedWorkload& w) const override;
  /// The index arrays are the workload's layout; sm_scale its scalar.
  [[nodiscard]] std::optional<std::vector<double>> fixed_values(const ResolvedWorkload& w, std::size_t input) const override;
  /// output rows are [D] per (token, head) = row token·Hq + head; lse rows are single elements,
  /// so output and lse samples name the same (token, head) pairs.
  [[nodiscard]] int64_t row_length(const ResolvedWorkload& w, std::size_t o) const override;
  [[nodiscard]] std::size_t row_scratch_bytes(const ResolvedWorkload& w, int64_t rows) const override;
  void reference_rows(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                      const std::vector<RowSample>& samples, const std::vector<float*>& out, void* scratch,
                      cudaStream_t stream) const override;
  [[nodiscard]] double flops(const ResolvedWorkload& w) const override;
  /// Every input once, but of a paged cache only the pages kv_indices names (it may hold many more).
  [[nodiscard]] double min_bytes(const ResolvedWorkload& w) const override;

  /// The problem with host copies of the layout, for the baseline (and for tests). Throws
  /// InputError when the workload's tensors or samplers are not the class's.
  [[nodiscard]] GqaProblem problem(const ResolvedWorkload& w) const;
  /// The workload's sequence layout (what make_inputs writes into the index inputs).
  [[nodiscard]] SequenceLayout layout(const ResolvedWorkload& w) const;

 private:
  /// The class's tensors in ABI order, inputs then outputs.
  [[nodiscard]] const std::vector<std::string>& names() const;
  /// The layout's totals from the workload's axes.
  [[nodiscard]] SequenceTotals totals(const ResolvedWorkload& w) const;

  GqaProblem::Kind m_kind;
};

}  // namespace ptxbench

// cuDNN baselines of the grouped-query attention forward classes (the held-out GQA definitions:
// paged decode, paged causal prefill, ragged causal prefill), built from cuDNN's SDPA graph with
// ragged offsets for variable-length sequences and a page table for paged K/V.
//
// What one timed call does (gqa_cudnn.cpp says why): the cuDNN SDPA plan (one fused flash kernel;
// paged K/V read through the call's kv_indices as a packed page table), then one small kernel that
// turns cuDNN's natural-log statistics into the definition's base-2 lse, in place. The sequence
// layout (lengths, element offsets) is planned once from GqaProblem, as FlashInfer's plan() does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baseline/baseline.h"

namespace ptxbench {

/// One GQA problem with its sequence layout. The layout is the workload's (fixed for every trial),
/// so a baseline can plan for it once; the index arrays given to `run` hold the same values.
struct GqaProblem {
  enum class Kind { paged_decode, paged_prefill_causal, ragged_prefill_causal };
  Kind kind = Kind::paged_decode;
  int64_t num_qo_heads = 0, num_kv_heads = 0, head_dim = 0;
  int64_t num_pages = 0;  ///< paged kinds: rows of k_cache / v_cache (page size 1)
  int64_t total_q = 0;    ///< query rows (decode: the batch size)
  int64_t total_kv = 0;   ///< ragged: rows of k / v; paged: entries of kv_indices
  float sm_scale = 0.f;
  std::vector<int32_t> qo_indptr;   ///< batch + 1 entries (decode: 0, 1, …, batch)
  std::vector<int32_t> kv_indptr;   ///< batch + 1 entries
  std::vector<int32_t> kv_indices;  ///< paged kinds: page ids, kv_indptr.back() entries
  [[nodiscard]] int64_t batch() const { return static_cast<int64_t>(kv_indptr.size()) - 1; }
  [[nodiscard]] bool causal() const { return kind != Kind::paged_decode; }
  [[nodiscard]] bool paged() const { return kind != Kind::ragged_prefill_causal; }
  /// Longest query / key sequence of the layout (the graph's padded extents).
  [[nodiscard]] int64_t max_q_len() const;
  [[nodiscard]] int64_t max_kv_len() const;
  /// Throws InputError naming the first inconsistency (sizes, indptr order and ends, page ids).
  void validate() const;
  /// "paged_decode B15 Hq24 Hkv8 D128 q<=1 kv<=1033".
  [[nodiscard]] std::string describe() const;
};

/// How a GQA plan was chosen: enough to tell from a log whether cuDNN's flash engine runs.
struct GqaPlanInfo {
  std::string cudnn_version;   ///< of the loaded library, e.g. "9.19.0"
  std::string form;            ///< "ragged", "paged (packed page table)", ... (what the graph is)
  bool scale_by_value = false; ///< sm_scale baked into the plan instead of read from the call
  int64_t engine = -1;         ///< CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::string engine_config;   ///< engine, knobs, notes, workspace, heuristic position
  int64_t workspace_bytes = 0;
  std::string graph;           ///< every tensor and op of the graph, one per line
};

/// The cuDNN baseline of one GqaProblem. Arguments in the definition's ABI order (inputs, then
/// output and lse):
///   paged_decode:         q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale, output, lse
///   paged_prefill_causal: q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, sm_scale, output, lse
///   ragged_prefill_causal: q, k, v, qo_indptr, kv_indptr, sm_scale, output, lse
/// q [total_q, Hq, D], k_cache/v_cache [num_pages, 1, Hkv, D], k/v [total_kv, Hkv, D] (bf16);
/// indptr/indices int32; sm_scale f32 scalar (device); output bf16 [total_q, Hq, D]; lse f32
/// [total_q, Hq] in base 2. Planned on the current device by the constructor (throws on failure).
class GqaCudnnBaseline final : public Baseline {
 public:
  explicit GqaCudnnBaseline(const GqaProblem& p);
  ~GqaCudnnBaseline() override;
  GqaCudnnBaseline(const GqaCudnnBaseline&) = delete;
  GqaCudnnBaseline& operator=(const GqaCudnnBaseline&) = delete;
  [[nodiscard]] std::string name() const override;
  /// 0, cudaErrorInvalidValue (wrong arguments, said on stderr) or the failing call's error.
  int run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) override;
  [[nodiscard]] const GqaPlanInfo& plan_info() const noexcept;
  /// One line: problem, cuDNN version, form, engine config.
  [[nodiscard]] std::string describe() const;

 private:
  struct Plan;
  std::unique_ptr<Plan> m_plan;
};

/// The cuDNN baseline for `p`, arguments in the definition's ABI order (inputs, then output and
/// lse; lse in base 2). Planned on the current device; throws when cuDNN has no engine for it.
std::unique_ptr<Baseline> make_gqa_cudnn_baseline(const GqaProblem& p);

}  // namespace ptxbench

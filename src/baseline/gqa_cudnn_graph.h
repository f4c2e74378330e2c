// The SDPA operation graphs behind GqaCudnnBaseline, for tests and tools that plan them without
// running them (e.g. for an H200 described by its properties, on a machine without one).
#pragma once

#include "baseline/cudnn_graph.h"
#include "baseline/gqa_cudnn.h"

namespace ptxbench {

/// Choices of the graph that cuDNN may accept or refuse; the baseline tries the defaults first.
struct GqaGraphOptions {
  /// sm_scale as a by-value scalar taken from GqaProblem (else a device tensor: the call's input).
  bool scale_by_value = false;
  /// Paged kinds: the page table is the call's kv_indices, ragged by kv_indptr (cuDNN ≥ 9.10.2);
  /// else a padded [B, 1, max_kv_len, 1] table that the baseline fills from them on each call.
  bool packed_page_table = true;
};

/// The forward graph of `p` (Q, K/V or their page caches → O, Stats in natural log), finalized on
/// `handle`, or for the device properties later given to the heuristics when `handle` is null.
cudnn::GraphBuilder build_gqa_sdpa_graph(const GqaProblem& p, const GqaGraphOptions& options, cudnnHandle_t handle);

/// "ragged", "paged, packed page table" or "paged, padded page table" for `p` and `options`.
std::string gqa_graph_form(const GqaProblem& p, const GqaGraphOptions& options);

}  // namespace ptxbench

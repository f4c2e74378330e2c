// cuDNN fused flash attention (SDPA) baselines, forward with stats (LSE) and backward, built from
// the cuDNN graph (backend) API: the operation graph is composed here from matmul, pointwise and
// reduction nodes, an engine is chosen by cuDNN's heuristics, and the plan is kept for the shape.
// The graphs follow cudnn-frontend's composite SDPA lowering (see mha_cudnn.cpp), which is what
// cuDNN's flash-attention engines match.
//
// Environment (debugging): PTXBENCH_CUDNN_DEBUG=1 prints the graphs and every engine candidate;
// PTXBENCH_CUDNN_GRAPH_STYLE=fe113|fe18 forces one lowering; PTXBENCH_CUDNN_ENGINE=<n> keeps only
// engine global index n. cuDNN's own log: CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG=stderr.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "baseline/baseline.h"

namespace ptxbench {

struct MhaShape {
  int64_t B = 0, H = 0, S = 0, D = 0;  // layout [B, H, S, D], contiguous
  bool causal = false;                 // query i attends to keys j <= i
  friend bool operator==(const MhaShape&, const MhaShape&) = default;
};

/// How a plan was chosen: enough to tell from a log whether cuDNN's flash engine runs.
struct MhaPlanInfo {
  std::string cudnn_version;   ///< of the loaded library, e.g. "9.19.0"
  std::string graph_style;     ///< the lowering that cuDNN accepted ("fe113" or "fe18")
  int64_t engine = -1;         ///< CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::string engine_config;   ///< engine, knobs, notes, workspace, heuristic position
  int64_t workspace_bytes = 0; ///< the plan's own workspace (scratch tensors not included)
  std::string graph;           ///< every tensor and op of the graph, one per line
  std::string plan_json;       ///< cuDNN's JSON for the plan ("" if it gives none)
};

/// What both SDPA baselines share: the graph and plan for one shape (built on the current device
/// by the constructor, which throws on failure), the argument checks that guard every run
/// (cudaErrorInvalidValue on a wrong count, dtype, shape or a non-contiguous tensor), and how the
/// plan was chosen.
class MhaCudnnBaseline : public Baseline {
 public:
  ~MhaCudnnBaseline() override;
  MhaCudnnBaseline(const MhaCudnnBaseline&) = delete;
  MhaCudnnBaseline& operator=(const MhaCudnnBaseline&) = delete;
  [[nodiscard]] bool matches(const MhaShape& shape) const noexcept;
  [[nodiscard]] const MhaPlanInfo& plan_info() const noexcept;
  /// One line: shape, cuDNN version, graph style, engine config.
  [[nodiscard]] std::string describe() const;

 protected:
  struct Plan;
  explicit MhaCudnnBaseline(std::unique_ptr<Plan> plan);
  std::unique_ptr<Plan> m_plan;
};

/// Arguments in ABI order: Q, K, V (bf16) → O (bf16), LSE (fp32, [B, H, S] or [B, H, S, 1],
/// natural log). Scale 1/√D.
class MhaFwdCudnn final : public MhaCudnnBaseline {
 public:
  explicit MhaFwdCudnn(MhaShape shape);
  [[nodiscard]] std::string name() const override;
  int run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) override;
};

/// Arguments in ABI order: Q, K, V, O, dO (bf16), LSE (fp32) → dQ, dK, dV (bf16). O and LSE are
/// the forward's. Owns its scratch tensors (rowsum(dO∘O) and the fp32 dQ accumulator).
class MhaBwdCudnn final : public MhaCudnnBaseline {
 public:
  explicit MhaBwdCudnn(MhaShape shape);
  ~MhaBwdCudnn() override;
  [[nodiscard]] std::string name() const override;
  int run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) override;

 private:
  struct Scratch;
  std::unique_ptr<Scratch> m_scratch;
};

}  // namespace ptxbench

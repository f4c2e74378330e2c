// Tensor-core FLOP coverage (docs/verdict.md, "Mechanism coverage"): the share of a workload's
// FLOPs that ran on wgmma, from the executed (predicate-true, per-thread) GMMA counts of each
// kernel and the MMA shapes in that kernel's listing. The paper's rule credits one executed
// wgmma; coverage tells a kernel whose tensor cores do the work from one that runs a token
// instruction beside a SIMT loop.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/json_check.h"
#include "sass/opcode_counts.h"

namespace ptxbench {

/// One warpgroup MMA instruction's shape (HGMMA.64x128x16.F32.BF16 → 64, 128, 16).
struct MmaShape {
  int m = 0, n = 0, k = 0;
  [[nodiscard]] double flops() const { return 2.0 * m * n * k; }
  auto operator<=>(const MmaShape&) const = default;
};

/// Function name -> the distinct *GMMA shapes of its instructions, from `cuobjdump -sass` text.
std::map<std::string, std::vector<MmaShape>> parse_mma_shapes(const std::string& sass_text);

struct Coverage {
  bool available = false;
  double workload_flops = 0.0;
  double tensor_flops_min = 0.0;  ///< with each kernel's smallest shape
  double tensor_flops_max = 0.0;  ///< with its largest (equal when every kernel has one shape)
  [[nodiscard]] double share_min() const { return workload_flops > 0 ? tensor_flops_min / workload_flops : 0.0; }
  [[nodiscard]] double share_max() const { return workload_flops > 0 ? tensor_flops_max / workload_flops : 0.0; }
  [[nodiscard]] bool exact() const { return tensor_flops_min == tensor_flops_max; }
  std::string note;
};
ordered_json to_json(const Coverage& c);

/// Threads that execute one warpgroup MMA instruction (4 warps of 32, every lane predicated on).
inline constexpr double kThreadsPerWarpgroupMma = 128.0;

/// Per-kernel warp-level executions by opcode with modifiers (ncu's
/// sass__inst_executed_per_opcode_with_modifier_all: "HGMMA.64x256x16.F32.BF16" apart from
/// "HGMMA.64x128x16.F32.BF16"), and per-opcode warp executions: what makes a mixed-shape kernel's
/// coverage exact. Empty maps: not collected.
struct ShapedMmaCounts {
  std::map<std::string, OpcodeCounts> warp_with_modifiers_per_kernel;
  std::map<std::string, OpcodeCounts> warp_per_kernel;
};

/// Coverage of `workload_flops` from executed predicate-true thread counts per kernel and the
/// kernels' MMA shapes. A kernel with executed GMMA but no shape in the listing makes it unavailable.
/// Where a kernel has several shapes, its share is a range, unless `shaped` counts each shape's
/// executions: then each kernel's tensor FLOPs are exact — the shapes' warp executions / 4 (a
/// warpgroup instruction runs in 4 warps) × their FLOPs, scaled by the kernel's predicate-true share
/// (thread-true / (32 × warp executions) of its GMMA) — provided the shaped executions add up to
/// the kernel's GMMA warp executions and the result lies in the range; else the range stays.
Coverage tensor_core_coverage(const std::map<std::string, OpcodeCounts>& executed_per_kernel,
                              const std::map<std::string, std::vector<MmaShape>>& shapes, double workload_flops,
                              const ShapedMmaCounts& shaped = {});

}  // namespace ptxbench

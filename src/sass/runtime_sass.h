// What ran: per-opcode counts of the candidate's kernels executed on the GPU, from either tool
// (sass/ncu_report.h: Nsight Compute; sass/pc_counts.h: CUPTI SASS metrics inside the runner).
// The predicate-true thread counts decide the mechanisms (paper Table 6).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sass/opcode_counts.h"
#include "timing/call_activity.h"

namespace ptxbench {

struct RuntimeSass {
  bool available = false;
  std::string note;
  std::string source;                        ///< the tool and metric the counts come from
  int kernels_profiled = 0;                  ///< ncu: candidate kernel launches; CUPTI: candidate kernels that ran
  std::vector<std::string> foreign_kernels;  ///< launched kernels not in the candidate's cubin
  std::map<std::string, OpcodeCounts> thread_true_per_kernel;
  OpcodeCounts thread_true;  ///< summed over the candidate's launches (decides the mechanisms)
  OpcodeCounts warp_executed;
  std::map<std::string, OpcodeCounts> warp_per_kernel;
  /// Warp-level executions by opcode with its modifiers ("HGMMA.64x256x16.F32.BF16"), per kernel:
  /// the MMA shapes apart (exact tensor-core coverage). Empty when the tool did not collect them.
  std::map<std::string, OpcodeCounts> warp_with_modifiers_per_kernel;
  Mechanisms mechanisms;
  /// Every kernel launch of the profiled call, the candidate's and others, in launch order.
  std::vector<KernelLaunch> launches;
  /// The candidate's launches' durations in the profiled call (ncu gpu__time_duration: one launch
  /// at a time, caches flushed before each), summed, and by kernel. Unset: not collected.
  bool durations_measured = false;
  double duration_ns = 0.0;
  std::map<std::string, double> duration_ns_per_kernel;
  /// Hardware counters over the candidate's launches (unpatched passes): warp instructions of the
  /// tensor pipe's warpgroup MMA, and of the TMA unit. Unset: the tool did not collect them.
  std::optional<double> hw_gmma_warp_inst;
  std::optional<double> hw_tma_inst;
};

ordered_json to_json(const RuntimeSass& r);

}  // namespace ptxbench

// Runtime SASS counts from CUPTI SASS metrics: the runner patches the candidate's kernels and
// reports per-instruction counts (function, instruction offset, warp-level executions,
// predicate-true thread executions); the worker maps each offset to its opcode through the
// cubin's disassembly (sass/sass_listing.h). The runner only reports offsets and numbers: what
// an offset *is* comes from the listing the worker made itself.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sass/runtime_sass.h"
#include "sass/sass_listing.h"

namespace ptxbench {

/// The CUPTI SASS metrics we collect (per instruction, summed over the GPU).
inline constexpr const char* kCuptiWarpMetric = "smsp__sass_inst_executed";
inline constexpr const char* kCuptiThreadTrueMetric = "smsp__sass_thread_inst_executed_pred_on";

struct PcCount {
  std::string function;  ///< mangled name
  uint32_t pc = 0;       ///< offset within the function
  uint64_t warp_executed = 0;
  uint64_t thread_true = 0;
};

ordered_json to_json(const std::vector<PcCount>& counts);
/// Parses what the runner wrote; throws ptxbench::Error on malformed input.
std::vector<PcCount> pc_counts_from_json(const ordered_json& j);

/// Functions named in `candidate_kernels` count (each offset must be an instruction of the
/// listing, else the counts are unavailable); others are foreign, except `ignore_prefix` ones.
RuntimeSass runtime_sass_from_pcs(const std::vector<PcCount>& counts, const PcOpcodes& listing,
                                  const std::set<std::string>& candidate_kernels, const std::string& ignore_prefix);

}  // namespace ptxbench

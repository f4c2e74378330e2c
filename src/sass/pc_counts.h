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

/// What the runner reports: per-instruction counts, and the kernels it saw launched (CUPTI
/// activity records), which lets the worker notice a launched kernel CUPTI did not count.
struct SassCounts {
  std::vector<PcCount> instructions;
  std::set<std::string> launched;
};

ordered_json to_json(const SassCounts& counts);
/// Parses what the runner wrote; throws ptxbench::Error on malformed input.
SassCounts sass_counts_from_json(const ordered_json& j);

/// Functions named in `candidate_kernels` count (each offset must be an instruction of the
/// listing); others are foreign, except `ignore_prefix` ones. The counts are unavailable when an
/// offset is unknown, when nothing was launched, or when a launched kernel has no counted
/// instruction (CUPTI missed it: a verdict would be wrong).
RuntimeSass runtime_sass_from_counts(const SassCounts& counts, const PcOpcodes& listing,
                                     const std::set<std::string>& candidate_kernels, const std::string& ignore_prefix);

}  // namespace ptxbench

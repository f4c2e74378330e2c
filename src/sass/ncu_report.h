// Runtime SASS counts from Nsight Compute: per-opcode executed instructions of the candidate's
// kernels, predicate-true thread counts (sass__thread_inst_executed_true_per_opcode) and warp
// counts (sass__inst_executed_per_opcode), parsed from `ncu --csv` output.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sass/runtime_sass.h"

namespace ptxbench {

/// The ncu metrics we collect.
inline constexpr const char* kNcuThreadTrueMetric = "sass__thread_inst_executed_true_per_opcode";
inline constexpr const char* kNcuWarpMetric = "sass__inst_executed_per_opcode";
/// Warp-level executions by opcode with modifiers (the HGMMA shapes apart): exact coverage.
inline constexpr const char* kNcuWarpModifierMetric = "sass__inst_executed_per_opcode_with_modifier_all";
/// Dynamic shared memory of each launch (with the CSV's grid and block columns: the launch as the
/// timed calls must repeat it).
inline constexpr const char* kNcuDynamicSmemMetric = "launch__shared_mem_per_block_dynamic";

/// The ncu command that profiles `target` (the runner's `once` command line) into the CSV file
/// `log`: per-opcode predicate-true thread and warp counts, dynamic shared memory, and (with
/// `with_modifiers`) the warp counts by opcode with modifiers.
std::vector<std::string> ncu_command(const std::string& ncu, const std::string& log, bool with_modifiers,
                                     const std::vector<std::string>& target);
/// Whether ncu's output says it does not know `metric` (an ==ERROR== line naming it).
bool ncu_rejected_metric(const std::string& output, const std::string& metric);

/// Splits one CSV record ("a","b,c","d") into fields.
std::vector<std::string> split_csv_line(const std::string& line);
/// "1,408 (LDC: 384; ULDC: 128)" -> {LDC: 384, ULDC: 128}.
OpcodeCounts parse_instance_values(const std::string& value);
/// Parses an ncu --csv --print-metric-instances details log. Kernels named in
/// `candidate_kernels` (mangled) count; others are listed as foreign, except `ignore_prefix` ones.
RuntimeSass parse_ncu_csv(const std::string& text, const std::set<std::string>& candidate_kernels,
                          const std::string& ignore_prefix);

}  // namespace ptxbench

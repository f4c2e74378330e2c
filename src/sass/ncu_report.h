// Runtime SASS counts from Nsight Compute: per-opcode executed instructions of the candidate's
// kernels, predicate-true thread counts (sass__thread_inst_executed_true_per_opcode) and warp
// counts (sass__inst_executed_per_opcode), parsed from `ncu --csv` output.
#pragma once

#include <array>
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
/// Each launch's duration on the GPU (cache flushed before it, clocks not locked): the profiled
/// call held against the timed calls (src/timing/profile_binding.h).
inline constexpr const char* kNcuDurationMetric = "gpu__time_duration.sum";
/// Hardware counters of the tensor pipe's warpgroup MMA instructions and of the TMA unit's
/// instructions: read from the performance monitors, without patching the kernel, so the kernel
/// cannot tell the pass that collects them from an unprofiled run by its own instruction timing.
/// Held against the patched per-opcode counts (src/timing/profile_binding.h).
inline constexpr const char* kNcuGmmaPipeMetric = "sm__inst_executed_pipe_tensor_op_gmma.sum";
inline constexpr const char* kNcuTmaPipeMetric = "sm__inst_executed_pipe_tma.sum";
/// Metrics an ncu may refuse (another version, another chip): a profile without them still
/// decides the mechanisms; what each adds is then missing from the verdict, which says so.
inline constexpr std::array<const char*, 3> kNcuOptionalMetrics = {kNcuWarpModifierMetric, kNcuGmmaPipeMetric,
                                                                   kNcuTmaPipeMetric};

/// The ncu command that profiles `target` (the runner's `once` command line) into the CSV file
/// `log`: per-opcode predicate-true thread and warp counts, dynamic shared memory, each launch's
/// duration and the hardware pipe counters (`binding`: what the profile binding needs), and
/// those of kNcuOptionalMetrics that are not in `refused`.
std::vector<std::string> ncu_command(const std::string& ncu, const std::string& log, const std::set<std::string>& refused,
                                     bool binding, const std::vector<std::string>& target);
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

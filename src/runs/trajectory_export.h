// Export of stored trajectories: the run folder runs/<run-id>/<trajectory>/ with one turn_<n>.cu per
// extracted candidate and trajectory.json in mini-swe-agent's trajectory format
// ("trajectory_format": "mini-swe-agent-1": info{exit_status, submission, model_stats, config},
// messages[{role, content}]); everything of ours sits under info.ptxbench (docs/agent.md).
#pragma once

#include <cstdint>
#include <string>

#include "runs/run_store.h"
#include "common/fs.h"
#include "common/json_check.h"

namespace ptxbench {

inline constexpr const char* kTrajectoryFormat = "mini-swe-agent-1";
inline constexpr const char* kTrajectoryExtraSchema = "ptxbench.trajectory";
inline constexpr int kTrajectoryExtraSchemaVersion = 1;

/// The folder name of a trajectory inside its run folder: "<definition>__<workload>__<tag>__<index>"
/// (the workload part left out when empty), characters outside [A-Za-z0-9._-] replaced by '_'.
std::string trajectory_dir_name(const TrajectoryInfo& trajectory);

/// The trajectory document (what trajectory.json holds). Candidate files are named, not inlined.
ordered_json trajectory_json(const RunStore& store, int64_t trajectory_id);

/// Writes runs_root/<run-id>/<trajectory>/turn_<n>.cu and trajectory.json (atomically, file by
/// file); returns the trajectory folder. Safe to repeat while the run goes on: files only grow.
fs::path export_trajectory(const RunStore& store, int64_t trajectory_id, const fs::path& runs_root);

/// Every trajectory of the run, plus runs_root/<run-id>/run.json (config, status, trajectory list).
fs::path export_run(const RunStore& store, const std::string& run_id, const fs::path& runs_root);

}  // namespace ptxbench

// The run store's rows: the SQL that reads runs, trajectories, turns and messages into the types
// of run_store.h, and the writes that measured and imported turns share. For RunStore's own files,
// inside its lock (and transaction where it writes); callers use RunStore.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/sqlite_db.h"
#include "runs/run_store.h"

namespace ptxbench::run_rows {

/// "turn N of trajectory T", for messages.
std::string turn_name(int64_t trajectory_id, int64_t turn);
/// The old `status` column beside `state` (migration 3 -> 4): its CHECK knows three values.
std::string legacy_status(RunStatus s);

// ---- reading
/// A stored `running` run whose holder is gone (or that has none) reads as crashed.
[[nodiscard]] std::optional<RunInfo> find_run(SqliteDb& db, const std::string& id);
[[nodiscard]] std::optional<RunInfo> find_imported_run(SqliteDb& db, const std::string& import_key);
[[nodiscard]] std::vector<RunInfo> all_runs(SqliteDb& db);  ///< newest first
[[nodiscard]] std::optional<int64_t> find_trajectory(SqliteDb& db, const std::string& run_id, const TrajectoryKey& key);
[[nodiscard]] std::optional<TrajectoryInfo> find_trajectory(SqliteDb& db, int64_t trajectory_id);
[[nodiscard]] std::vector<TrajectoryInfo> run_trajectories(SqliteDb& db, const std::string& run_id);

/// The last turn begun in a trajectory and its step.
struct LastTurn {
  int64_t turn = 0;
  TurnStep step = TurnStep::complete;
};
[[nodiscard]] std::optional<LastTurn> last_turn(SqliteDb& db, int64_t trajectory_id);
[[nodiscard]] std::vector<StoredMessage> messages(SqliteDb& db, int64_t trajectory_id);
/// Every turn of the trajectory, or only turn `only`, with its answer, candidate, verdict and usage.
[[nodiscard]] std::vector<TurnRecord> turns(SqliteDb& db, int64_t trajectory_id, std::optional<int64_t> only);
[[nodiscard]] std::vector<TurnRow> turn_rows(SqliteDb& db, int64_t trajectory_id);
[[nodiscard]] std::vector<InfraAttempt> infra_attempts(SqliteDb& db, int64_t trajectory_id);
[[nodiscard]] std::optional<std::string> candidate_source(SqliteDb& db, const std::string& sha256);
[[nodiscard]] std::optional<SeedTurn> seed_turn(SqliteDb& db, int64_t trajectory_id);

// ---- writing (inside the caller's transaction)
/// RunStoreError naming `turn` for negative tokens or no attempt.
void check_usage(const ModelUsage& usage, const std::string& turn);
/// A new trajectory of the run, running; returns its id.
int64_t insert_trajectory(SqliteDb& db, const std::string& run_id, const TrajectoryKey& key);
/// Sets the trajectory's final status, stop reason and finish time.
void end_trajectory(SqliteDb& db, int64_t trajectory_id, TrajectoryStatus status, const std::string& reason);
void insert_usage(SqliteDb& db, int64_t trajectory_id, int64_t turn, const ModelUsage& usage);
/// A repair trajectory's seed as its turn 0 (RunStoreError for a bad status or an unreadable verdict).
void insert_seed_turn(SqliteDb& db, int64_t trajectory_id, const SeedTurn& seed);
/// A correct turn with a speedup: raises the trajectory's best (and best target-instruction) speedup.
void raise_bests(SqliteDb& db, int64_t trajectory_id, double speedup, bool target);

}  // namespace ptxbench::run_rows

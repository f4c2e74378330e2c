// RunStore: imported runs, reference results of another benchmark written whole (docs/report.md,
// "Importing ..."): outcomes only, checked as a turn of ours would be, and read like our runs.
#include "runs/run_store.h"

#include <cmath>
#include <string_view>

#include "common/clock.h"
#include "runs/run_store_rows.h"

namespace ptxbench {
namespace {

// What an imported turn may say: a verdict status or one of the statuses named in run_store.h.
bool importable_status(const std::string& s) {
  return parse_status(s).has_value() || s == kExtractionErrorStatus || s == kSanitizeTimeoutStatus ||
         s == kServiceTimeoutStatus || s == kOtherErrorStatus;
}

bool imported_origin(const std::string& origin) {
  std::string_view prefix = kImportedOriginPrefix;
  return origin.size() > prefix.size() && origin.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

using run_rows::turn_name;

std::optional<RunInfo> RunStore::find_imported_run(const std::string& import_key) const {
  std::lock_guard lock(m_mutex);
  return run_rows::find_imported_run(m_db, import_key);
}

void RunStore::import_turn_locked(int64_t trajectory_id, const ImportedTurn& t) {
  std::string name = turn_name(trajectory_id, t.turn);
  std::string origin = origin_locked(trajectory_id);
  if (origin == kMeasuredOrigin)
    throw RunStoreError("cannot import " + name + ": its run was measured here, and imported turns go only into " +
                        "imported runs");
  require_running(trajectory_id, ("import " + name).c_str());
  auto last = run_rows::last_turn(m_db, trajectory_id);
  int64_t next = last ? last->turn + 1 : 1;
  if (t.turn != next)
    throw RunStoreError("cannot import " + name + ": the next turn is " + std::to_string(next));
  if (!importable_status(t.status))
    throw RunStoreError("cannot import " + name + ": status '" + t.status + "' is no verdict status, " +
                        kExtractionErrorStatus + ", " + kSanitizeTimeoutStatus + ", " + kServiceTimeoutStatus + " or " +
                        kOtherErrorStatus);
  if (t.correct != (t.status == "PASSED"))
    throw RunStoreError("cannot import " + name + ": correct is " + (t.correct ? "true" : "false") +
                        " with status " + t.status);
  if (t.target_instruction && !t.correct)
    throw RunStoreError("cannot import " + name + ": target-instruction correct but not correct");
  if (t.speedup && !(std::isfinite(*t.speedup) && *t.speedup >= 0))
    throw RunStoreError("cannot import " + name + ": speedup " + std::to_string(*t.speedup) + " is not a finite value >= 0");
  run_rows::check_usage(t.usage, name);
  double at = epoch_seconds();
  auto insert = m_db.prepare("INSERT INTO turns (trajectory_id, turn, step, status, correct, target_instruction, speedup, "
                             "started_at, completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, trajectory_id).bind(2, t.turn).bind(3, static_cast<int64_t>(TurnStep::complete)).bind(4, t.status);
  insert.bind(5, int64_t{t.correct}).bind(6, int64_t{t.target_instruction});
  insert.bind(7, t.speedup);
  insert.bind(8, at).bind(9, at).run();
  run_rows::insert_usage(m_db, trajectory_id, t.turn, t.usage);
  if (t.correct && t.speedup) run_rows::raise_bests(m_db, trajectory_id, *t.speedup, t.target_instruction);
}

void RunStore::import_turn(int64_t trajectory_id, const ImportedTurn& turn) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  import_turn_locked(trajectory_id, turn);
  tx.commit();
}

std::vector<std::optional<std::string>> RunStore::import_runs(const std::vector<ImportedRun>& runs) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  std::vector<std::optional<std::string>> out;
  for (const auto& run : runs) {
    if (!imported_origin(run.origin))
      throw RunStoreError("an imported run's origin is '" + std::string(kImportedOriginPrefix) + "SOURCE', not '" +
                          run.origin + "'");
    if (run.import_key.empty()) throw RunStoreError("an imported run needs an import key");
    if (run_rows::find_imported_run(m_db, run.import_key)) {
      out.emplace_back(std::nullopt);
      continue;
    }
    std::string id = insert_run_locked(run.config, run.model, run.notes, run.origin, run.gpu, run.import_key,
                                       RunStatus::finished);
    for (const auto& traj : run.trajectories) {
      const TrajectoryKey& k = traj.key;
      if (run_rows::find_trajectory(m_db, id, k))
        throw RunStoreError("imported run '" + run.model + "' has trajectory (" + k.definition + ", " + k.workload_uuid +
                            ", " + k.prompt_tag + ", " + std::to_string(k.index) + ") twice");
      int64_t traj_id = run_rows::insert_trajectory(m_db, id, k);
      for (const auto& turn : traj.turns) import_turn_locked(traj_id, turn);
      if (traj.status != TrajectoryStatus::running)
        run_rows::end_trajectory(m_db, traj_id, traj.status, traj.stop_reason);
    }
    out.emplace_back(id);
  }
  tx.commit();
  return out;
}

}  // namespace ptxbench

#include "runs/run_store_schema.h"

#include "runs/run_store.h"

namespace ptxbench {
namespace {

// "PTBR" in the SQLite header: a run store, not a task queue or another program's file.
// kSchema.migrations[v] takes a store from version v to v + 1. Append, never edit.
const StoreSchema kSchema = {0x50544252, "run store", {
    {
        R"(CREATE TABLE runs (
          id TEXT PRIMARY KEY,
          created_at REAL NOT NULL,
          updated_at REAL NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted')),
          model TEXT NOT NULL DEFAULT '',
          notes TEXT NOT NULL DEFAULT '',
          config TEXT NOT NULL))",
        R"(CREATE TABLE trajectories (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          run_id TEXT NOT NULL REFERENCES runs(id),
          definition TEXT NOT NULL,
          workload_uuid TEXT NOT NULL,
          prompt_tag TEXT NOT NULL,
          tag_index INTEGER NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('running', 'stopped_early', 'finished', 'failed')),
          stop_reason TEXT NOT NULL DEFAULT '',
          best_speedup REAL,
          best_target_speedup REAL,
          started_at REAL NOT NULL,
          finished_at REAL,
          UNIQUE (run_id, definition, workload_uuid, prompt_tag, tag_index)))",
        R"(CREATE TABLE candidates (
          sha256 TEXT PRIMARY KEY,
          source TEXT NOT NULL,
          created_at REAL NOT NULL))",
        R"(CREATE TABLE turns (
          trajectory_id INTEGER NOT NULL REFERENCES trajectories(id),
          turn INTEGER NOT NULL CHECK (turn >= 1),
          step INTEGER NOT NULL CHECK (step BETWEEN 1 AND 7),
          candidate_sha256 TEXT REFERENCES candidates(sha256),
          extraction_error TEXT,
          task_id TEXT,
          submissions INTEGER NOT NULL DEFAULT 0,
          status TEXT NOT NULL DEFAULT '',
          correct INTEGER NOT NULL DEFAULT 0,
          target_instruction INTEGER NOT NULL DEFAULT 0,
          speedup REAL,
          started_at REAL NOT NULL,
          answered_at REAL, extracted_at REAL, submitted_at REAL, verdict_at REAL, feedback_at REAL,
          completed_at REAL,
          PRIMARY KEY (trajectory_id, turn)))",
        // kind: prompt (turn 0: system, task), answer (assistant, one per turn), feedback (user,
        // one per turn); the partial index makes a second answer or feedback of a turn impossible.
        R"(CREATE TABLE messages (
          trajectory_id INTEGER NOT NULL REFERENCES trajectories(id),
          seq INTEGER NOT NULL CHECK (seq >= 1),
          turn INTEGER NOT NULL CHECK (turn >= 0),
          role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
          kind TEXT NOT NULL CHECK (kind IN ('prompt', 'answer', 'feedback')),
          content TEXT NOT NULL,
          reasoning TEXT NOT NULL DEFAULT '',
          created_at REAL NOT NULL,
          PRIMARY KEY (trajectory_id, seq)))",
        "CREATE UNIQUE INDEX messages_one_per_turn ON messages(trajectory_id, turn, kind) WHERE kind <> 'prompt'",
        R"(CREATE TABLE usage (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          trajectory_id INTEGER NOT NULL,
          turn INTEGER NOT NULL,
          prompt_tokens INTEGER NOT NULL,
          completion_tokens INTEGER NOT NULL,
          reasoning_tokens INTEGER NOT NULL,
          cached_tokens INTEGER NOT NULL,
          latency_s REAL NOT NULL,
          attempts INTEGER NOT NULL,
          provider TEXT NOT NULL,
          model TEXT NOT NULL,
          finish_reason TEXT NOT NULL,
          created_at REAL NOT NULL,
          UNIQUE (trajectory_id, turn),
          FOREIGN KEY (trajectory_id, turn) REFERENCES turns(trajectory_id, turn)))",
        R"(CREATE TABLE verdicts (
          trajectory_id INTEGER NOT NULL,
          turn INTEGER NOT NULL,
          task_id TEXT NOT NULL,
          status TEXT NOT NULL,
          verdict TEXT NOT NULL,
          created_at REAL NOT NULL,
          PRIMARY KEY (trajectory_id, turn),
          FOREIGN KEY (trajectory_id, turn) REFERENCES turns(trajectory_id, turn)))",
        "CREATE INDEX trajectories_by_run ON trajectories(run_id, id)",
    },
    // 1 -> 2: imported runs. Existing runs are ours: origin 'measured', no run-level GPU.
    {
        "ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT 'measured' "
        "CHECK (origin = 'measured' OR origin LIKE 'imported:_%')",
        "ALTER TABLE runs ADD COLUMN gpu TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE runs ADD COLUMN import_key TEXT",
        "CREATE UNIQUE INDEX runs_by_import_key ON runs(import_key) WHERE import_key IS NOT NULL",
    },
    // 2 -> 3: Triton candidates (issue 22). Existing candidates are CUDA-PTX sources.
    {
        "ALTER TABLE candidates ADD COLUMN language TEXT NOT NULL DEFAULT 'cuda' CHECK (language IN ('cuda', 'triton'))",
    },
    // 3 -> 4: the run lifecycle (issue 34). `state` is the run's status from now on: the CHECK of
    // `status` cannot take 'failed' without rebuilding `runs`, which the trajectories' foreign
    // key forbids inside a migration's transaction, so `status` stays beside it, written with the
    // nearest old value ('interrupted' for failed). Runs left 'running' have no holder and read as
    // crashed. INFRA_ERROR evaluations that were re-run are kept in infra_attempts, not as turns.
    {
        "ALTER TABLE runs ADD COLUMN state TEXT NOT NULL DEFAULT 'running' "
        "CHECK (state IN ('running', 'finished', 'interrupted', 'failed'))",
        "UPDATE runs SET state = status",
        "ALTER TABLE runs ADD COLUMN failure TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE runs ADD COLUMN holder_pid INTEGER",
        "ALTER TABLE runs ADD COLUMN holder_host TEXT",
        "ALTER TABLE runs ADD COLUMN holder_started TEXT",
        "ALTER TABLE runs ADD COLUMN archived_at REAL",
        R"(CREATE TABLE infra_attempts (
          trajectory_id INTEGER NOT NULL,
          turn INTEGER NOT NULL,
          attempt INTEGER NOT NULL CHECK (attempt >= 1),
          task_id TEXT NOT NULL,
          verdict TEXT NOT NULL,
          created_at REAL NOT NULL,
          PRIMARY KEY (trajectory_id, turn, attempt),
          FOREIGN KEY (trajectory_id, turn) REFERENCES turns(trajectory_id, turn)))",
    },
    // 4 -> 5: a repair trajectory's seed as its turn 0 (issue 36). A table of its own: turns.turn
    // is CHECKed >= 1, and a seed is no model turn the reports may count. The source is kept
    // inline (not in candidates, whose rows go with the last turn naming them).
    {
        R"(CREATE TABLE seed_turns (
          trajectory_id INTEGER PRIMARY KEY REFERENCES trajectories(id),
          source TEXT NOT NULL,
          language TEXT NOT NULL CHECK (language IN ('cuda', 'triton')),
          status TEXT NOT NULL,
          feedback TEXT NOT NULL,
          verdict TEXT,
          origin_run TEXT,
          origin_trajectory INTEGER,
          origin_turn INTEGER,
          created_at REAL NOT NULL))",
    },
}};
static_assert(RunStore::kSchemaVersion == 5, "add a migration to kSchema with the new version");

}  // namespace

const StoreSchema& run_store_schema() { return kSchema; }

}  // namespace ptxbench

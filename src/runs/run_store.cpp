#include "runs/run_store.h"

#include "common/clock.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <random>
#include <string_view>

#include "common/sha256.h"

namespace ptxbench {
namespace {

// "PTBR" in the SQLite header: a run store, not a task queue or another program's file.
constexpr int64_t kApplicationId = 0x50544252;

// Schema migrations: kMigrations[v] takes a store from version v to v + 1. Append, never edit.
const std::vector<std::vector<const char*>> kMigrations = {
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
};
static_assert(RunStore::kSchemaVersion == 4, "add a migration to kMigrations with the new version");

double now() { return epoch_seconds(); }

std::string new_run_id() {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^ (uint64_t(std::random_device{}()) << 32));
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  char buf[48];
  snprintf(buf, sizeof buf, "%s-%04x", stamp, static_cast<unsigned>(rng() & 0xffff));
  return buf;
}

std::string turn_name(int64_t trajectory_id, int64_t turn) {
  return "turn " + std::to_string(turn) + " of trajectory " + std::to_string(trajectory_id);
}





const char* kRunColumns = "id, state, model, notes, config, created_at, updated_at, origin, gpu, import_key, failure, "
                          "holder_pid, holder_host, holder_started, archived_at";

// A stored 'running' run is running only while its holder lives; one with no holder (written
// before schema 4) or whose holder is gone is crashed. A holder on another host counts as alive:
// nothing here can tell, and taking over a live run would twin its turns.
RunInfo read_run(const SqliteStatement& st) {
  RunInfo r;
  r.id = st.text(0);
  r.status = parse_run_status(st.text(1)).value_or(RunStatus::running);
  r.model = st.text(2);
  r.notes = st.text(3);
  r.config = ordered_json::parse(st.text(4));
  r.created_at = st.real(5);
  r.updated_at = st.real(6);
  r.origin = st.text(7);
  r.gpu = st.text(8);
  r.import_key = st.optional_text(9).value_or("");
  r.failure = st.text(10);
  if (!st.is_null(11)) r.holder = RunHolder{st.integer(11), st.text(12), st.text(13)};
  r.archived_at = st.optional_real(14);
  if (r.status == RunStatus::running && (!r.holder || r.holder->liveness() == RunHolder::Liveness::gone))
    r.status = RunStatus::crashed;
  return r;
}

// The old `status` column beside `state` (migration 3 -> 4): its CHECK knows three values.
std::string legacy_status(RunStatus s) {
  return s == RunStatus::running || s == RunStatus::finished ? to_string(s) : to_string(RunStatus::interrupted);
}

}  // namespace

std::string held_elsewhere(const RunInfo& r, const std::string& refused) {
  if (r.status != RunStatus::running || !r.holder || r.holder->same_process(RunHolder::current())) return "";
  return "run " + r.id + " is running in " + r.holder->describe() + ": " + refused +
         (r.holder->liveness() == RunHolder::Liveness::unknown
              ? " (processes of that host cannot be checked from here; wait for it to end)"
              : " (wait for it to end, or stop that process first)");
}

namespace {

// What an imported turn may say: a verdict status or one of the statuses named in run_store.h.
bool importable_status(const std::string& s) {
  return parse_status(s).has_value() || s == kExtractionErrorStatus || s == kSanitizeTimeoutStatus ||
         s == kServiceTimeoutStatus || s == kOtherErrorStatus;
}

void check_usage(const ModelUsage& usage, const std::string& turn) {
  if (usage.prompt_tokens < 0 || usage.completion_tokens < 0 || usage.reasoning_tokens < 0 || usage.cached_tokens < 0 ||
      usage.attempts < 1)
    throw RunStoreError("model usage of " + turn + " has negative tokens or no attempt");
}

void insert_usage(SqliteDb& db, int64_t trajectory_id, int64_t turn, const ModelUsage& usage) {
  db.prepare("INSERT INTO usage (trajectory_id, turn, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, "
             "latency_s, attempts, provider, model, finish_reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, trajectory_id)
      .bind(2, turn)
      .bind(3, usage.prompt_tokens)
      .bind(4, usage.completion_tokens)
      .bind(5, usage.reasoning_tokens)
      .bind(6, usage.cached_tokens)
      .bind(7, usage.latency_s)
      .bind(8, usage.attempts)
      .bind(9, usage.provider)
      .bind(10, usage.model)
      .bind(11, usage.finish_reason)
      .bind(12, now())
      .run();
}

// A correct turn with a speedup: raise the trajectory's best (and best target-instruction) speedup.
void raise_bests(SqliteDb& db, int64_t trajectory_id, double speedup, bool target) {
  db.prepare("UPDATE trajectories SET best_speedup = MAX(COALESCE(best_speedup, ?1), ?1) WHERE id = ?2")
      .bind(1, speedup)
      .bind(2, trajectory_id)
      .run();
  if (target)
    db.prepare("UPDATE trajectories SET best_target_speedup = MAX(COALESCE(best_target_speedup, ?1), ?1) WHERE id = ?2")
        .bind(1, speedup)
        .bind(2, trajectory_id)
        .run();
}

bool imported_origin(const std::string& origin) {
  std::string_view prefix = kImportedOriginPrefix;
  return origin.size() > prefix.size() && origin.compare(0, prefix.size(), prefix) == 0;
}

const char* kTrajectoryColumns =
    "id, run_id, definition, workload_uuid, prompt_tag, tag_index, status, stop_reason, best_speedup, "
    "best_target_speedup, started_at, finished_at, "
    "(SELECT COUNT(*) FROM turns t WHERE t.trajectory_id = trajectories.id AND t.step = 7)";

TrajectoryInfo read_trajectory(const SqliteStatement& st) {
  TrajectoryInfo t;
  t.id = st.integer(0);
  t.run_id = st.text(1);
  t.key = {st.text(2), st.text(3), st.text(4), st.integer(5)};
  t.status = parse_trajectory_status(st.text(6)).value_or(TrajectoryStatus::failed);
  t.stop_reason = st.text(7);
  t.best_speedup = st.optional_real(8);
  t.best_target_speedup = st.optional_real(9);
  t.started_at = st.real(10);
  t.finished_at = st.optional_real(11);
  t.turns_completed = st.integer(12);
  return t;
}

}  // namespace

// ---------------------------------------------------------------------------------------- names

std::string to_string(RunStatus s) {
  switch (s) {
    case RunStatus::running: return "running";
    case RunStatus::finished: return "finished";
    case RunStatus::interrupted: return "interrupted";
    case RunStatus::failed: return "failed";
    case RunStatus::crashed: return "crashed";
  }
  return "running";
}

std::string to_string(TrajectoryStatus s) {
  switch (s) {
    case TrajectoryStatus::running: return "running";
    case TrajectoryStatus::stopped_early: return "stopped_early";
    case TrajectoryStatus::finished: return "finished";
    case TrajectoryStatus::failed: return "failed";
  }
  return "failed";
}

std::string to_string(TurnStep s) {
  switch (s) {
    case TurnStep::model_call_started: return "model_call_started";
    case TurnStep::model_answered: return "model_answered";
    case TurnStep::candidate_extracted: return "candidate_extracted";
    case TurnStep::evaluation_submitted: return "evaluation_submitted";
    case TurnStep::verdict_stored: return "verdict_stored";
    case TurnStep::feedback_stored: return "feedback_stored";
    case TurnStep::complete: return "complete";
  }
  return "?";
}

std::string to_string(NextAction a) {
  switch (a) {
    case NextAction::store_initial_messages: return "store_initial_messages";
    case NextAction::next_turn: return "next_turn";
    case NextAction::call_model: return "call_model";
    case NextAction::extract_candidate: return "extract_candidate";
    case NextAction::submit_evaluation: return "submit_evaluation";
    case NextAction::await_verdict: return "await_verdict";
    case NextAction::feedback_or_complete: return "feedback_or_complete";
    case NextAction::complete_turn: return "complete_turn";
    case NextAction::done: return "done";
  }
  return "?";
}

std::optional<RunStatus> parse_run_status(const std::string& s) {
  for (RunStatus v : {RunStatus::running, RunStatus::finished, RunStatus::interrupted, RunStatus::failed, RunStatus::crashed})
    if (to_string(v) == s) return v;
  return std::nullopt;
}

std::optional<TrajectoryStatus> parse_trajectory_status(const std::string& s) {
  for (TrajectoryStatus v : {TrajectoryStatus::running, TrajectoryStatus::stopped_early, TrajectoryStatus::finished,
                             TrajectoryStatus::failed})
    if (to_string(v) == s) return v;
  return std::nullopt;
}

NextAction ResumePoint::next() const {
  if (trajectory.status != TrajectoryStatus::running) return NextAction::done;
  if (!last) {
    bool opened = std::any_of(messages.begin(), messages.end(), [](const StoredMessage& m) { return m.turn == 0; });
    return opened ? NextAction::next_turn : NextAction::store_initial_messages;
  }
  switch (last->step) {
    case TurnStep::model_call_started: return NextAction::call_model;
    case TurnStep::model_answered: return NextAction::extract_candidate;
    case TurnStep::candidate_extracted:
      return last->extraction_error ? NextAction::feedback_or_complete : NextAction::submit_evaluation;
    case TurnStep::evaluation_submitted: return NextAction::await_verdict;
    case TurnStep::verdict_stored: return NextAction::feedback_or_complete;
    case TurnStep::feedback_stored: return NextAction::complete_turn;
    case TurnStep::complete: return NextAction::next_turn;
  }
  return NextAction::done;
}

// ---------------------------------------------------------------------------------------- open

namespace {
SqliteDb::Mode db_mode(RunStore::Open mode) {
  switch (mode) {
    case RunStore::Open::create: return SqliteDb::Mode::create;
    case RunStore::Open::existing: return SqliteDb::Mode::existing;
    case RunStore::Open::read_only: return SqliteDb::Mode::read_only;
  }
  return SqliteDb::Mode::existing;
}
}  // namespace

RunStore::RunStore(const std::string& path, Open mode) : m_path(path), m_db(path, db_mode(mode)) {
  // Turns are minutes apart: a full fsync per commit costs nothing here and keeps the last step
  // even across a power loss, not only a process kill (which WAL with NORMAL already survives).
  if (mode != Open::read_only) m_db.exec("PRAGMA synchronous=FULL");
  m_db.open_store(kApplicationId, "run store", kMigrations);
}

// ---------------------------------------------------------------------------------------- runs

std::string RunStore::insert_run_locked(const ordered_json& config, const std::string& model, const std::string& notes,
                                        const std::string& origin, const std::string& gpu,
                                        const std::string& import_key, RunStatus status) {
  for (int attempt = 0;; ++attempt) {
    std::string id = new_run_id();
    auto exists = m_db.prepare("SELECT 1 FROM runs WHERE id = ?");
    exists.bind(1, id);
    if (exists.step()) {
      if (attempt >= 100) throw RunStoreError("cannot find a free run id");
      continue;  // same second and same suffix: draw again
    }
    double t = now();
    auto insert = m_db.prepare("INSERT INTO runs (id, created_at, updated_at, status, model, notes, config, origin, gpu, "
                               "import_key, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.bind(1, id).bind(2, t).bind(3, t).bind(4, legacy_status(status)).bind(5, model).bind(6, notes);
    insert.bind(7, config.dump()).bind(8, origin).bind(9, gpu);
    if (import_key.empty())
      insert.bind_null(10);
    else
      insert.bind(10, import_key);
    insert.bind(11, to_string(status));
    insert.run();
    if (status == RunStatus::running) hold_locked(id);
    return id;
  }
}

std::string RunStore::create_run(const ordered_json& config, const std::string& model, const std::string& notes) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  std::string id = insert_run_locked(config, model, notes, kMeasuredOrigin, "", "", RunStatus::running);
  tx.commit();
  return id;
}

std::vector<RunInfo> RunStore::list_runs() const {
  std::lock_guard lock(m_mutex);
  std::vector<RunInfo> out;
  auto st = m_db.prepare(std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY created_at DESC, id DESC");
  while (st.step()) out.push_back(read_run(st));
  return out;
}

std::optional<RunInfo> RunStore::find_run_locked(const std::string& id) const {
  auto st = m_db.prepare(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return read_run(st);
}

std::optional<RunInfo> RunStore::find_run(const std::string& id) const {
  std::lock_guard lock(m_mutex);
  return find_run_locked(id);
}

RunInfo RunStore::run(const std::string& id) const {
  auto r = find_run(id);
  if (!r) throw RunStoreError("no run '" + id + "' in " + m_path);
  return *r;
}

ordered_json RunStore::run_config(const std::string& id) const { return run(id).config; }

void RunStore::hold_locked(const std::string& id) {
  RunHolder me = RunHolder::current();
  m_db.prepare("UPDATE runs SET holder_pid = ?, holder_host = ?, holder_started = ? WHERE id = ?")
      .bind(1, me.pid)
      .bind(2, me.host)
      .bind(3, me.started)
      .bind(4, id)
      .run();
}

void RunStore::set_run_status(const std::string& id, RunStatus status, const std::string& failure) {
  if (status == RunStatus::crashed)
    throw RunStoreError("cannot set run " + id + " crashed: that is how a running run whose process is gone reads");
  std::lock_guard lock(m_mutex);
  // BEGIN IMMEDIATE before the SELECT: a read left open would have to be upgraded for the write,
  // which SQLite refuses at once (SQLITE_BUSY, no busy wait) when another process (an MCP server,
  // the token proxy) wrote to the store in between.
  SqliteTransaction tx(m_db);
  auto r = find_run_locked(id);
  if (!r) throw RunStoreError("no run '" + id + "' in " + m_path);
  if (r->imported())
    throw RunStoreError("cannot set the status of run " + id + ": it was imported (" + r->origin + "), not run here");
  m_db.prepare("UPDATE runs SET state = ?, status = ?, failure = ?, updated_at = ?, holder_pid = NULL, holder_host = NULL, "
               "holder_started = NULL WHERE id = ?")
      .bind(1, to_string(status))
      .bind(2, legacy_status(status))
      .bind(3, status == RunStatus::failed ? failure : std::string())
      .bind(4, now())
      .bind(5, id)
      .run();
  if (status == RunStatus::running) hold_locked(id);
  tx.commit();
}

RunInfo RunStore::claim_run(const std::string& id) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  auto r = find_run_locked(id);
  if (!r) throw RunStoreError("no run '" + id + "' in " + m_path);
  if (r->imported())
    throw RunStoreError("run " + id + " was imported (" + r->origin + "): it holds reference results, not a run of ours to resume");
  if (std::string held = held_elsewhere(*r, "it cannot be resumed twice"); !held.empty()) throw RunHeldError(held);
  m_db.prepare("UPDATE runs SET state = 'running', status = 'running', failure = '', updated_at = ? WHERE id = ?")
      .bind(1, now())
      .bind(2, id)
      .run();
  hold_locked(id);
  tx.commit();
  return *r;
}

void RunStore::set_run_archived(const std::string& id, bool archived) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  auto update = m_db.prepare(archived ? "UPDATE runs SET archived_at = COALESCE(archived_at, ?) WHERE id = ?"
                                      : "UPDATE runs SET archived_at = NULL WHERE id = ?");
  if (archived) update.bind(1, now()).bind(2, id);
  else update.bind(1, id);
  update.run();
  if (m_db.changes() != 1) throw RunStoreError("no run '" + id + "' in " + m_path);
  tx.commit();
}

DeletedRun RunStore::delete_run(const std::string& id, bool force) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  auto r = find_run_locked(id);
  if (!r) throw RunStoreError("no run '" + id + "' in " + m_path);
  if (std::string held = held_elsewhere(*r, "it is not deleted while it runs, unless --force");
      !force && !held.empty())
    throw RunHeldError(held);
  DeletedRun out;
  auto count = [&](const char* sql) {
    auto st = m_db.prepare(sql);
    st.bind(1, id);
    st.step();
    return st.integer(0);
  };
  out.trajectories = count("SELECT COUNT(*) FROM trajectories WHERE run_id = ?");
  out.turns = count("SELECT COUNT(*) FROM turns WHERE trajectory_id IN (SELECT id FROM trajectories WHERE run_id = ?)");
  // Every table keyed by trajectory_id, ours (messages, usage, verdicts, infra_attempts) and those
  // other components keep in this file (the usage proxy's agent_model_calls), before the turns and
  // trajectories their foreign keys point at.
  std::vector<std::string> tables;
  {
    auto st = m_db.prepare("SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND m.name NOT IN ('turns', 'trajectories') "
                           "AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'trajectory_id')");
    while (st.step()) tables.push_back(st.text(0));
  }
  tables.push_back("turns");
  for (const auto& t : tables)
    m_db.prepare("DELETE FROM \"" + t + "\" WHERE trajectory_id IN (SELECT id FROM trajectories WHERE run_id = ?)").bind(1, id).run();
  m_db.prepare("DELETE FROM trajectories WHERE run_id = ?").bind(1, id).run();
  m_db.prepare("DELETE FROM runs WHERE id = ?").bind(1, id).run();
  // Candidates are shared by content: only those no remaining turn names go.
  m_db.exec("DELETE FROM candidates WHERE sha256 NOT IN (SELECT candidate_sha256 FROM turns WHERE candidate_sha256 IS NOT NULL)");
  tx.commit();
  return out;
}

void RunStore::set_run_notes(const std::string& id, const std::string& notes) {
  std::lock_guard lock(m_mutex);
  m_db.prepare("UPDATE runs SET notes = ?, updated_at = ? WHERE id = ?").bind(1, notes).bind(2, now()).bind(3, id).run();
  if (m_db.changes() != 1) throw RunStoreError("no run '" + id + "' in " + m_path);
}

// ---------------------------------------------------------------------------------------- trajectories

int64_t RunStore::ensure_trajectory(const std::string& run_id, const TrajectoryKey& key) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  auto run = m_db.prepare("SELECT 1 FROM runs WHERE id = ?");
  run.bind(1, run_id);
  if (!run.step()) throw RunStoreError("no run '" + run_id + "' in " + m_path);
  m_db.prepare("INSERT OR IGNORE INTO trajectories (run_id, definition, workload_uuid, prompt_tag, tag_index, status, "
               "started_at) VALUES (?, ?, ?, ?, ?, 'running', ?)")
      .bind(1, run_id)
      .bind(2, key.definition)
      .bind(3, key.workload_uuid)
      .bind(4, key.prompt_tag)
      .bind(5, key.index)
      .bind(6, now())
      .run();
  auto id = m_db.prepare("SELECT id FROM trajectories WHERE run_id = ? AND definition = ? AND workload_uuid = ? AND "
                         "prompt_tag = ? AND tag_index = ?");
  id.bind(1, run_id).bind(2, key.definition).bind(3, key.workload_uuid).bind(4, key.prompt_tag).bind(5, key.index);
  id.step();
  int64_t out = id.integer(0);
  tx.commit();
  return out;
}

std::optional<int64_t> RunStore::find_trajectory(const std::string& run_id, const TrajectoryKey& key) const {
  std::lock_guard lock(m_mutex);
  auto id = m_db.prepare("SELECT id FROM trajectories WHERE run_id = ? AND definition = ? AND workload_uuid = ? AND "
                         "prompt_tag = ? AND tag_index = ?");
  id.bind(1, run_id).bind(2, key.definition).bind(3, key.workload_uuid).bind(4, key.prompt_tag).bind(5, key.index);
  if (!id.step()) return std::nullopt;
  return id.integer(0);
}

TrajectoryInfo RunStore::trajectory_locked(int64_t trajectory_id) const {
  auto st = m_db.prepare(std::string("SELECT ") + kTrajectoryColumns + " FROM trajectories WHERE id = ?");
  st.bind(1, trajectory_id);
  if (!st.step()) throw RunStoreError("no trajectory " + std::to_string(trajectory_id) + " in " + m_path);
  return read_trajectory(st);
}

TrajectoryInfo RunStore::trajectory(int64_t trajectory_id) const {
  std::lock_guard lock(m_mutex);
  return trajectory_locked(trajectory_id);
}

std::vector<TrajectoryInfo> RunStore::list_trajectories(const std::string& run_id) const {
  std::lock_guard lock(m_mutex);
  std::vector<TrajectoryInfo> out;
  auto st = m_db.prepare(std::string("SELECT ") + kTrajectoryColumns + " FROM trajectories WHERE run_id = ? ORDER BY id");
  st.bind(1, run_id);
  while (st.step()) out.push_back(read_trajectory(st));
  return out;
}

void RunStore::require_running(int64_t trajectory_id, const char* action) {
  TrajectoryInfo t = trajectory_locked(trajectory_id);
  if (t.status != TrajectoryStatus::running)
    throw RunStoreError(std::string("cannot ") + action + ": trajectory " + std::to_string(trajectory_id) + " is " +
                        to_string(t.status) + (t.status == TrajectoryStatus::failed ? " (reopen it first)" : ""));
}

int64_t RunStore::next_seq(int64_t trajectory_id) {
  auto st = m_db.prepare("SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE trajectory_id = ?");
  st.bind(1, trajectory_id);
  st.step();
  return st.integer(0);
}

void RunStore::insert_message(int64_t trajectory_id, int64_t turn, const std::string& role, const std::string& content,
                              const char* kind, const std::string& reasoning) {
  if (role != "system" && role != "user" && role != "assistant")
    throw RunStoreError("message role '" + role + "' is not system, user or assistant");
  m_db.prepare("INSERT INTO messages (trajectory_id, seq, turn, role, kind, content, reasoning, created_at) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, trajectory_id)
      .bind(2, next_seq(trajectory_id))
      .bind(3, turn)
      .bind(4, role)
      .bind(5, std::string(kind))
      .bind(6, content)
      .bind(7, reasoning)
      .bind(8, now())
      .run();
}

void RunStore::record_initial_messages(int64_t trajectory_id, const std::vector<StoredMessage>& messages) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  require_measured(trajectory_id, "store the opening messages");
  require_running(trajectory_id, "store the opening messages");
  if (messages.empty()) throw RunStoreError("the opening messages of a trajectory cannot be empty");
  if (next_seq(trajectory_id) != 1)
    throw RunStoreError("trajectory " + std::to_string(trajectory_id) + " already has its opening messages");
  for (const auto& m : messages) insert_message(trajectory_id, 0, m.role, m.content, "prompt");
  tx.commit();
}

void RunStore::finish_locked(int64_t trajectory_id, TrajectoryStatus status, const std::string& reason) {
  if (status == TrajectoryStatus::running) throw RunStoreError("finish_trajectory needs a final status, not running");
  require_running(trajectory_id, ("finish it as " + to_string(status)).c_str());
  if (status != TrajectoryStatus::failed) {
    auto last = m_db.prepare("SELECT turn, step FROM turns WHERE trajectory_id = ? ORDER BY turn DESC LIMIT 1");
    last.bind(1, trajectory_id);
    if (last.step() && last.integer(1) != static_cast<int64_t>(TurnStep::complete))
      throw RunStoreError("cannot finish trajectory " + std::to_string(trajectory_id) + " as " + to_string(status) +
                          ": " + turn_name(trajectory_id, last.integer(0)) + " is at step " +
                          to_string(static_cast<TurnStep>(last.integer(1))));
  }
  m_db.prepare("UPDATE trajectories SET status = ?, stop_reason = ?, finished_at = ? WHERE id = ?")
      .bind(1, to_string(status))
      .bind(2, reason)
      .bind(3, now())
      .bind(4, trajectory_id)
      .run();
}

void RunStore::finish_trajectory(int64_t trajectory_id, TrajectoryStatus status, const std::string& reason) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  finish_locked(trajectory_id, status, reason);
  tx.commit();
}

void RunStore::reopen_trajectory(int64_t trajectory_id) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  TrajectoryInfo t = trajectory_locked(trajectory_id);
  require_measured(trajectory_id, "reopen it");
  if (t.status == TrajectoryStatus::running)
    throw RunStoreError("trajectory " + std::to_string(trajectory_id) + " is already running");
  m_db.prepare("UPDATE trajectories SET status = 'running', stop_reason = '', finished_at = NULL WHERE id = ?")
      .bind(1, trajectory_id)
      .run();
  tx.commit();
}

std::string RunStore::origin_locked(int64_t trajectory_id) const {
  auto st = m_db.prepare("SELECT r.origin FROM trajectories t JOIN runs r ON r.id = t.run_id WHERE t.id = ?");
  st.bind(1, trajectory_id);
  if (!st.step()) throw RunStoreError("no trajectory " + std::to_string(trajectory_id) + " in " + m_path);
  return st.text(0);
}

void RunStore::require_measured(int64_t trajectory_id, const char* action) const {
  std::string origin = origin_locked(trajectory_id);
  if (origin != kMeasuredOrigin)
    throw RunStoreError(std::string("cannot ") + action + ": trajectory " + std::to_string(trajectory_id) +
                        " belongs to a run imported from elsewhere (" + origin + "); imported runs are read-only");
}

// ---------------------------------------------------------------------------------------- imported runs

std::optional<RunInfo> RunStore::find_imported_locked(const std::string& import_key) const {
  auto st = m_db.prepare(std::string("SELECT ") + kRunColumns + " FROM runs WHERE import_key = ?");
  st.bind(1, import_key);
  if (!st.step()) return std::nullopt;
  return read_run(st);
}

std::optional<RunInfo> RunStore::find_imported_run(const std::string& import_key) const {
  std::lock_guard lock(m_mutex);
  return find_imported_locked(import_key);
}

void RunStore::import_turn_locked(int64_t trajectory_id, const ImportedTurn& t) {
  std::string name = turn_name(trajectory_id, t.turn);
  std::string origin = origin_locked(trajectory_id);
  if (origin == kMeasuredOrigin)
    throw RunStoreError("cannot import " + name + ": its run was measured here, and imported turns go only into " +
                        "imported runs");
  require_running(trajectory_id, ("import " + name).c_str());
  auto last = m_db.prepare("SELECT MAX(turn) FROM turns WHERE trajectory_id = ?");
  last.bind(1, trajectory_id);
  last.step();
  int64_t next = last.is_null(0) ? 1 : last.integer(0) + 1;
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
  check_usage(t.usage, name);
  double at = now();
  auto insert = m_db.prepare("INSERT INTO turns (trajectory_id, turn, step, status, correct, target_instruction, speedup, "
                             "started_at, completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, trajectory_id).bind(2, t.turn).bind(3, static_cast<int64_t>(TurnStep::complete)).bind(4, t.status);
  insert.bind(5, int64_t{t.correct}).bind(6, int64_t{t.target_instruction});
  insert.bind(7, t.speedup);
  insert.bind(8, at).bind(9, at).run();
  insert_usage(m_db, trajectory_id, t.turn, t.usage);
  if (t.correct && t.speedup) raise_bests(m_db, trajectory_id, *t.speedup, t.target_instruction);
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
    if (find_imported_locked(run.import_key)) {
      out.emplace_back(std::nullopt);
      continue;
    }
    std::string id = insert_run_locked(run.config, run.model, run.notes, run.origin, run.gpu, run.import_key,
                                       RunStatus::finished);
    for (const auto& traj : run.trajectories) {
      const TrajectoryKey& k = traj.key;
      auto dup = m_db.prepare("SELECT 1 FROM trajectories WHERE run_id = ? AND definition = ? AND workload_uuid = ? AND "
                              "prompt_tag = ? AND tag_index = ?");
      dup.bind(1, id).bind(2, k.definition).bind(3, k.workload_uuid).bind(4, k.prompt_tag).bind(5, k.index);
      if (dup.step())
        throw RunStoreError("imported run '" + run.model + "' has trajectory (" + k.definition + ", " + k.workload_uuid +
                            ", " + k.prompt_tag + ", " + std::to_string(k.index) + ") twice");
      double t = now();
      m_db.prepare("INSERT INTO trajectories (run_id, definition, workload_uuid, prompt_tag, tag_index, status, started_at) "
                   "VALUES (?, ?, ?, ?, ?, 'running', ?)")
          .bind(1, id)
          .bind(2, k.definition)
          .bind(3, k.workload_uuid)
          .bind(4, k.prompt_tag)
          .bind(5, k.index)
          .bind(6, t)
          .run();
      int64_t traj_id = sqlite3_last_insert_rowid(m_db.handle());
      for (const auto& turn : traj.turns) import_turn_locked(traj_id, turn);
      if (traj.status != TrajectoryStatus::running)
        m_db.prepare("UPDATE trajectories SET status = ?, stop_reason = ?, finished_at = ? WHERE id = ?")
            .bind(1, to_string(traj.status))
            .bind(2, traj.stop_reason)
            .bind(3, now())
            .bind(4, traj_id)
            .run();
    }
    out.emplace_back(id);
  }
  tx.commit();
  return out;
}

// ---------------------------------------------------------------------------------------- turn steps

struct RunStore::StepCheck {
  TurnStep step;
  bool extraction_error;
  std::optional<std::string> task_id;
};

RunStore::StepCheck RunStore::require_step(int64_t trajectory_id, int64_t turn, std::initializer_list<TurnStep> allowed,
                                           const char* action) {
  require_measured(trajectory_id, action);
  require_running(trajectory_id, action);
  auto st = m_db.prepare("SELECT step, extraction_error IS NOT NULL, task_id FROM turns WHERE trajectory_id = ? AND turn = ?");
  st.bind(1, trajectory_id).bind(2, turn);
  if (!st.step())
    throw RunStoreError(std::string("cannot ") + action + ": " + turn_name(trajectory_id, turn) + " was not begun");
  StepCheck c{static_cast<TurnStep>(st.integer(0)), st.integer(1) != 0, st.optional_text(2)};
  for (TurnStep s : allowed)
    if (s == c.step) return c;
  std::string expected;
  for (TurnStep s : allowed) expected += (expected.empty() ? "" : " or ") + to_string(s);
  throw RunStoreError(std::string("cannot ") + action + ": " + turn_name(trajectory_id, turn) + " is at step " +
                      to_string(c.step) + ", expected " + expected);
}

void RunStore::set_step(int64_t trajectory_id, int64_t turn, TurnStep step, const char* time_column) {
  m_db.prepare(std::string("UPDATE turns SET step = ?, ") + time_column + " = ? WHERE trajectory_id = ? AND turn = ?")
      .bind(1, static_cast<int64_t>(step))
      .bind(2, now())
      .bind(3, trajectory_id)
      .bind(4, turn)
      .run();
}

void RunStore::begin_turn(int64_t trajectory_id, int64_t turn) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  require_measured(trajectory_id, ("begin turn " + std::to_string(turn)).c_str());
  require_running(trajectory_id, ("begin turn " + std::to_string(turn)).c_str());
  if (next_seq(trajectory_id) == 1)
    throw RunStoreError("cannot begin " + turn_name(trajectory_id, turn) + ": the opening messages are not stored");
  auto last = m_db.prepare("SELECT turn, step FROM turns WHERE trajectory_id = ? ORDER BY turn DESC LIMIT 1");
  last.bind(1, trajectory_id);
  int64_t last_turn = 0;
  TurnStep last_step = TurnStep::complete;
  if (last.step()) {
    last_turn = last.integer(0);
    last_step = static_cast<TurnStep>(last.integer(1));
  }
  if (turn <= last_turn)
    throw RunStoreError("cannot begin " + turn_name(trajectory_id, turn) + ": it was begun already (the last turn is " +
                        std::to_string(last_turn) + ", at step " + to_string(last_step) + ")");
  if (turn != last_turn + 1)
    throw RunStoreError("cannot begin " + turn_name(trajectory_id, turn) + ": the next turn is " +
                        std::to_string(last_turn + 1));
  if (last_step != TurnStep::complete)
    throw RunStoreError("cannot begin " + turn_name(trajectory_id, turn) + ": turn " + std::to_string(last_turn) +
                        " is at step " + to_string(last_step));
  m_db.prepare("INSERT INTO turns (trajectory_id, turn, step, started_at) VALUES (?, ?, ?, ?)")
      .bind(1, trajectory_id)
      .bind(2, turn)
      .bind(3, static_cast<int64_t>(TurnStep::model_call_started))
      .bind(4, now())
      .run();
  tx.commit();
}

void RunStore::record_model_answer(int64_t trajectory_id, int64_t turn, const std::string& answer,
                                   const ModelUsage& usage, const std::string& reasoning) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  require_step(trajectory_id, turn, {TurnStep::model_call_started}, "store the model answer");
  check_usage(usage, turn_name(trajectory_id, turn));
  insert_message(trajectory_id, turn, "assistant", answer, "answer", reasoning);
  insert_usage(m_db, trajectory_id, turn, usage);
  set_step(trajectory_id, turn, TurnStep::model_answered, "answered_at");
  tx.commit();
}

std::string RunStore::record_candidate(int64_t trajectory_id, int64_t turn, const std::string& source,
                                       CandidateLanguage language) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  require_step(trajectory_id, turn, {TurnStep::model_answered}, "store the candidate");
  std::string sha = sha256_hex(source);
  m_db.prepare("INSERT OR IGNORE INTO candidates (sha256, source, created_at, language) VALUES (?, ?, ?, ?)")
      .bind(1, sha)
      .bind(2, source)
      .bind(3, now())
      .bind(4, to_string(language))
      .run();
  m_db.prepare("UPDATE turns SET candidate_sha256 = ? WHERE trajectory_id = ? AND turn = ?")
      .bind(1, sha)
      .bind(2, trajectory_id)
      .bind(3, turn)
      .run();
  set_step(trajectory_id, turn, TurnStep::candidate_extracted, "extracted_at");
  tx.commit();
  return sha;
}

void RunStore::record_extraction_error(int64_t trajectory_id, int64_t turn, const std::string& error) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  require_step(trajectory_id, turn, {TurnStep::model_answered}, "store the extraction error");
  m_db.prepare("UPDATE turns SET extraction_error = ?, status = ? WHERE trajectory_id = ? AND turn = ?")
      .bind(1, error)
      .bind(2, std::string(kExtractionErrorStatus))
      .bind(3, trajectory_id)
      .bind(4, turn)
      .run();
  set_step(trajectory_id, turn, TurnStep::candidate_extracted, "extracted_at");
  tx.commit();
}

void RunStore::record_submission(int64_t trajectory_id, int64_t turn, const std::string& task_id) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  auto c = require_step(trajectory_id, turn, {TurnStep::candidate_extracted}, "store the submission");
  if (c.extraction_error)
    throw RunStoreError("cannot store the submission: " + turn_name(trajectory_id, turn) + " has no candidate");
  if (task_id.empty()) throw RunStoreError("cannot store the submission: empty task id");
  m_db.prepare("UPDATE turns SET task_id = ?, submissions = submissions + 1 WHERE trajectory_id = ? AND turn = ?")
      .bind(1, task_id)
      .bind(2, trajectory_id)
      .bind(3, turn)
      .run();
  set_step(trajectory_id, turn, TurnStep::evaluation_submitted, "submitted_at");
  tx.commit();
}

void RunStore::record_resubmission(int64_t trajectory_id, int64_t turn, const std::string& old_task_id,
                                   const std::string& new_task_id) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  auto c = require_step(trajectory_id, turn, {TurnStep::evaluation_submitted}, "store a resubmission");
  if (c.task_id != old_task_id)
    throw RunStoreError("cannot store a resubmission of " + turn_name(trajectory_id, turn) + ": its task is '" +
                        c.task_id.value_or("") + "', not '" + old_task_id + "'");
  if (new_task_id.empty() || new_task_id == old_task_id)
    throw RunStoreError("a resubmission needs a new task id");
  m_db.prepare("UPDATE turns SET task_id = ?, submissions = submissions + 1, submitted_at = ? "
               "WHERE trajectory_id = ? AND turn = ?")
      .bind(1, new_task_id)
      .bind(2, now())
      .bind(3, trajectory_id)
      .bind(4, turn)
      .run();
  tx.commit();
}

// An evaluation's verdict, read, for the turn waiting for that task: an INFRA_ERROR kept aside and a
// verdict stored pass the same checks (the turn was submitted, as this task, and the verdict parses).
Verdict RunStore::awaited_verdict(int64_t trajectory_id, int64_t turn, const std::string& task_id,
                                  const ordered_json& verdict, const char* action) {
  auto c = require_step(trajectory_id, turn, {TurnStep::evaluation_submitted}, action);
  if (c.task_id != task_id)
    throw RunStoreError(std::string("cannot ") + action + " of task '" + task_id + "': " + turn_name(trajectory_id, turn) +
                        " waits for task '" + c.task_id.value_or("") + "'");
  try {
    return Verdict::from_json(verdict);
  } catch (const InputError& e) {
    throw RunStoreError("the verdict of " + turn_name(trajectory_id, turn) + " is unreadable: " + e.what());
  }
}

int64_t RunStore::record_infra_attempt(int64_t trajectory_id, int64_t turn, const std::string& task_id,
                                       const ordered_json& verdict) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  Verdict v = awaited_verdict(trajectory_id, turn, task_id, verdict, "keep the INFRA_ERROR");
  if (v.status != Status::INFRA_ERROR)
    throw RunStoreError("only INFRA_ERROR verdicts are kept aside; " + turn_name(trajectory_id, turn) + " got " +
                        to_string(v.status));
  auto last = m_db.prepare("SELECT COALESCE(MAX(attempt), 0) + 1 FROM infra_attempts WHERE trajectory_id = ? AND turn = ?");
  last.bind(1, trajectory_id).bind(2, turn);
  last.step();
  int64_t attempt = last.integer(0);
  m_db.prepare("INSERT INTO infra_attempts (trajectory_id, turn, attempt, task_id, verdict, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .bind(1, trajectory_id)
      .bind(2, turn)
      .bind(3, attempt)
      .bind(4, task_id)
      .bind(5, verdict.dump())
      .bind(6, now())
      .run();
  // Back to the step before the submission: the loop submits the candidate again.
  m_db.prepare("UPDATE turns SET task_id = NULL, step = ? WHERE trajectory_id = ? AND turn = ?")
      .bind(1, static_cast<int64_t>(TurnStep::candidate_extracted))
      .bind(2, trajectory_id)
      .bind(3, turn)
      .run();
  tx.commit();
  return attempt;
}

std::vector<InfraAttempt> RunStore::infra_attempts(int64_t trajectory_id) const {
  std::lock_guard lock(m_mutex);
  std::vector<InfraAttempt> out;
  auto st = m_db.prepare("SELECT turn, attempt, task_id, verdict, created_at FROM infra_attempts WHERE trajectory_id = ? "
                         "ORDER BY turn, attempt");
  st.bind(1, trajectory_id);
  while (st.step()) {
    InfraAttempt a;
    a.trajectory_id = trajectory_id;
    a.turn = st.integer(0);
    a.attempt = st.integer(1);
    a.task_id = st.text(2);
    a.verdict = ordered_json::parse(st.text(3));
    if (a.verdict.contains("message") && a.verdict["message"].is_string()) a.message = a.verdict["message"].get<std::string>();
    a.created_at = st.real(4);
    out.push_back(std::move(a));
  }
  return out;
}

Verdict RunStore::record_verdict(int64_t trajectory_id, int64_t turn, const std::string& task_id,
                                 const ordered_json& verdict) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  Verdict v = awaited_verdict(trajectory_id, turn, task_id, verdict, "store the verdict");
  std::string status = to_string(v.status);
  std::optional<double> speedup = v.speedup;
  bool target = v.target_instruction_correct;
  bool correct = v.status == Status::PASSED;
  m_db.prepare("INSERT INTO verdicts (trajectory_id, turn, task_id, status, verdict, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .bind(1, trajectory_id)
      .bind(2, turn)
      .bind(3, task_id)
      .bind(4, status)
      .bind(5, verdict.dump())
      .bind(6, now())
      .run();
  auto update = m_db.prepare("UPDATE turns SET status = ?, correct = ?, target_instruction = ?, speedup = ? "
                             "WHERE trajectory_id = ? AND turn = ?");
  update.bind(1, status).bind(2, int64_t{correct}).bind(3, int64_t{target && correct});
  update.bind(4, speedup);
  update.bind(5, trajectory_id).bind(6, turn).run();
  if (correct && speedup) raise_bests(m_db, trajectory_id, *speedup, target);
  set_step(trajectory_id, turn, TurnStep::verdict_stored, "verdict_at");
  tx.commit();
  return v;
}

void RunStore::record_feedback(int64_t trajectory_id, int64_t turn, const std::string& feedback) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  auto c = require_step(trajectory_id, turn, {TurnStep::verdict_stored, TurnStep::candidate_extracted},
                        "store the feedback");
  if (c.step == TurnStep::candidate_extracted && !c.extraction_error)
    throw RunStoreError("cannot store the feedback: " + turn_name(trajectory_id, turn) +
                        " has a candidate that was not evaluated");
  insert_message(trajectory_id, turn, "user", feedback, "feedback");
  set_step(trajectory_id, turn, TurnStep::feedback_stored, "feedback_at");
  tx.commit();
}

void RunStore::complete_turn(int64_t trajectory_id, int64_t turn, const std::optional<TrajectoryEnd>& end) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  auto c = require_step(trajectory_id, turn,
                        {TurnStep::feedback_stored, TurnStep::verdict_stored, TurnStep::candidate_extracted},
                        "complete the turn");
  if (c.step == TurnStep::candidate_extracted && !c.extraction_error)
    throw RunStoreError("cannot complete " + turn_name(trajectory_id, turn) + ": its candidate was not evaluated");
  set_step(trajectory_id, turn, TurnStep::complete, "completed_at");
  if (end) finish_locked(trajectory_id, end->status, end->reason);
  tx.commit();
}

// ---------------------------------------------------------------------------------------- reading

std::vector<StoredMessage> RunStore::messages_locked(int64_t trajectory_id) const {
  std::vector<StoredMessage> out;
  auto st = m_db.prepare("SELECT role, content, turn, seq, reasoning FROM messages WHERE trajectory_id = ? ORDER BY seq");
  st.bind(1, trajectory_id);
  while (st.step()) out.push_back({st.text(0), st.text(1), st.integer(2), st.integer(3), st.text(4)});
  return out;
}

std::vector<StoredMessage> RunStore::messages(int64_t trajectory_id) const {
  std::lock_guard lock(m_mutex);
  return messages_locked(trajectory_id);
}

std::vector<TurnRecord> RunStore::turns_locked(int64_t trajectory_id, std::optional<int64_t> only) const {
  std::string sql = R"(SELECT t.turn, t.step, t.candidate_sha256, c.source, t.extraction_error, t.task_id,
      t.submissions, t.status, t.correct, t.target_instruction, t.speedup, t.started_at, t.answered_at, t.completed_at,
      (SELECT content FROM messages m WHERE m.trajectory_id = t.trajectory_id AND m.turn = t.turn AND m.kind = 'answer'),
      (SELECT content FROM messages m WHERE m.trajectory_id = t.trajectory_id AND m.turn = t.turn AND m.kind = 'feedback'),
      v.verdict, u.id, u.prompt_tokens, u.completion_tokens, u.reasoning_tokens, u.cached_tokens, u.latency_s,
      u.attempts, u.provider, u.model, u.finish_reason,
      (SELECT reasoning FROM messages m WHERE m.trajectory_id = t.trajectory_id AND m.turn = t.turn AND m.kind = 'answer'),
      c.language,
      (SELECT COUNT(*) FROM infra_attempts i WHERE i.trajectory_id = t.trajectory_id AND i.turn = t.turn)
    FROM turns t
    LEFT JOIN candidates c ON c.sha256 = t.candidate_sha256
    LEFT JOIN verdicts v ON v.trajectory_id = t.trajectory_id AND v.turn = t.turn
    LEFT JOIN usage u ON u.trajectory_id = t.trajectory_id AND u.turn = t.turn
    WHERE t.trajectory_id = ?)";
  if (only) sql += " AND t.turn = ?";
  sql += " ORDER BY t.turn";
  auto st = m_db.prepare(sql);
  st.bind(1, trajectory_id);
  if (only) st.bind(2, *only);
  std::vector<TurnRecord> out;
  while (st.step()) {
    TurnRecord r;
    r.trajectory_id = trajectory_id;
    r.turn = st.integer(0);
    r.step = static_cast<TurnStep>(st.integer(1));
    r.candidate_sha256 = st.optional_text(2);
    r.candidate_source = st.optional_text(3);
    r.extraction_error = st.optional_text(4);
    r.task_id = st.optional_text(5);
    r.submissions = st.integer(6);
    r.status = st.text(7);
    r.correct = st.integer(8) != 0;
    r.target_instruction = st.integer(9) != 0;
    r.speedup = st.optional_real(10);
    r.started_at = st.real(11);
    r.answered_at = st.optional_real(12);
    r.completed_at = st.optional_real(13);
    r.answer = st.optional_text(14);
    r.feedback = st.optional_text(15);
    if (auto v = st.optional_text(16)) {
      try {
        r.verdict = Verdict::from_json(ordered_json::parse(*v));
      } catch (const std::exception& e) {
        throw RunStoreError("the stored verdict of " + turn_name(r.trajectory_id, r.turn) + " is unreadable: " + e.what());
      }
    }
    if (!st.is_null(17))
      r.usage = ModelUsage{st.integer(18), st.integer(19), st.integer(20), st.integer(21), st.real(22),
                           st.integer(23), st.text(24),    st.text(25),    st.text(26)};
    r.reasoning = st.optional_text(27);
    if (auto language = st.optional_text(28)) r.candidate_language = parse_candidate_language(*language);
    r.infra_attempts = st.integer(29);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<TurnRecord> RunStore::turns(int64_t trajectory_id) const {
  std::lock_guard lock(m_mutex);
  SqliteReadSnapshot snapshot(m_db);
  return turns_locked(trajectory_id, std::nullopt);
}

ResumePoint RunStore::resume_point(int64_t trajectory_id) const {
  std::lock_guard lock(m_mutex);
  SqliteReadSnapshot snapshot(m_db);
  ResumePoint rp;
  rp.trajectory = trajectory_locked(trajectory_id);
  rp.messages = messages_locked(trajectory_id);
  auto last = m_db.prepare("SELECT MAX(turn) FROM turns WHERE trajectory_id = ?");
  last.bind(1, trajectory_id);
  last.step();
  if (!last.is_null(0)) {
    rp.turn = last.integer(0);
    auto rows = turns_locked(trajectory_id, rp.turn);
    if (!rows.empty()) rp.last = std::move(rows.front());
  }
  return rp;
}

std::vector<TurnRow> RunStore::turn_rows(int64_t trajectory_id) const {
  std::lock_guard lock(m_mutex);
  std::vector<TurnRow> out;
  auto st = m_db.prepare(R"(SELECT t.turn, t.step, t.status, t.correct, t.target_instruction, t.speedup,
      COALESCE(u.prompt_tokens, 0), COALESCE(u.completion_tokens, 0), COALESCE(u.reasoning_tokens, 0),
      COALESCE(u.cached_tokens, 0), COALESCE(u.latency_s, 0)
    FROM turns t LEFT JOIN usage u ON u.trajectory_id = t.trajectory_id AND u.turn = t.turn
    WHERE t.trajectory_id = ? ORDER BY t.turn)");
  st.bind(1, trajectory_id);
  while (st.step()) {
    TurnRow r;
    r.trajectory_id = trajectory_id;
    r.turn = st.integer(0);
    r.step = static_cast<TurnStep>(st.integer(1));
    r.status = st.text(2);
    r.correct = st.integer(3) != 0;
    r.target_instruction = st.integer(4) != 0;
    r.speedup = st.optional_real(5);
    r.prompt_tokens = st.integer(6);
    r.completion_tokens = st.integer(7);
    r.reasoning_tokens = st.integer(8);
    r.cached_tokens = st.integer(9);
    r.latency_s = st.real(10);
    out.push_back(r);
  }
  return out;
}

std::optional<std::string> RunStore::candidate_source(const std::string& sha256) const {
  std::lock_guard lock(m_mutex);
  auto st = m_db.prepare("SELECT source FROM candidates WHERE sha256 = ?");
  st.bind(1, sha256);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

}  // namespace ptxbench

// RunStore: opening the file, the runs, and the readers. The steps of a turn are in
// run_store_turns.cpp, imported runs in run_store_import.cpp, the SQL of the rows in
// run_store_rows.cpp and the schema in run_store_schema.cpp.
#include "runs/run_store.h"

#include <cstdio>
#include <ctime>
#include <random>

#include "common/clock.h"
#include "runs/run_store_rows.h"
#include "runs/run_store_schema.h"

namespace ptxbench {
namespace {

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

SqliteDb::Mode db_mode(RunStore::Open mode) {
  switch (mode) {
    case RunStore::Open::create: return SqliteDb::Mode::create;
    case RunStore::Open::existing: return SqliteDb::Mode::existing;
    case RunStore::Open::read_only: return SqliteDb::Mode::read_only;
  }
  return SqliteDb::Mode::existing;
}

}  // namespace

std::string held_elsewhere(const RunInfo& r, const std::string& refused) {
  if (r.status != RunStatus::running || !r.holder || r.holder->same_process(RunHolder::current())) return "";
  return "run " + r.id + " is running in " + r.holder->describe() + ": " + refused +
         (r.holder->liveness() == RunHolder::Liveness::unknown
              ? " (processes of that host cannot be checked from here; wait for it to end)"
              : " (wait for it to end, or stop that process first)");
}

// ---------------------------------------------------------------------------------------- open

RunStore::RunStore(const std::string& path, Open mode) : m_path(path), m_db(path, db_mode(mode)) {
  // Turns are minutes apart: a full fsync per commit costs nothing here and keeps the last step
  // even across a power loss, not only a process kill (which WAL with NORMAL already survives).
  if (mode != Open::read_only) m_db.exec("PRAGMA synchronous=FULL");
  m_db.open_store(run_store_schema());
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
    double t = epoch_seconds();
    auto insert = m_db.prepare("INSERT INTO runs (id, created_at, updated_at, status, model, notes, config, origin, gpu, "
                               "import_key, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.bind(1, id).bind(2, t).bind(3, t).bind(4, run_rows::legacy_status(status)).bind(5, model).bind(6, notes);
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
  return run_rows::all_runs(m_db);
}

std::optional<RunInfo> RunStore::find_run(const std::string& id) const {
  return locked([&] { return run_rows::find_run(m_db, id); });
}

RunInfo RunStore::run_locked(const std::string& id) const {
  auto r = run_rows::find_run(m_db, id);
  if (!r) throw RunStoreError("no run '" + id + "' in " + m_path);
  return *r;
}

RunInfo RunStore::run(const std::string& id) const {
  std::lock_guard lock(m_mutex);
  return run_locked(id);
}

ordered_json RunStore::run_config(const std::string& id) const { return run(id).config; }

void RunStore::hold_locked(const std::string& id) {
  RunHolder me = RunHolder::current();
  m_db.prepare("UPDATE runs SET holder_pid = ?, holder_host = ?, holder_started = ? WHERE id = ?")
      .bind_all(me.pid, me.host, me.started, id)
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
  RunInfo r = run_locked(id);
  if (r.imported())
    throw RunStoreError("cannot set the status of run " + id + ": it was imported (" + r.origin + "), not run here");
  m_db.prepare("UPDATE runs SET state = ?, status = ?, failure = ?, updated_at = ?, holder_pid = NULL, holder_host = NULL, "
               "holder_started = NULL WHERE id = ?")
      .bind_all(to_string(status), run_rows::legacy_status(status),
          status == RunStatus::failed ? failure : std::string(), epoch_seconds(), id)
      .run();
  if (status == RunStatus::running) hold_locked(id);
  tx.commit();
}

RunInfo RunStore::claim_run(const std::string& id) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  RunInfo r = run_locked(id);
  if (r.imported())
    throw RunStoreError("run " + id + " was imported (" + r.origin + "): it holds reference results, not a run of ours to resume");
  if (std::string held = held_elsewhere(r, "it cannot be resumed twice"); !held.empty()) throw RunHeldError(held);
  m_db.prepare("UPDATE runs SET state = 'running', status = 'running', failure = '', updated_at = ? WHERE id = ?")
      .bind(1, epoch_seconds())
      .bind(2, id)
      .run();
  hold_locked(id);
  tx.commit();
  return r;
}

void RunStore::set_run_archived(const std::string& id, bool archived) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  auto update = m_db.prepare(archived ? "UPDATE runs SET archived_at = COALESCE(archived_at, ?) WHERE id = ?"
                                      : "UPDATE runs SET archived_at = NULL WHERE id = ?");
  if (archived) update.bind(1, epoch_seconds()).bind(2, id);
  else update.bind(1, id);
  update.run();
  if (m_db.changes() != 1) throw RunStoreError("no run '" + id + "' in " + m_path);
  tx.commit();
}

DeletedRun RunStore::delete_run(const std::string& id, bool force) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  RunInfo r = run_locked(id);
  if (std::string held = held_elsewhere(r, "it is not deleted while it runs, unless --force"); !force && !held.empty())
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
  m_db.prepare("UPDATE runs SET notes = ?, updated_at = ? WHERE id = ?").bind(1, notes).bind(2, epoch_seconds()).bind(3, id).run();
  if (m_db.changes() != 1) throw RunStoreError("no run '" + id + "' in " + m_path);
}

// ---------------------------------------------------------------------------------------- reading

std::optional<int64_t> RunStore::find_trajectory(const std::string& run_id, const TrajectoryKey& key) const {
  return locked([&] { return run_rows::find_trajectory(m_db, run_id, key); });
}

TrajectoryInfo RunStore::trajectory_locked(int64_t trajectory_id) const {
  auto t = run_rows::find_trajectory(m_db, trajectory_id);
  if (!t) throw RunStoreError("no trajectory " + std::to_string(trajectory_id) + " in " + m_path);
  return *t;
}

TrajectoryInfo RunStore::trajectory(int64_t trajectory_id) const {
  std::lock_guard lock(m_mutex);
  return trajectory_locked(trajectory_id);
}

std::vector<TrajectoryInfo> RunStore::list_trajectories(const std::string& run_id) const {
  return locked([&] { return run_rows::run_trajectories(m_db, run_id); });
}

std::vector<StoredMessage> RunStore::messages(int64_t trajectory_id) const {
  return locked([&] { return run_rows::messages(m_db, trajectory_id); });
}

std::vector<TurnRecord> RunStore::turns(int64_t trajectory_id) const {
  std::lock_guard lock(m_mutex);
  SqliteReadSnapshot snapshot(m_db);
  return run_rows::turns(m_db, trajectory_id, std::nullopt);
}

ResumePoint RunStore::resume_point(int64_t trajectory_id) const {
  std::lock_guard lock(m_mutex);
  SqliteReadSnapshot snapshot(m_db);
  ResumePoint rp;
  rp.trajectory = trajectory_locked(trajectory_id);
  rp.messages = run_rows::messages(m_db, trajectory_id);
  if (auto last = run_rows::last_turn(m_db, trajectory_id)) {
    rp.turn = last->turn;
    auto rows = run_rows::turns(m_db, trajectory_id, rp.turn);
    if (!rows.empty()) rp.last = std::move(rows.front());
  }
  return rp;
}

std::vector<TurnRow> RunStore::turn_rows(int64_t trajectory_id) const {
  return locked([&] { return run_rows::turn_rows(m_db, trajectory_id); });
}

std::optional<std::string> RunStore::candidate_source(const std::string& sha256) const {
  return locked([&] { return run_rows::candidate_source(m_db, sha256); });
}

std::vector<InfraAttempt> RunStore::infra_attempts(int64_t trajectory_id) const {
  return locked([&] { return run_rows::infra_attempts(m_db, trajectory_id); });
}

std::optional<SeedTurn> RunStore::seed_turn(int64_t trajectory_id) const {
  return locked([&] { return run_rows::seed_turn(m_db, trajectory_id); });
}

}  // namespace ptxbench

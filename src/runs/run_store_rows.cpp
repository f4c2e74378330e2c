#include "runs/run_store_rows.h"

#include "common/clock.h"

namespace ptxbench::run_rows {
namespace {

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

/// The run whose `column` (id, import_key) is `value`.
std::optional<RunInfo> find_run_by(SqliteDb& db, const char* column, const std::string& value) {
  auto st = db.prepare(std::string("SELECT ") + kRunColumns + " FROM runs WHERE " + column + " = ?");
  st.bind(1, value);
  if (!st.step()) return std::nullopt;
  return read_run(st);
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

// Every turn of a trajectory with what it joins: the candidate, the answer and feedback messages,
// the verdict, the usage row and the count of INFRA_ERROR attempts kept aside.
constexpr const char* kTurnsQuery = R"(SELECT t.turn, t.step, t.candidate_sha256, c.source, t.extraction_error, t.task_id,
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

TurnRecord read_turn(const SqliteStatement& st, int64_t trajectory_id) {
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
  return r;
}

}  // namespace

std::string turn_name(int64_t trajectory_id, int64_t turn) {
  return "turn " + std::to_string(turn) + " of trajectory " + std::to_string(trajectory_id);
}

std::string legacy_status(RunStatus s) {
  return s == RunStatus::running || s == RunStatus::finished ? to_string(s) : to_string(RunStatus::interrupted);
}

// ---------------------------------------------------------------------------------------- reading

std::optional<RunInfo> find_run(SqliteDb& db, const std::string& id) { return find_run_by(db, "id", id); }

std::optional<RunInfo> find_imported_run(SqliteDb& db, const std::string& import_key) {
  return find_run_by(db, "import_key", import_key);
}

std::vector<RunInfo> all_runs(SqliteDb& db) {
  std::vector<RunInfo> out;
  auto st = db.prepare(std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY created_at DESC, id DESC");
  while (st.step()) out.push_back(read_run(st));
  return out;
}

std::optional<int64_t> find_trajectory(SqliteDb& db, const std::string& run_id, const TrajectoryKey& key) {
  auto id = db.prepare("SELECT id FROM trajectories WHERE run_id = ? AND definition = ? AND workload_uuid = ? AND "
                       "prompt_tag = ? AND tag_index = ?");
  id.bind(1, run_id).bind(2, key.definition).bind(3, key.workload_uuid).bind(4, key.prompt_tag).bind(5, key.index);
  if (!id.step()) return std::nullopt;
  return id.integer(0);
}

std::optional<TrajectoryInfo> find_trajectory(SqliteDb& db, int64_t trajectory_id) {
  auto st = db.prepare(std::string("SELECT ") + kTrajectoryColumns + " FROM trajectories WHERE id = ?");
  st.bind(1, trajectory_id);
  if (!st.step()) return std::nullopt;
  return read_trajectory(st);
}

std::vector<TrajectoryInfo> run_trajectories(SqliteDb& db, const std::string& run_id) {
  std::vector<TrajectoryInfo> out;
  auto st = db.prepare(std::string("SELECT ") + kTrajectoryColumns + " FROM trajectories WHERE run_id = ? ORDER BY id");
  st.bind(1, run_id);
  while (st.step()) out.push_back(read_trajectory(st));
  return out;
}

std::optional<LastTurn> last_turn(SqliteDb& db, int64_t trajectory_id) {
  auto last = db.prepare("SELECT turn, step FROM turns WHERE trajectory_id = ? ORDER BY turn DESC LIMIT 1");
  last.bind(1, trajectory_id);
  if (!last.step()) return std::nullopt;
  return LastTurn{last.integer(0), static_cast<TurnStep>(last.integer(1))};
}

std::vector<StoredMessage> messages(SqliteDb& db, int64_t trajectory_id) {
  std::vector<StoredMessage> out;
  auto st = db.prepare("SELECT role, content, turn, seq, reasoning FROM messages WHERE trajectory_id = ? ORDER BY seq");
  st.bind(1, trajectory_id);
  while (st.step()) out.push_back({st.text(0), st.text(1), st.integer(2), st.integer(3), st.text(4)});
  return out;
}

std::vector<TurnRecord> turns(SqliteDb& db, int64_t trajectory_id, std::optional<int64_t> only) {
  std::string sql = kTurnsQuery;
  if (only) sql += " AND t.turn = ?";
  sql += " ORDER BY t.turn";
  auto st = db.prepare(sql);
  st.bind(1, trajectory_id);
  if (only) st.bind(2, *only);
  std::vector<TurnRecord> out;
  while (st.step()) out.push_back(read_turn(st, trajectory_id));
  return out;
}

std::vector<TurnRow> turn_rows(SqliteDb& db, int64_t trajectory_id) {
  std::vector<TurnRow> out;
  auto st = db.prepare(R"(SELECT t.turn, t.step, t.status, t.correct, t.target_instruction, t.speedup,
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

std::vector<InfraAttempt> infra_attempts(SqliteDb& db, int64_t trajectory_id) {
  std::vector<InfraAttempt> out;
  auto st = db.prepare("SELECT turn, attempt, task_id, verdict, created_at FROM infra_attempts WHERE trajectory_id = ? "
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

std::optional<SeedTurn> seed_turn(SqliteDb& db, int64_t trajectory_id) {
  auto st = db.prepare("SELECT source, language, status, feedback, verdict, origin_run, origin_trajectory, origin_turn "
                       "FROM seed_turns WHERE trajectory_id = ?");
  st.bind(1, trajectory_id);
  if (!st.step()) return std::nullopt;
  SeedTurn s;
  s.source = st.text(0);
  s.language = parse_candidate_language(st.text(1));
  s.status = st.text(2);
  s.feedback = st.text(3);
  if (auto v = st.optional_text(4)) s.verdict = ordered_json::parse(*v);
  if (auto run = st.optional_text(5)) {
    SeedOrigin o;
    o.run_id = *run;
    if (!st.is_null(6)) o.trajectory_id = st.integer(6);
    o.turn = st.is_null(7) ? 0 : st.integer(7);
    s.origin = std::move(o);
  }
  return s;
}

void insert_seed_turn(SqliteDb& db, int64_t trajectory_id, const SeedTurn& seed) {
  const std::string name = "the seed (turn 0) of trajectory " + std::to_string(trajectory_id);
  if (!parse_status(seed.status)) throw RunStoreError(name + ": '" + seed.status + "' is no verdict status");
  if (seed.verdict) {
    try {
      (void)Verdict::from_json(*seed.verdict);
    } catch (const std::exception& e) {
      throw RunStoreError(name + ": its verdict is unreadable: " + e.what());
    }
  }
  auto st = db.prepare("INSERT INTO seed_turns (trajectory_id, source, language, status, feedback, verdict, origin_run, "
                       "origin_trajectory, origin_turn, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  st.bind(1, trajectory_id).bind(2, seed.source).bind(3, to_string(seed.language)).bind(4, seed.status).bind(5, seed.feedback);
  if (seed.verdict) st.bind(6, seed.verdict->dump());
  else st.bind_null(6);
  if (seed.origin) {
    st.bind(7, seed.origin->run_id);
    if (seed.origin->trajectory_id) st.bind(8, *seed.origin->trajectory_id);
    else st.bind_null(8);
    st.bind(9, seed.origin->turn);
  } else {
    st.bind_null(7).bind_null(8).bind_null(9);
  }
  st.bind(10, epoch_seconds()).run();
}

std::optional<std::string> candidate_source(SqliteDb& db, const std::string& sha256) {
  auto st = db.prepare("SELECT source FROM candidates WHERE sha256 = ?");
  st.bind(1, sha256);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

// ---------------------------------------------------------------------------------------- writing

void check_usage(const ModelUsage& usage, const std::string& turn) {
  if (usage.prompt_tokens < 0 || usage.completion_tokens < 0 || usage.reasoning_tokens < 0 || usage.cached_tokens < 0 ||
      usage.attempts < 1)
    throw RunStoreError("model usage of " + turn + " has negative tokens or no attempt");
}

int64_t insert_trajectory(SqliteDb& db, const std::string& run_id, const TrajectoryKey& key) {
  db.prepare("INSERT INTO trajectories (run_id, definition, workload_uuid, prompt_tag, tag_index, status, started_at) "
             "VALUES (?, ?, ?, ?, ?, 'running', ?)")
      .bind_all(run_id, key.definition, key.workload_uuid, key.prompt_tag, key.index, epoch_seconds())
      .run();
  return sqlite3_last_insert_rowid(db.handle());
}

void end_trajectory(SqliteDb& db, int64_t trajectory_id, TrajectoryStatus status, const std::string& reason) {
  db.prepare("UPDATE trajectories SET status = ?, stop_reason = ?, finished_at = ? WHERE id = ?")
      .bind_all(to_string(status), reason, epoch_seconds(), trajectory_id)
      .run();
}

void insert_usage(SqliteDb& db, int64_t trajectory_id, int64_t turn, const ModelUsage& usage) {
  db.prepare("INSERT INTO usage (trajectory_id, turn, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, "
             "latency_s, attempts, provider, model, finish_reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind_all(trajectory_id, turn, usage.prompt_tokens, usage.completion_tokens, usage.reasoning_tokens,
          usage.cached_tokens, usage.latency_s, usage.attempts, usage.provider, usage.model, usage.finish_reason,
          epoch_seconds())
      .run();
}

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

}  // namespace ptxbench::run_rows

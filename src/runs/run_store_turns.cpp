// RunStore: the trajectories and the steps of a turn, each one transaction that checks the step
// before it (docs/agent.md, "Run store").
#include "runs/run_store.h"

#include <algorithm>

#include "common/clock.h"
#include "common/sha256.h"
#include "runs/run_store_rows.h"

namespace ptxbench {

using run_rows::turn_name;

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

// ---------------------------------------------------------------------------------------- trajectories

int64_t RunStore::ensure_trajectory(const std::string& run_id, const TrajectoryKey& key) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  auto run = m_db.prepare("SELECT 1 FROM runs WHERE id = ?");
  run.bind(1, run_id);
  if (!run.step()) throw RunStoreError("no run '" + run_id + "' in " + m_path);
  std::optional<int64_t> found = run_rows::find_trajectory(m_db, run_id, key);
  int64_t id = found ? *found : run_rows::insert_trajectory(m_db, run_id, key);
  tx.commit();
  return id;
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
      .bind_all(trajectory_id, next_seq(trajectory_id), turn, role, std::string(kind), content, reasoning,
          epoch_seconds())
      .run();
}

void RunStore::record_initial_messages(int64_t trajectory_id, const std::vector<StoredMessage>& messages,
                                       const std::optional<SeedTurn>& seed) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  require_measured(trajectory_id, "store the opening messages");
  require_running(trajectory_id, "store the opening messages");
  if (messages.empty()) throw RunStoreError("the opening messages of a trajectory cannot be empty");
  if (next_seq(trajectory_id) != 1)
    throw RunStoreError("trajectory " + std::to_string(trajectory_id) + " already has its opening messages");
  for (const auto& m : messages) insert_message(trajectory_id, 0, m.role, m.content, "prompt");
  if (seed) run_rows::insert_seed_turn(m_db, trajectory_id, *seed);
  tx.commit();
}

void RunStore::finish_locked(int64_t trajectory_id, TrajectoryStatus status, const std::string& reason) {
  if (status == TrajectoryStatus::running) throw RunStoreError("finish_trajectory needs a final status, not running");
  require_running(trajectory_id, ("finish it as " + to_string(status)).c_str());
  if (status != TrajectoryStatus::failed) {
    auto last = run_rows::last_turn(m_db, trajectory_id);
    if (last && last->step != TurnStep::complete)
      throw RunStoreError("cannot finish trajectory " + std::to_string(trajectory_id) + " as " + to_string(status) +
                          ": " + turn_name(trajectory_id, last->turn) + " is at step " + to_string(last->step));
  }
  run_rows::end_trajectory(m_db, trajectory_id, status, reason);
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
      .bind_all(static_cast<int64_t>(step), epoch_seconds(), trajectory_id, turn)
      .run();
}

void RunStore::begin_turn(int64_t trajectory_id, int64_t turn) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  require_measured(trajectory_id, ("begin turn " + std::to_string(turn)).c_str());
  require_running(trajectory_id, ("begin turn " + std::to_string(turn)).c_str());
  if (next_seq(trajectory_id) == 1)
    throw RunStoreError("cannot begin " + turn_name(trajectory_id, turn) + ": the opening messages are not stored");
  auto [last_turn, last_step] = run_rows::last_turn(m_db, trajectory_id).value_or(run_rows::LastTurn{});
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
      .bind_all(trajectory_id, turn, static_cast<int64_t>(TurnStep::model_call_started), epoch_seconds())
      .run();
  tx.commit();
}

void RunStore::record_model_answer(int64_t trajectory_id, int64_t turn, const std::string& answer,
                                   const ModelUsage& usage, const std::string& reasoning) {
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  require_step(trajectory_id, turn, {TurnStep::model_call_started}, "store the model answer");
  run_rows::check_usage(usage, turn_name(trajectory_id, turn));
  insert_message(trajectory_id, turn, "assistant", answer, "answer", reasoning);
  run_rows::insert_usage(m_db, trajectory_id, turn, usage);
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
      .bind_all(sha, source, epoch_seconds(), to_string(language))
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
      .bind_all(error, std::string(kExtractionErrorStatus), trajectory_id, turn)
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
      .bind_all(new_task_id, epoch_seconds(), trajectory_id, turn)
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
      .bind_all(trajectory_id, turn, attempt, task_id, verdict.dump(), epoch_seconds())
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
      .bind_all(trajectory_id, turn, task_id, status, verdict.dump(), epoch_seconds())
      .run();
  auto update = m_db.prepare("UPDATE turns SET status = ?, correct = ?, target_instruction = ?, speedup = ? "
                             "WHERE trajectory_id = ? AND turn = ?");
  update.bind(1, status).bind(2, int64_t{correct}).bind(3, int64_t{target && correct});
  update.bind(4, speedup);
  update.bind(5, trajectory_id).bind(6, turn).run();
  if (correct && speedup) run_rows::raise_bests(m_db, trajectory_id, *speedup, target);
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

}  // namespace ptxbench

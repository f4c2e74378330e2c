// The agent's run store: schema versioning, the turn steps and their order checks, resume points
// after every step, a real kill -9 at random moments, concurrent writers (threads and processes),
// report rows and the mini-swe-agent trajectory export.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "runs/run_store.h"
#include "runs/trajectory_export.h"
#include "common/fs.h"
#include "cpu/agent/run_store_schema.h"

using namespace ptxbench;

namespace {

struct RunStoreTest : ::testing::Test {
  TempDir dir{"run_store_test"};
  std::string path() const { return (dir.path() / "runs.db").string(); }
};

ordered_json config() { return {{"num_turns", 8}, {"target_speedup", 1.2}, {"context", "full"}}; }

TrajectoryKey key(int64_t index, const std::string& tag = "contract") {
  return {"gemm_n7168_k5120", "gemm_n7168_k5120-m8192", tag, index};
}

// ---- a scripted turn loop, driven only by what the store says (as the real loop will be)
//
// Turn n: the answer names n; n % 4 == 2 has no code block (extraction error); n % 4 == 3 fails to
// compile; the rest pass with speedup 0.02·n (target instruction on even n). The stop rule is the
// paper's: PASSED with speedup >= 1.2, or the turn budget.
std::string answer_text(int64_t traj, int64_t n) {
  std::string s = "answer of trajectory " + std::to_string(traj) + " turn " + std::to_string(n) + "\n";
  if (n % 4 != 2) s += "```cuda\n// kernel " + std::to_string(traj) + "/" + std::to_string(n) + "\n```\n";
  return s;
}
std::string kernel_text(int64_t traj, int64_t n) {
  return "// kernel " + std::to_string(traj) + "/" + std::to_string(n) + "\n";
}
std::string task_for(int64_t traj, int64_t n) { return "task-" + std::to_string(traj) + "-" + std::to_string(n); }
ordered_json verdict_for(int64_t n) {
  if (n % 4 == 3) return {{"schema", "ptxbench.verdict"}, {"status", "COMPILE_ERROR"}, {"speedup", nullptr},
                          {"target_instruction", {{"correct", false}}}};
  return {{"schema", "ptxbench.verdict"}, {"status", "PASSED"}, {"speedup", 0.02 * static_cast<double>(n)},
          {"target_instruction", {{"correct", n % 2 == 0}}}};
}
std::string feedback_text(int64_t n) { return "feedback of turn " + std::to_string(n); }
ModelUsage usage_for(int64_t n) { return {100 * n, 10 * n, n, 50, 0.5, 1, "openai", "test-model", "stop"}; }
std::string reasoning_for(int64_t n) { return n % 2 ? "thinking about turn " + std::to_string(n) : ""; }

/// Takes one step; false when the trajectory is done.
bool drive_one_step(RunStore& store, int64_t traj, int64_t num_turns) {
  ResumePoint rp = store.resume_point(traj);
  int64_t n = rp.turn;
  switch (rp.next()) {
    case NextAction::done: return false;
    case NextAction::store_initial_messages:
      store.record_initial_messages(traj, {{"system", "rules"}, {"user", "task " + std::to_string(traj)}});
      return true;
    case NextAction::next_turn:
      if (rp.last && rp.last->correct && rp.last->speedup.value_or(0) >= 1.2)
        store.finish_trajectory(traj, TrajectoryStatus::stopped_early, "speedup target reached");
      else if (n >= num_turns)
        store.finish_trajectory(traj, TrajectoryStatus::finished, "turn budget");
      else
        store.begin_turn(traj, n + 1);
      return true;
    case NextAction::call_model: {
      // The conversation sent to the model: opening messages, then answer+feedback of each turn.
      EXPECT_EQ(rp.messages.back().role, "user") << "the model answers the task or the last feedback";
      store.record_model_answer(traj, n, answer_text(traj, n), usage_for(n), reasoning_for(n));
      return true;
    }
    case NextAction::extract_candidate:
      if (rp.last->answer->find("```") == std::string::npos)
        store.record_extraction_error(traj, n, "no code block");
      else
        store.record_candidate(traj, n, kernel_text(traj, n));
      return true;
    case NextAction::submit_evaluation: store.record_submission(traj, n, task_for(traj, n)); return true;
    case NextAction::await_verdict: store.record_verdict(traj, n, *rp.last->task_id, verdict_for(n)); return true;
    case NextAction::feedback_or_complete: {
      bool stop = rp.last->correct && rp.last->speedup.value_or(0) >= 1.2;
      if (stop)
        store.complete_turn(traj, n, TrajectoryEnd{TrajectoryStatus::stopped_early, "speedup target reached"});
      else if (n >= num_turns)
        store.complete_turn(traj, n, TrajectoryEnd{TrajectoryStatus::finished, "turn budget"});
      else
        store.record_feedback(traj, n, feedback_text(n));
      return true;
    }
    case NextAction::complete_turn: store.complete_turn(traj, n); return true;
  }
  return false;
}

void drive_to_end(RunStore& store, int64_t traj, int64_t num_turns) {
  while (drive_one_step(store, traj, num_turns)) {
  }
}

/// Checks every invariant a resumable trajectory must keep; returns the number of turns begun.
int64_t check_integrity(RunStore& store, int64_t traj) {
  auto msgs = store.messages(traj);
  auto turns = store.turns(traj);
  auto rp = store.resume_point(traj);
  SCOPED_TRACE("trajectory " + std::to_string(traj) + " at turn " + std::to_string(rp.turn));
  for (std::size_t i = 0; i < msgs.size(); ++i) EXPECT_EQ(msgs[i].seq, static_cast<int64_t>(i + 1));
  if (msgs.empty()) {
    EXPECT_TRUE(turns.empty());
    return 0;
  }
  int64_t begun = static_cast<int64_t>(turns.size());
  if (msgs.size() < 2) {
    ADD_FAILURE() << "the opening messages are written in one transaction";
    return begun;
  }
  EXPECT_EQ(msgs[0].role, "system");
  EXPECT_EQ(msgs[1].turn, 0);
  // Messages of later turns come after those of earlier turns; per turn: answer, then feedback.
  std::size_t i = 2;
  for (std::size_t k = 0; k < turns.size(); ++k) {
    const TurnRecord& t = turns[k];
    EXPECT_EQ(t.turn, static_cast<int64_t>(k + 1)) << "turns are numbered 1.. without gaps";
    if (k + 1 < turns.size()) {
      EXPECT_EQ(t.step, TurnStep::complete) << "only the last turn may be partial";
    }
    bool answered = t.step >= TurnStep::model_answered;
    EXPECT_EQ(t.answer.has_value(), answered);
    EXPECT_EQ(t.usage.has_value(), answered);
    if (answered) {
      if (i >= msgs.size()) {
        ADD_FAILURE() << "answer of turn " << t.turn << " missing";
        return begun;
      }
      EXPECT_EQ(msgs[i].role, "assistant");
      EXPECT_EQ(msgs[i].turn, t.turn);
      EXPECT_EQ(msgs[i].content, answer_text(traj, t.turn)) << "no repeated or foreign answer";
      EXPECT_EQ(t.usage->prompt_tokens, 100 * t.turn);
      EXPECT_EQ(msgs[i].reasoning, reasoning_for(t.turn));
      EXPECT_EQ(t.reasoning, reasoning_for(t.turn));
      ++i;
    }
    bool extracted = t.step >= TurnStep::candidate_extracted;
    EXPECT_EQ(t.candidate_source.has_value() || t.extraction_error.has_value(), extracted);
    if (t.candidate_source) {
      EXPECT_EQ(*t.candidate_source, kernel_text(traj, t.turn));
    }
    EXPECT_EQ(t.verdict.has_value(), extracted && !t.extraction_error && t.step >= TurnStep::verdict_stored);
    if (t.feedback) {
      if (i >= msgs.size()) {
        ADD_FAILURE() << "feedback of turn " << t.turn << " missing";
        return begun;
      }
      EXPECT_EQ(msgs[i].role, "user");
      EXPECT_EQ(msgs[i].content, feedback_text(t.turn));
      ++i;
    }
  }
  EXPECT_EQ(i, msgs.size()) << "no message outside a turn";
  if (rp.trajectory.status != TrajectoryStatus::running && !turns.empty()) {
    EXPECT_EQ(turns.back().step, TurnStep::complete);
  }
  return begun;
}

/// Forks a child that runs `body` and _exits 0, or 1 with a message on stderr when it throws.
template <class F>
pid_t fork_child(F body) {
  pid_t pid = fork();
  if (pid == 0) {
    int rc = 0;
    try {
      body();
    } catch (const std::exception& e) {
      fprintf(stderr, "child %d: %s\n", getpid(), e.what());
      rc = 1;
    }
    _exit(rc);
  }
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

// ------------------------------------------------------------------------------------------ schema

TEST_F(RunStoreTest, SchemaIsVersionedAndSurvivesReopening) {
  std::string id;
  { RunStore store(path()); id = store.create_run(config(), "test-model"); }
  RunStore again(path(), RunStore::Open::existing);
  EXPECT_EQ(again.run(id).model, "test-model");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), RunStore::kSchemaVersion);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(RunStoreTest, RefusesANewerSchemaAndForeignFiles) {
  { RunStore store(path()); }
  {
    SqliteDb db(path());
    db.exec("PRAGMA user_version = 99");
  }
  try {
    RunStore store(path());
    FAIL() << "a newer schema must be refused";
  } catch (const StoreError& e) {  // bad input (exit 2): the user named a file this ptxbench cannot read
    EXPECT_NE(std::string(e.what()).find("schema version 99"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
  std::string other = (dir.path() / "other.db").string();
  {
    SqliteDb db(other);
    db.exec("CREATE TABLE tasks (id TEXT)");
  }
  EXPECT_THROW(RunStore{other}, StoreError);
  EXPECT_THROW(RunStore((dir.path() / "missing.db").string(), RunStore::Open::existing), StoreError);
  EXPECT_THROW(RunStore((dir.path() / "missing.db").string(), RunStore::Open::read_only), StoreError);
  EXPECT_FALSE(fs::exists(dir.path() / "missing.db"));
}

// A store written by schema version 1 (runs without origin, gpu, import_key) is migrated in place
// when opened: its runs become measured runs and a half-done trajectory resumes as before.
TEST_F(RunStoreTest, MigratesSchemaOneInPlace) {
  std::string run;
  int64_t traj = 0;
  {
    RunStore store(path());
    run = store.create_run(config(), "test-model", "written by version 1");
    traj = store.ensure_trajectory(run, key(0));
    for (int i = 0; i < 9; ++i) drive_one_step(store, traj, 8);  // into turn 2
  }
  test::downgrade_run_store(path(), 1);  // back to what version 1 wrote
  RunStore store(path(), RunStore::Open::existing);
  {
    SqliteDb db(path());
    auto st = db.prepare("PRAGMA user_version");
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.integer(0), RunStore::kSchemaVersion);
  }
  RunInfo r = store.run(run);
  EXPECT_EQ(r.origin, kMeasuredOrigin);
  EXPECT_FALSE(r.imported());
  EXPECT_EQ(r.gpu, "");
  EXPECT_EQ(r.import_key, "");
  EXPECT_EQ(r.notes, "written by version 1");
  EXPECT_EQ(r.config, config());
  EXPECT_EQ(store.resume_point(traj).turn, 2);
  drive_to_end(store, traj, 8);
  check_integrity(store, traj);
  EXPECT_EQ(store.trajectory(traj).turns_completed, 8);
  ASSERT_EQ(store.list_runs().size(), 1u);
  EXPECT_EQ(store.list_runs()[0].origin, kMeasuredOrigin);
}

// ------------------------------------------------------------------------------------------ runs

TEST_F(RunStoreTest, RunsHaveReadableIdsConfigAndStatus) {
  RunStore store(path());
  std::string a = store.create_run(config(), "model-a", "first");
  std::string b = store.create_run({{"num_turns", 4}}, "model-b");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), 20u) << a;  // 20261129-143205-3fa2
  EXPECT_EQ(a[8], '-');
  EXPECT_EQ(store.run_config(a), config());
  EXPECT_EQ(store.run(a).notes, "first");
  EXPECT_EQ(store.run(a).status, RunStatus::running);
  store.set_run_status(a, RunStatus::interrupted);
  store.set_run_notes(a, "resumed later");
  EXPECT_EQ(store.run(a).status, RunStatus::interrupted);
  EXPECT_EQ(store.run(a).notes, "resumed later");
  auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  std::set<std::string> ids{runs[0].id, runs[1].id};
  EXPECT_TRUE(ids.count(a) && ids.count(b));
  EXPECT_FALSE(store.find_run("nope").has_value());
  EXPECT_THROW((void)store.run("nope"), RunStoreError);
  EXPECT_THROW(store.set_run_status("nope", RunStatus::finished), RunStoreError);
  EXPECT_THROW(store.ensure_trajectory("nope", key(0)), RunStoreError);
}

// ------------------------------------------------------------------------------------------ turns

TEST_F(RunStoreTest, FullTrajectoryRoundTrip) {
  int64_t traj = 0;
  std::string run;
  {
    RunStore store(path());
    run = store.create_run(config(), "test-model");
    traj = store.ensure_trajectory(run, key(0));
    EXPECT_EQ(store.ensure_trajectory(run, key(0)), traj) << "the same key finds the same trajectory";
    EXPECT_NE(store.ensure_trajectory(run, key(1)), traj);
    drive_to_end(store, traj, 8);
  }
  RunStore store(path(), RunStore::Open::existing);
  check_integrity(store, traj);
  TrajectoryInfo t = store.trajectory(traj);
  EXPECT_EQ(t.status, TrajectoryStatus::finished);
  EXPECT_EQ(t.stop_reason, "turn budget");
  EXPECT_EQ(t.turns_completed, 8);
  ASSERT_TRUE(t.best_speedup.has_value());
  EXPECT_DOUBLE_EQ(*t.best_speedup, 0.16);         // turn 8 passes, speedup 0.02·8
  EXPECT_DOUBLE_EQ(*t.best_target_speedup, 0.16);  // even turn: target instruction
  auto turns = store.turns(traj);
  ASSERT_EQ(turns.size(), 8u);
  EXPECT_EQ(turns[0].status, "PASSED");
  EXPECT_FALSE(turns[0].target_instruction);
  EXPECT_EQ(turns[1].status, kExtractionErrorStatus);
  EXPECT_EQ(*turns[1].extraction_error, "no code block");
  EXPECT_FALSE(turns[1].task_id.has_value());
  EXPECT_EQ(turns[2].status, "COMPILE_ERROR");
  EXPECT_FALSE(turns[2].correct);
  EXPECT_EQ(*turns[2].task_id, task_for(traj, 3));
  EXPECT_EQ(turns[2].verdict->status, Status::COMPILE_ERROR);
  EXPECT_TRUE(turns[3].target_instruction);
  EXPECT_EQ(turns[3].candidate_sha256->size(), 64u);
  EXPECT_EQ(store.candidate_source(*turns[3].candidate_sha256), kernel_text(traj, 4));
  EXPECT_FALSE(turns[7].feedback.has_value()) << "the last turn ends without feedback";
  // 2 opening + 8 answers + 7 feedback messages
  EXPECT_EQ(store.messages(traj).size(), 17u);
  EXPECT_EQ(store.resume_point(traj).next(), NextAction::done);
  EXPECT_EQ(store.list_trajectories(run).size(), 2u);
}

TEST_F(RunStoreTest, StopsEarlyWhenTheTargetIsReached) {
  RunStore store(path());
  int64_t traj = store.ensure_trajectory(store.create_run(config(), "m"), key(0));
  drive_to_end(store, traj, 100);
  TrajectoryInfo t = store.trajectory(traj);
  EXPECT_EQ(t.status, TrajectoryStatus::stopped_early);
  EXPECT_EQ(t.turns_completed, 60);  // 0.02·60 = 1.2
  check_integrity(store, traj);
}

// Stop after every possible step, reopen the file in a new object, check what resume_point says,
// and finish from there: the result must equal an uninterrupted trajectory.
TEST_F(RunStoreTest, ResumePointAfterEachStep) {
  std::vector<StoredMessage> reference;
  {
    RunStore store((dir.path() / "reference.db").string());
    int64_t traj = store.ensure_trajectory(store.create_run(config(), "m"), key(0));
    drive_to_end(store, traj, 4);
    reference = store.messages(traj);
  }
  struct Expect {
    int64_t turn;
    std::optional<TurnStep> step;
    NextAction next;
  };
  // The step sequence of 4 scripted turns (turn 2: extraction error, turn 4 the last one).
  std::vector<Expect> sequence = {
      {0, std::nullopt, NextAction::store_initial_messages},
      {0, std::nullopt, NextAction::next_turn},
      {1, TurnStep::model_call_started, NextAction::call_model},
      {1, TurnStep::model_answered, NextAction::extract_candidate},
      {1, TurnStep::candidate_extracted, NextAction::submit_evaluation},
      {1, TurnStep::evaluation_submitted, NextAction::await_verdict},
      {1, TurnStep::verdict_stored, NextAction::feedback_or_complete},
      {1, TurnStep::feedback_stored, NextAction::complete_turn},
      {1, TurnStep::complete, NextAction::next_turn},
      {2, TurnStep::model_call_started, NextAction::call_model},
      {2, TurnStep::model_answered, NextAction::extract_candidate},
      {2, TurnStep::candidate_extracted, NextAction::feedback_or_complete},
      {2, TurnStep::feedback_stored, NextAction::complete_turn},
      {2, TurnStep::complete, NextAction::next_turn},
  };
  for (std::size_t stop = 0; stop < sequence.size(); ++stop) {
    SCOPED_TRACE("stopped after " + std::to_string(stop) + " steps");
    std::string file = (dir.path() / ("resume" + std::to_string(stop) + ".db")).string();
    int64_t traj = 0;
    {
      RunStore store(file);
      traj = store.ensure_trajectory(store.create_run(config(), "m"), key(0));
      for (std::size_t s = 0; s < stop; ++s) ASSERT_TRUE(drive_one_step(store, traj, 4));
    }
    RunStore store(file, RunStore::Open::existing);
    ResumePoint rp = store.resume_point(traj);
    EXPECT_EQ(rp.turn, sequence[stop].turn);
    EXPECT_EQ(rp.last ? std::optional<TurnStep>(rp.last->step) : std::nullopt, sequence[stop].step);
    EXPECT_EQ(rp.next(), sequence[stop].next) << to_string(rp.next());
    EXPECT_EQ(rp.messages.size(), store.messages(traj).size());
    if (rp.last && rp.last->step == TurnStep::evaluation_submitted) {
      EXPECT_EQ(rp.last->task_id, task_for(traj, rp.turn)) << "a resumed loop re-attaches to this task";
    }
    if (rp.last && rp.last->step == TurnStep::model_answered) {
      EXPECT_EQ(*rp.last->answer, answer_text(traj, rp.turn));
    }
    drive_to_end(store, traj, 4);
    check_integrity(store, traj);
    auto finished = store.messages(traj);
    ASSERT_EQ(finished.size(), reference.size());
    for (std::size_t i = 0; i < finished.size(); ++i) EXPECT_EQ(finished[i].content, reference[i].content);
  }
}

TEST_F(RunStoreTest, DuplicateAndOutOfOrderStepsAreRejected) {
  RunStore store(path());
  int64_t traj = store.ensure_trajectory(store.create_run(config(), "m"), key(0));
  EXPECT_THROW(store.begin_turn(traj, 1), RunStoreError) << "no opening messages yet";
  store.record_initial_messages(traj, {{"system", "rules"}, {"user", "task"}});
  EXPECT_THROW(store.record_initial_messages(traj, {{"user", "again"}}), RunStoreError);
  EXPECT_THROW(store.record_model_answer(traj, 1, "a", {}), RunStoreError) << "turn not begun";
  EXPECT_THROW(store.begin_turn(traj, 2), RunStoreError) << "turns start at 1";
  store.begin_turn(traj, 1);
  EXPECT_THROW(store.begin_turn(traj, 1), RunStoreError) << "begun twice";
  EXPECT_THROW(store.begin_turn(traj, 2), RunStoreError) << "turn 1 is not complete";
  EXPECT_THROW(store.record_candidate(traj, 1, "k"), RunStoreError) << "no answer yet";
  EXPECT_THROW(store.complete_turn(traj, 1), RunStoreError);
  store.record_model_answer(traj, 1, answer_text(traj, 1), usage_for(1), reasoning_for(1));
  try {
    store.record_model_answer(traj, 1, answer_text(traj, 1), usage_for(1), reasoning_for(1));
    FAIL() << "a second answer must be refused";
  } catch (const RunStoreError& e) {
    EXPECT_NE(std::string(e.what()).find("turn 1 of trajectory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model_answered"), std::string::npos) << e.what();
  }
  EXPECT_THROW(store.record_submission(traj, 1, "t"), RunStoreError) << "no candidate yet";
  store.record_candidate(traj, 1, kernel_text(traj, 1));
  EXPECT_THROW(store.record_candidate(traj, 1, kernel_text(traj, 1)), RunStoreError);
  EXPECT_THROW(store.record_extraction_error(traj, 1, "x"), RunStoreError);
  EXPECT_THROW(store.record_feedback(traj, 1, "f"), RunStoreError) << "not evaluated yet";
  EXPECT_THROW(store.complete_turn(traj, 1), RunStoreError) << "not evaluated yet";
  EXPECT_THROW(store.record_verdict(traj, 1, "t", verdict_for(1)), RunStoreError) << "not submitted";
  store.record_submission(traj, 1, "t1");
  EXPECT_THROW(store.record_submission(traj, 1, "t1"), RunStoreError);
  EXPECT_THROW(store.record_verdict(traj, 1, "t0", verdict_for(1)), RunStoreError) << "a stale task's verdict";
  EXPECT_THROW(store.record_verdict(traj, 1, "t1", ordered_json::object()), RunStoreError) << "no status";
  store.record_verdict(traj, 1, "t1", verdict_for(1));
  EXPECT_THROW(store.record_verdict(traj, 1, "t1", verdict_for(1)), RunStoreError);
  store.record_feedback(traj, 1, feedback_text(1));
  EXPECT_THROW(store.record_feedback(traj, 1, feedback_text(1)), RunStoreError);
  EXPECT_THROW(store.finish_trajectory(traj, TrajectoryStatus::finished, "x"), RunStoreError) << "turn 1 partial";
  store.complete_turn(traj, 1);
  EXPECT_THROW(store.complete_turn(traj, 1), RunStoreError);
  store.finish_trajectory(traj, TrajectoryStatus::finished, "budget");
  EXPECT_THROW(store.begin_turn(traj, 2), RunStoreError) << "finished";
  EXPECT_THROW(store.finish_trajectory(traj, TrajectoryStatus::failed, "x"), RunStoreError);
  // Nothing of the refused calls was written.
  EXPECT_EQ(store.messages(traj).size(), 4u);
  EXPECT_EQ(check_integrity(store, traj), 1);
}

TEST_F(RunStoreTest, ResubmissionAndFailedTrajectories) {
  RunStore store(path());
  int64_t traj = store.ensure_trajectory(store.create_run(config(), "m"), key(0));
  store.record_initial_messages(traj, {{"system", "rules"}, {"user", "task"}});
  store.begin_turn(traj, 1);
  // The model API gave up: the trajectory fails with a partial turn, and can be reopened later.
  store.finish_trajectory(traj, TrajectoryStatus::failed, "provider: 5 attempts, HTTP 503");
  EXPECT_EQ(store.resume_point(traj).next(), NextAction::done);
  EXPECT_THROW(store.record_model_answer(traj, 1, "a", usage_for(1)), RunStoreError);
  store.reopen_trajectory(traj);
  EXPECT_EQ(store.resume_point(traj).next(), NextAction::call_model);
  store.record_model_answer(traj, 1, "a", usage_for(1));
  store.record_candidate(traj, 1, "k");
  store.record_submission(traj, 1, "lost-task");
  EXPECT_THROW(store.record_resubmission(traj, 1, "other", "new-task"), RunStoreError);
  store.record_resubmission(traj, 1, "lost-task", "new-task");
  EXPECT_THROW(store.record_verdict(traj, 1, "lost-task", verdict_for(1)), RunStoreError);
  store.record_verdict(traj, 1, "new-task", verdict_for(1));
  auto t = store.turns(traj).at(0);
  EXPECT_EQ(t.submissions, 2);
  EXPECT_EQ(*t.task_id, "new-task");
  store.complete_turn(traj, 1, TrajectoryEnd{TrajectoryStatus::finished, "budget"});
  EXPECT_EQ(store.trajectory(traj).status, TrajectoryStatus::finished);
  EXPECT_TRUE(store.trajectory(traj).finished_at.has_value());
}

TEST_F(RunStoreTest, TurnRowsForReports) {
  RunStore store(path());
  int64_t traj = store.ensure_trajectory(store.create_run(config(), "m"), key(0));
  drive_to_end(store, traj, 4);
  auto rows = store.turn_rows(traj);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].turn, 1);
  EXPECT_EQ(rows[0].status, "PASSED");
  EXPECT_TRUE(rows[0].correct);
  EXPECT_FALSE(rows[0].target_instruction);
  EXPECT_DOUBLE_EQ(*rows[0].speedup, 0.02);
  EXPECT_EQ(rows[1].status, kExtractionErrorStatus);
  EXPECT_FALSE(rows[1].speedup.has_value());
  EXPECT_EQ(rows[2].status, "COMPILE_ERROR");
  EXPECT_TRUE(rows[3].target_instruction);
  EXPECT_EQ(rows[3].prompt_tokens, 400);
  EXPECT_EQ(rows[3].completion_tokens, 40);
  EXPECT_EQ(rows[3].reasoning_tokens, 4);
  EXPECT_EQ(rows[3].cached_tokens, 50);
  EXPECT_EQ(rows[3].step, TurnStep::complete);
}

// ------------------------------------------------------------------------------------------ kill -9

// A child process runs the scripted loop (resuming from the store each time) with pauses between
// steps where the model call or the evaluation would be; the parent SIGKILLs it at random moments,
// reopens the file and checks every invariant, until a child gets to the end.
TEST_F(RunStoreTest, SurvivesSigkillAtRandomMoments) {
  constexpr int64_t kTurns = 30;
  int64_t traj = 0;
  {
    RunStore store(path());
    traj = store.ensure_trajectory(store.create_run(config(), "m"), key(0));
  }
  std::mt19937 rng(12345);
  int kills = 0;
  int64_t last_turns = 0;
  for (int cycle = 0; cycle < 400; ++cycle) {
    unsigned seed = rng();
    pid_t child = fork_child([&] {
      std::mt19937 r(seed);
      RunStore store(path(), RunStore::Open::existing);
      while (drive_one_step(store, traj, kTurns))
        std::this_thread::sleep_for(std::chrono::microseconds(r() % 2000));
    });
    ASSERT_GT(child, 0);
    std::this_thread::sleep_for(std::chrono::microseconds(1000 + rng() % 40000));
    ::kill(child, SIGKILL);  // may find it finished already: then it must have exited cleanly
    int code = wait_exit_code(child);
    if (code == 128 + SIGKILL) {
      ++kills;
    } else {
      ASSERT_EQ(code, 0) << "the child failed on its own (see its stderr)";
    }
    RunStore store(path(), RunStore::Open::existing);
    int64_t turns = check_integrity(store, traj);
    if (HasFailure()) return;
    EXPECT_GE(turns, last_turns) << "a turn was lost";
    last_turns = turns;
    if (store.resume_point(traj).next() == NextAction::done) break;
  }
  RunStore store(path(), RunStore::Open::existing);
  drive_to_end(store, traj, kTurns);  // in case the cycles ran out first
  check_integrity(store, traj);
  EXPECT_EQ(store.trajectory(traj).turns_completed, kTurns);
  EXPECT_EQ(store.trajectory(traj).status, TrajectoryStatus::finished);
  EXPECT_GE(kills, 5) << "the test must actually kill the writer mid-run";
  std::cout << "[          ] " << kills << " kills\n";
}

// ------------------------------------------------------------------------------------------ concurrency

TEST_F(RunStoreTest, ConcurrentThreadsLoseNoWrite) {
  std::string run;
  {
    RunStore store(path());
    run = store.create_run(config(), "m");
  }
  RunStore shared(path());
  std::vector<std::thread> threads;
  std::vector<int64_t> ids(8);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      if (i % 2 == 0) {  // half share one object, half have their own connection
        ids[i] = shared.ensure_trajectory(run, key(i));
        drive_to_end(shared, ids[i], 12);
      } else {
        RunStore own(path());
        ids[i] = own.ensure_trajectory(run, key(i));
        drive_to_end(own, ids[i], 12);
      }
    });
  for (auto& t : threads) t.join();
  RunStore store(path(), RunStore::Open::existing);
  auto list = store.list_trajectories(run);
  ASSERT_EQ(list.size(), 8u);
  for (const auto& t : list) {
    EXPECT_EQ(t.turns_completed, 12);
    EXPECT_EQ(t.status, TrajectoryStatus::finished);
    check_integrity(store, t.id);
    EXPECT_EQ(store.messages(t.id).size(), 2u + 12u + 11u);
  }
}

TEST_F(RunStoreTest, ConcurrentProcessesLoseNoWrite) {
  std::string run;
  {
    RunStore store(path());
    run = store.create_run(config(), "m");
  }
  std::vector<pid_t> children;
  for (int i = 0; i < 4; ++i)
    children.push_back(fork_child([&, i] {
      RunStore store(path(), RunStore::Open::existing);
      drive_to_end(store, store.ensure_trajectory(run, key(i, "proc")), 10);
    }));
  for (pid_t c : children) EXPECT_EQ(wait_exit_code(c), 0);
  RunStore store(path(), RunStore::Open::existing);
  auto list = store.list_trajectories(run);
  ASSERT_EQ(list.size(), 4u);
  for (const auto& t : list) {
    EXPECT_EQ(t.turns_completed, 10);
    check_integrity(store, t.id);
  }
}

// ------------------------------------------------------------------------------------------ export

TEST_F(RunStoreTest, ExportsMiniSweAgentTrajectoryAndRunFolder) {
  RunStore store(path());
  std::string run = store.create_run(config(), "test-model", "export test");
  int64_t traj = store.ensure_trajectory(run, key(3));
  drive_to_end(store, traj, 4);
  int64_t empty = store.ensure_trajectory(run, key(0, "bare"));

  fs::path runs_root = dir.path() / "runs";
  fs::path run_dir = export_run(store, run, runs_root);
  EXPECT_EQ(run_dir, runs_root / run);
  fs::path tdir = run_dir / "gemm_n7168_k5120__gemm_n7168_k5120-m8192__contract__3";
  EXPECT_EQ(tdir.filename().string(), trajectory_dir_name(store.trajectory(traj)));
  ASSERT_TRUE(fs::exists(tdir / "trajectory.json"));
  EXPECT_EQ(read_file(tdir / "turn_1.cu"), kernel_text(traj, 1));
  EXPECT_FALSE(fs::exists(tdir / "turn_2.cu")) << "turn 2 had no candidate";
  EXPECT_TRUE(fs::exists(tdir / "turn_3.cu"));
  EXPECT_TRUE(fs::exists(tdir / "turn_4.cu"));
  EXPECT_TRUE(fs::exists(run_dir / "gemm_n7168_k5120__gemm_n7168_k5120-m8192__bare__0" / "trajectory.json"));

  ordered_json doc = ordered_json::parse(read_file(tdir / "trajectory.json"));
  EXPECT_EQ(doc["trajectory_format"], "mini-swe-agent-1");
  const auto& info = doc["info"];
  EXPECT_EQ(info["exit_status"], "finished");
  EXPECT_EQ(info["submission"], kernel_text(traj, 4)) << "the fastest target-instruction-correct kernel";
  EXPECT_EQ(info["model_stats"]["api_calls"], 4);
  EXPECT_TRUE(info["model_stats"]["instance_cost"].is_number());
  EXPECT_EQ(info["config"]["agent"], config());
  EXPECT_EQ(info["config"]["model"]["model_name"], "test-model");
  for (const char* k : {"agent_type", "model_type", "environment_type", "environment"})
    EXPECT_TRUE(info["config"].contains(k)) << k;
  const auto& messages = doc["messages"];
  ASSERT_EQ(messages.size(), 2u + 4u + 3u);
  EXPECT_EQ(messages[0]["role"], "system");
  EXPECT_EQ(messages[2]["role"], "assistant");
  EXPECT_EQ(messages[2]["content"], answer_text(traj, 1));
  EXPECT_EQ(messages[2]["extra"]["ptxbench_turn"], 1);
  EXPECT_EQ(messages[2]["reasoning_content"], reasoning_for(1));
  EXPECT_FALSE(messages[4].contains("reasoning_content")) << "turn 2 had no reasoning text";
  EXPECT_EQ(messages[3]["role"], "user");
  const auto& px = info["ptxbench"];
  EXPECT_EQ(px["schema"], kTrajectoryExtraSchema);
  EXPECT_EQ(px["run_id"], run);
  EXPECT_EQ(px["index"], 3);
  EXPECT_EQ(px["submission_turn"], 4);
  EXPECT_EQ(px["tokens"]["prompt"], 100 + 200 + 300 + 400);
  ASSERT_EQ(px["turns"].size(), 4u);
  EXPECT_EQ(px["turns"][0]["candidate_file"], "turn_1.cu");
  EXPECT_EQ(px["turns"][1]["status"], kExtractionErrorStatus);
  EXPECT_TRUE(px["turns"][1]["candidate_file"].is_null());
  EXPECT_EQ(px["turns"][2]["verdict"]["status"], "COMPILE_ERROR");
  EXPECT_EQ(px["turns"][3]["usage"]["model"], "test-model");
  EXPECT_EQ(px["turns"][3]["usage"]["finish_reason"], "stop");
  EXPECT_DOUBLE_EQ(px["best_target_speedup"].get<double>(), 0.08);

  ordered_json bare = trajectory_json(store, empty);
  EXPECT_TRUE(bare["info"]["submission"].is_null());
  EXPECT_EQ(bare["info"]["exit_status"], "running");
  EXPECT_EQ(bare["messages"].size(), 0u);

  ordered_json run_doc = ordered_json::parse(read_file(run_dir / "run.json"));
  EXPECT_EQ(run_doc["run_id"], run);
  EXPECT_EQ(run_doc["trajectories"].size(), 2u);
}

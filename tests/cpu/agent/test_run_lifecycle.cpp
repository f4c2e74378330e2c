// The run lifecycle (issue 34) and the paper's turn protocol (issue 33), on the CPU: a failed
// preflight stores nothing; a run is running only while a live process holds it (a dead holder
// reads crashed, a live one refuses --resume and delete); failed runs keep their reason; archived
// runs stay readable; the schema-4 migration; INFRA_ERROR evaluations re-run without reaching the
// model or spending a turn, and a run failed when they persist; the target and the stop rule in
// the feedback; the dry run.
#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <mutex>

#include "agent/agent_run.h"
#include "agent/dry_run.h"
#include "agent/run_config.h"
#include "runs/run_holder.h"
#include "runs/run_store.h"
#include "agent/turn_loop.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sqlite_db.h"
#include "common/subprocess.h"
#include "cpu/agent/run_store_schema.h"
#include "helpers/fake_provider.h"
#include "service/http_server.h"
#include "verdict/feedback.h"

using namespace ptxbench;
using fakes::FakeCall;
using fakes::FakeProvider;
using fakes::FakeTurn;

namespace {

constexpr const char* kGemm = "gemm_n7168_k5120";

std::string kernel_answer(const std::string& marker) {
  return "The kernel.\n\n```cuda\n#include \"ptxbench_abi.h\"\n// " + marker +
         "\nextern \"C\" int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) { return 0; }\n```\n";
}

// An evaluation service whose verdicts follow a script, one status per submission (the last one
// repeats); the same idempotency key gets its task back, as the real service's does.
class ScriptedService {
 public:
  explicit ScriptedService(std::deque<std::string> statuses)
      : m_script(std::move(statuses)), m_server(HttpServerOptions{}, [this](const HttpRequest& r) { return handle(r); }) {
    m_server.start();
  }
  [[nodiscard]] std::string url() const { return "http://" + m_server.address(); }
  void set_script(std::deque<std::string> statuses) {
    std::lock_guard lock(m_mutex);
    m_script = std::move(statuses);
  }
  [[nodiscard]] int submissions() const {
    std::lock_guard lock(m_mutex);
    return static_cast<int>(m_tasks.size());
  }

 private:
  HttpResponse handle(const HttpRequest& r) {
    std::lock_guard lock(m_mutex);
    if (r.path == "/v1/definitions") return HttpResponse::json(200, ordered_json::array({{{"name", kGemm}}}).dump());
    if (r.method == "POST" && r.path == "/v1/evaluations") {
      std::string key = r.headers.count("idempotency-key") ? r.headers.at("idempotency-key") : "";
      if (auto it = m_by_key.find(key); !key.empty() && it != m_by_key.end())
        return HttpResponse::json(202, ordered_json{{"id", it->second}, {"state", "done"}}.dump());
      std::string status = m_script.front();
      if (m_script.size() > 1) m_script.pop_front();
      bool passed = status == "PASSED";
      ordered_json verdict = {{"schema", "ptxbench.verdict"},
                              {"status", status},
                              {"message", status == "INFRA_ERROR" ? "worker on device 0 died" : "scripted verdict"},
                              {"speedup", passed ? ordered_json(1.5) : ordered_json(nullptr)},
                              {"target_instruction", {{"correct", passed}}},
                              {"fake", true}};
      std::string id = "task-" + std::to_string(m_tasks.size() + 1);
      m_tasks[id] = verdict;
      if (!key.empty()) m_by_key[key] = id;
      return HttpResponse::json(202, ordered_json{{"id", id}, {"state", "queued"}}.dump());
    }
    const std::string prefix = "/v1/evaluations/";
    if (r.path.rfind(prefix, 0) == 0) {
      auto it = m_tasks.find(r.path.substr(prefix.size()));
      if (it == m_tasks.end()) return HttpResponse::json(404, R"({"error": "no such task"})");
      return HttpResponse::json(200, ordered_json{{"id", it->first}, {"state", "done"}, {"verdict", it->second}}.dump());
    }
    return HttpResponse::json(404, R"({"error": "no such path"})");
  }
  mutable std::mutex m_mutex;
  std::deque<std::string> m_script;
  std::map<std::string, ordered_json> m_tasks;
  std::map<std::string, std::string> m_by_key;
  HttpServer m_server;  // last: stopped before the script goes
};

// A model that always answers the same kernel; the fake service decides the verdicts.
void answer_with_a_kernel(FakeProvider& model) {
  model.set_responder([](const FakeCall&) { return FakeTurn{kernel_answer("scripted"), {}, {1000, 50, 0, 0}}; });
}

ordered_json run_config(const std::string& model_url, const std::string& service) {
  return {{"policy", "model"},
          {"model",
           {{"provider", "openai"}, {"base_url", model_url + "/v1"}, {"model", "fake-model"}, {"api_key_env", ""}, {"max_tokens", 256}}},
          {"definitions", {kGemm}},
          {"prompt_tags", {"params"}},
          {"trajectories_per_tag", 1},
          {"num_turns", 3},
          {"concurrency", 1},
          {"service", service},
          {"infra_error_retries", 2},
          {"infra_error_backoff_s", 0.01}};
}

struct LifecycleTest : ::testing::Test {
  TempDir dir{"run_lifecycle"};
  [[nodiscard]] AgentRunSetup setup() const {
    AgentRunSetup s;
    s.root = PTXBENCH_SOURCE_DIR;
    s.store = (dir.path() / "runs" / "runs.db").string();
    s.runs_dir = dir.path() / "runs";
    s.ptxbench = executable_dir() / "ptxbench";
    s.local_service_args = {"--fake-gpus", "1"};
    return s;
  }
};

ProcessSpec command(std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  return spec;
}

// Another live process, to hold runs: `sleep`, killed when the test ends.
struct LiveProcess {
  ChildProcess child{command({"sleep", "120"})};
  ~LiveProcess() { child.kill_and_wait(); }
  [[nodiscard]] RunHolder holder() const {
    return {child.pid(), RunHolder::current().host, process_start_stamp(child.pid())};
  }
};

/// Makes `holder` the holder of run `id`, as the process it names would have.
void hold(const std::string& store, const std::string& id, const RunHolder& holder) {
  SqliteDb db(store);
  db.prepare("UPDATE runs SET state = 'running', status = 'running', holder_pid = ?, holder_host = ?, holder_started = ? WHERE id = ?")
      .bind(1, holder.pid)
      .bind(2, holder.host)
      .bind(3, holder.started)
      .bind(4, id)
      .run();
}

std::string file_text(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  return out;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// ------------------------------------------------------------------------------------------ holders

TEST(RunHolderTest, TellsThisProcessALiveOneAndADeadOneApart) {
  RunHolder me = RunHolder::current();
  EXPECT_GT(me.pid, 0);
  EXPECT_FALSE(me.started.empty()) << "/proc/self/stat is readable on Linux";
  EXPECT_EQ(me.liveness(), RunHolder::Liveness::alive);
  RunHolder reused = me;
  reused.started += "0";  // the same pid, another start: a new process that took the pid
  EXPECT_EQ(reused.liveness(), RunHolder::Liveness::gone);
  LiveProcess live;
  EXPECT_EQ(live.holder().liveness(), RunHolder::Liveness::alive);
  RunHolder elsewhere = me;
  elsewhere.host = "another-host.invalid";
  EXPECT_EQ(elsewhere.liveness(), RunHolder::Liveness::unknown);
  EXPECT_EQ(process_start_stamp(0), "");
}

TEST_F(LifecycleTest, ARunIsRunningOnlyWhileALiveProcessHoldsIt) {
  fs::create_directories(dir.path() / "runs");
  RunStore store(setup().store);
  std::string id = store.create_run({{"num_turns", 8}}, "m");
  RunInfo mine = store.run(id);
  EXPECT_EQ(mine.status, RunStatus::running);
  ASSERT_TRUE(mine.holder);
  EXPECT_TRUE(mine.holder->same_process(RunHolder::current()));

  // Held by a process that died: crashed, for every reader.
  RunHolder dead;
  {
    LiveProcess soon_dead;
    dead = soon_dead.holder();
  }
  hold(setup().store, id, dead);
  EXPECT_EQ(store.run(id).status, RunStatus::crashed);
  EXPECT_EQ(store.list_runs().at(0).status, RunStatus::crashed);
  {
    RunStore reader(setup().store, RunStore::Open::read_only);
    EXPECT_EQ(reader.run(id).status, RunStatus::crashed);
  }
  // A crashed run is taken over by the process that resumes it.
  RunInfo before = store.claim_run(id);
  EXPECT_EQ(before.status, RunStatus::crashed);
  EXPECT_EQ(store.run(id).status, RunStatus::running);
  EXPECT_TRUE(store.run(id).holder->same_process(RunHolder::current()));

  // Held by a live process: resume and delete are refused, saying who holds it.
  LiveProcess other;
  hold(setup().store, id, other.holder());
  EXPECT_EQ(store.run(id).status, RunStatus::running);
  try {
    (void)store.claim_run(id);
    ADD_FAILURE() << "claimed a run another live process holds";
  } catch (const RunHeldError& e) {
    EXPECT_TRUE(contains(e.what(), "pid " + std::to_string(other.child.pid()))) << e.what();
  }
  EXPECT_THROW((void)store.delete_run(id), RunHeldError);
  try {
    (void)resume_run(id, setup());
    ADD_FAILURE() << "resumed a run another live process holds";
  } catch (const RunHeldError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot be resumed twice")) << e.what();
  }
  EXPECT_EQ(store.delete_run(id, true).trajectories, 0);
  EXPECT_FALSE(store.find_run(id));
}

TEST_F(LifecycleTest, FailedRunsKeepTheirReasonAndArchivedRunsStayReadable) {
  fs::create_directories(dir.path() / "runs");
  RunStore store(setup().store);
  std::string a = store.create_run({{"num_turns", 8}}, "model-a");
  store.set_run_status(a, RunStatus::failed, "the service went away");
  RunInfo failed = store.run(a);
  EXPECT_EQ(failed.status, RunStatus::failed);
  EXPECT_EQ(failed.failure, "the service went away");
  EXPECT_FALSE(failed.holder) << "a failed run is held by nobody";
  EXPECT_THROW(store.set_run_status(a, RunStatus::crashed), RunStoreError) << "crashed is read, never written";
  store.set_run_status(a, RunStatus::finished, "ignored");
  EXPECT_EQ(store.run(a).failure, "");

  store.set_run_archived(a, true);
  ASSERT_TRUE(store.run(a).archived());
  EXPECT_EQ(store.list_runs().size(), 1u) << "list_runs keeps archived runs; `run --list` hides them";
  store.set_run_archived(a, false);
  EXPECT_FALSE(store.run(a).archived());
  EXPECT_THROW(store.set_run_archived("nope", true), RunStoreError);

  // Deleting removes the run and all of it; a candidate another run uses stays.
  std::string b = store.create_run({{"num_turns", 8}}, "model-b");
  for (const std::string& run : {a, b}) {
    int64_t t = store.ensure_trajectory(run, {kGemm, "", "params", 0});
    store.record_initial_messages(t, {{"system", "rules"}, {"user", "task"}});
    store.begin_turn(t, 1);
    store.record_model_answer(t, 1, "answer", {});
    store.record_candidate(t, 1, "// the same kernel");
  }
  DeletedRun d = store.delete_run(a);
  EXPECT_EQ(d.trajectories, 1);
  EXPECT_EQ(d.turns, 1);
  EXPECT_FALSE(store.find_run(a));
  auto left = store.list_trajectories(b);
  ASSERT_EQ(left.size(), 1u);
  auto turns = store.turns(left[0].id);
  ASSERT_TRUE(turns.at(0).candidate_source);
  EXPECT_EQ(*turns[0].candidate_source, "// the same kernel");
  (void)store.delete_run(b);
  SqliteDb db(setup().store);
  for (const char* table : {"trajectories", "turns", "messages", "usage", "candidates"}) {
    auto st = db.prepare(std::string("SELECT COUNT(*) FROM ") + table);
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.integer(0), 0) << table;
  }
}

// A store of schema 3 opens and migrates: its finished runs stay finished, a run it left running
// (no holder: written before holders) reads crashed and resumes.
TEST_F(LifecycleTest, SchemaThreeStoresMigrate) {
  fs::create_directories(dir.path() / "runs");
  std::string finished, left_running;
  {
    RunStore store(setup().store);
    finished = store.create_run({{"num_turns", 8}}, "m", "finished under schema 3");
    store.set_run_status(finished, RunStatus::finished);
    left_running = store.create_run({{"num_turns", 8}}, "m", "left running");
  }
  test::downgrade_run_store(setup().store, 3);
  {
    RunStore reader(setup().store, RunStore::Open::read_only);  // a reader migrates it once too
    EXPECT_EQ(reader.run(finished).status, RunStatus::finished);
  }
  RunStore store(setup().store, RunStore::Open::existing);
  SqliteDb db(setup().store);
  EXPECT_EQ(db.pragma_int("user_version"), RunStore::kSchemaVersion);
  EXPECT_EQ(store.run(finished).status, RunStatus::finished);
  EXPECT_EQ(store.run(finished).notes, "finished under schema 3");
  EXPECT_EQ(store.run(left_running).status, RunStatus::crashed);
  EXPECT_FALSE(store.run(left_running).holder);
  (void)store.claim_run(left_running);
  EXPECT_EQ(store.run(left_running).status, RunStatus::running);
  store.set_run_status(left_running, RunStatus::failed, "stopped");
  EXPECT_EQ(store.run(left_running).status, RunStatus::failed);
}

// ------------------------------------------------------------------------------------------ preflight

TEST_F(LifecycleTest, AFailedPreflightStoresNothing) {
  FakeProvider model;
  answer_with_a_kernel(model);
  ScriptedService service({"PASSED"});

  ordered_json no_key = run_config(model.url(), service.url());
  no_key["model"]["api_key_env"] = "PTXBENCH_TEST_KEY_THAT_IS_NOT_SET";
  try {
    (void)start_run(run_config_from_json(no_key), setup());
    ADD_FAILURE() << "started without its API key";
  } catch (const EnvironmentError& e) {
    ADD_FAILURE() << "a missing key is bad input (exit 2), not the environment: " << e.what();
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "PTXBENCH_TEST_KEY_THAT_IS_NOT_SET")) << e.what();
  }

  ordered_json no_model = run_config("http://127.0.0.1:1", service.url());  // nothing listens on port 1
  try {
    (void)start_run(run_config_from_json(no_model), setup());
    ADD_FAILURE() << "started with no model endpoint";
  } catch (const EnvironmentError& e) {
    EXPECT_TRUE(contains(e.what(), "model endpoint http://127.0.0.1:1/v1")) << e.what();
  }

  ordered_json no_service = run_config(model.url(), "http://127.0.0.1:1");
  try {
    (void)start_run(run_config_from_json(no_service), setup());
    ADD_FAILURE() << "started with no evaluation service";
  } catch (const EnvironmentError& e) {
    EXPECT_TRUE(contains(e.what(), "http://127.0.0.1:1")) << e.what();
  }
  EXPECT_FALSE(fs::exists(setup().store)) << "no preflight may create the run store";
  EXPECT_TRUE(model.calls().empty()) << "no model call before the preflight passed";
  EXPECT_EQ(service.submissions(), 0);
}

// ------------------------------------------------------------------------------------------ INFRA_ERROR

// The paper excludes evaluations that failed on our side: the turn is evaluated again, the model
// never sees the INFRA_ERROR, the turn budget is not spent, and the attempt is kept as a record.
TEST_F(LifecycleTest, AnInfraErrorIsEvaluatedAgainWithoutReachingTheModel) {
  FakeProvider model;
  answer_with_a_kernel(model);
  ScriptedService service({"INFRA_ERROR", "PASSED"});
  AgentRunResult r = start_run(run_config_from_json(run_config(model.url(), service.url())), setup());
  ASSERT_TRUE(r.complete()) << r.failure;
  RunStore store(setup().store, RunStore::Open::existing);
  EXPECT_EQ(store.run(r.run_id).status, RunStatus::finished);
  auto t = store.list_trajectories(r.run_id).at(0);
  EXPECT_EQ(t.status, TrajectoryStatus::stopped_early) << t.stop_reason;
  auto turns = store.turns(t.id);
  ASSERT_EQ(turns.size(), 1u) << "the INFRA_ERROR is no turn of its own";
  EXPECT_EQ(turns[0].status, "PASSED");
  EXPECT_EQ(turns[0].submissions, 2);
  EXPECT_EQ(turns[0].infra_attempts, 1);
  auto kept = store.infra_attempts(t.id);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].turn, 1);
  EXPECT_EQ(kept[0].attempt, 1);
  EXPECT_EQ(kept[0].message, "worker on device 0 died");
  EXPECT_EQ(kept[0].verdict["status"], "INFRA_ERROR");
  EXPECT_EQ(model.calls().size(), 1u) << "one model call: the re-run needs no new answer";
  for (const auto& m : store.messages(t.id)) EXPECT_FALSE(contains(m.content, "INFRA_ERROR")) << m.content;
  EXPECT_EQ(store.turn_rows(t.id).size(), 1u) << "reports count one turn";
}

TEST_F(LifecycleTest, AnInfraErrorThatPersistsFailsTheRunWhichResumesLater) {
  FakeProvider model;
  answer_with_a_kernel(model);
  ScriptedService service({"INFRA_ERROR"});
  std::string run_id;
  try {
    (void)start_run(run_config_from_json(run_config(model.url(), service.url())), setup());
    ADD_FAILURE() << "the run went on through persistent INFRA_ERRORs";
  } catch (const InfraErrorPersists& e) {
    EXPECT_TRUE(contains(e.what(), "INFRA_ERROR 3 time(s) in a row")) << e.what();
    EXPECT_TRUE(contains(e.what(), "worker on device 0 died")) << e.what();
  }
  {
    RunStore store(setup().store, RunStore::Open::existing);
    RunInfo run = store.list_runs().at(0);
    run_id = run.id;
    EXPECT_EQ(run.status, RunStatus::failed);
    EXPECT_TRUE(contains(run.failure, "INFRA_ERROR")) << run.failure;
    auto t = store.list_trajectories(run_id).at(0);
    auto turns = store.turns(t.id);
    ASSERT_EQ(turns.size(), 1u);
    EXPECT_EQ(turns[0].step, TurnStep::candidate_extracted) << "the turn waits to be evaluated again";
    EXPECT_EQ(turns[0].status, "");
    EXPECT_FALSE(turns[0].feedback);
    EXPECT_EQ(store.infra_attempts(t.id).size(), 3u) << "the first evaluation and its 2 re-runs";
    EXPECT_EQ(service.submissions(), 3);
  }
  // The GPU is back: the resumed run evaluates the same candidate again, asks the model nothing new.
  service.set_script({"PASSED"});
  AgentRunResult resumed = resume_run(run_id, setup());
  ASSERT_TRUE(resumed.complete()) << resumed.failure;
  RunStore store(setup().store, RunStore::Open::existing);
  EXPECT_EQ(store.run(run_id).status, RunStatus::finished);
  EXPECT_EQ(store.run(run_id).failure, "");
  auto turns = store.turns(store.list_trajectories(run_id).at(0).id);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].status, "PASSED");
  EXPECT_EQ(turns[0].submissions, 4);
  EXPECT_EQ(model.calls().size(), 1u);
}

// ------------------------------------------------------------------------------------------ feedback

TEST_F(LifecycleTest, TheFeedbackStatesTheTargetAndTheStopRule) {
  FakeProvider model;
  answer_with_a_kernel(model);
  ScriptedService service({"INCORRECT_NUMERICAL", "PASSED"});
  ordered_json cfg = run_config(model.url(), service.url());
  cfg["target_speedup"] = 1.3;
  AgentRunResult r = start_run(run_config_from_json(cfg), setup());
  ASSERT_TRUE(r.complete()) << r.failure;
  RunStore store(setup().store, RunStore::Open::existing);
  auto turns = store.turns(store.list_trajectories(r.run_id).at(0).id);
  ASSERT_EQ(turns.size(), 2u);
  ASSERT_TRUE(turns[0].feedback);
  const std::string& feedback = *turns[0].feedback;
  EXPECT_EQ(feedback.rfind("Verdict: INCORRECT_NUMERICAL", 0), 0u) << "the verdict first: " << feedback;
  EXPECT_TRUE(contains(feedback, "Target: a speedup of at least 1.3× over the baseline library")) << feedback;
  EXPECT_TRUE(contains(feedback, "The trajectory stops when a turn is PASSED with speedup ≥ 1.3×")) << feedback;
  EXPECT_TRUE(contains(feedback, "you have 2 of 3 turns left")) << feedback;
  EXPECT_EQ(feedback, turn_feedback(render_feedback(*turns[0].verdict), run_config_from_json(cfg), 1));
  // What the model's second call carried last is that feedback.
  ASSERT_EQ(model.calls().size(), 2u);
  const ordered_json messages = model.calls()[1].body["messages"];  // a copy: calls() returns a temporary
  EXPECT_EQ(messages.back()["content"], feedback);
  EXPECT_TRUE(contains(protocol_note(run_config_from_json(cfg), 3), "this was the last of your 3 turns"));
}

// ------------------------------------------------------------------------------------------ dry run

TEST_F(LifecycleTest, ADryRunChecksTheConfigEndToEndAndStoresNothing) {
  // No key, no model endpoint, no service: the dry run needs none of them.
  ordered_json cfg = run_config("http://127.0.0.1:1", "http://127.0.0.1:1");
  cfg["model"]["api_key_env"] = "PTXBENCH_TEST_KEY_THAT_IS_NOT_SET";
  cfg["prompt_tags"] = {"params", "contract"};
  cfg["trajectories_per_tag"] = 4;
  std::FILE* out = std::tmpfile();
  dry_run(run_config_from_json(cfg), "cfg.json", setup(), out);
  std::string text = file_text(out);
  std::fclose(out);
  EXPECT_TRUE(contains(text, "Dry run of cfg.json: nothing is stored")) << text;
  EXPECT_TRUE(contains(text, "gemm_n7168_k5120 (workload")) << text;
  EXPECT_TRUE(contains(text, "params, contract")) << text;
  EXPECT_TRUE(contains(text, "trajectories  8 (1 definition × 2 tags × 4 per tag), up to 3 turns each")) << text;
  EXPECT_TRUE(contains(text, "First prompts (tokens counted by")) << text;
  EXPECT_TRUE(contains(text, "gemm_n7168_k5120/contract")) << text;
  // One trajectory per tag went through the loop: wrong, then past the target.
  EXPECT_TRUE(contains(text, "gemm_n7168_k5120/params#0")) << text;
  EXPECT_TRUE(contains(text, "turn 1 INCORRECT_NUMERICAL, turn 2 PASSED (1.5×): stopped_early")) << text;
  EXPECT_FALSE(contains(text, "#1 ")) << "one trajectory per definition and tag: " << text;
  EXPECT_FALSE(fs::exists(setup().store));
  EXPECT_FALSE(fs::exists(dir.path() / "runs"));

  cfg["definitions"] = {"no_such_definition"};
  std::FILE* bad = std::tmpfile();
  EXPECT_THROW(dry_run(run_config_from_json(cfg), "cfg.json", setup(), bad), InputError);
  std::fclose(bad);
}

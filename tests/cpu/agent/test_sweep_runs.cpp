// A run over a workload sweep ("workloads" in the run config): the config reads strictly and round
// trips; each turn's candidate goes to the evaluation service once per workload (idempotency key per
// workload), the turn stores the sweep's aggregate as its verdict (speedup = geometric mean), the
// model sees the per-workload table and the failing workload's details, the task names the
// workloads, and an INFRA_ERROR at one workload re-runs the sweep without spending the turn. The
// service here is a fake whose verdict depends on the workload, which the real fake backend's
// markers cannot do.
#include <gtest/gtest.h>

#include <cmath>

#include "agent/dry_run.h"
#include "agent/policy.h"
#include "agent/run_config.h"
#include "agent/run_preflight.h"
#include "runs/run_store.h"
#include "agent/sweep_evaluation.h"
#include "agent/turn_loop.h"
#include "common/error.h"
#include "verdict/sweep_verdict.h"

using namespace ptxbench;

namespace {

const std::string kGemm = "gemm_n7168_k5120";

bool has(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

ordered_json sweep_config(const ordered_json& workloads) {
  return {{"policy", "expert"},     {"definitions", {kGemm}},      {"workloads", workloads},
          {"prompt_tags", {"params"}}, {"num_turns", 3},           {"target_speedup", 1.2},
          {"infra_error_backoff_s", 0}};
}

// Answers turn n with a kernel whose comment names the turn; the fake service reads it.
class TurnPolicy final : public Policy {
 public:
  [[nodiscard]] std::string name() const override { return "turns"; }
  PolicyAnswer answer(const PolicyRequest& r) override {
    requests.push_back(r);
    return {"```cuda\n#include \"ptxbench_abi.h\"\n// TURN " + std::to_string(r.turn) +
                "\nPTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) { return 0; }\n```\n",
            "", {}};
  }
  std::vector<PolicyRequest> requests;
};

// A service whose verdict depends on the workload: turn 1 is wrong at M=70 only; turn 2 passes
// everywhere at 1.5x (2x at M=8192); the first submission at M=232 of turn 2 ends INFRA_ERROR.
class WorkloadService final : public EvaluationClient {
 public:
  std::string submit(const EvalRequest& request, const std::string& key) override {
    if (auto it = by_key.find(key); it != by_key.end()) return it->second;
    submissions.push_back({request.workload, key});
    const std::string& workload = request.workload;
    std::string label = "M=" + workload.substr(workload.rfind("-m") + 2);
    bool turn1 = has(request.source, "TURN 1");
    Verdict v;
    v.definition = kGemm;
    v.workload_uuid = workload;
    v.workload_label = label;
    v.arch = "sm_90a";
    if (label == "M=232" && !turn1 && !infra_given) {
      infra_given = true;
      v.status = Status::INFRA_ERROR;
      v.message = "worker on device 0 died";
    } else if (turn1 && label == "M=70") {
      v.status = Status::INCORRECT_NUMERICAL;
      v.message = "output C differs from the reference in 12 of 501760 elements";
    } else {
      v.status = Status::PASSED;
      v.message = "correct on every trial";
      v.speedup = turn1 ? 1.0 : label == "M=8192" ? 2.0 : 1.5;
      v.runtime_mechanisms = Mechanisms{true, true, false, false};
      v.target_instruction_correct = true;
    }
    std::string id = "t" + std::to_string(tasks.size() + 1);
    tasks[id] = read_finished_task({{"id", id}, {"state", "done"}, {"status", to_string(v.status)}, {"verdict", v.to_json()}});
    by_key[key] = id;
    return id;
  }
  FinishedEvaluation wait_done(const std::string& id, double) override { return tasks.at(id); }
  bool forgot(const std::string& id) override { return !tasks.count(id); }
  [[nodiscard]] bool fake() const override { return true; }

  struct Submission {
    std::string workload, key;
  };
  std::vector<Submission> submissions;
  std::map<std::string, FinishedEvaluation> tasks;
  std::map<std::string, std::string> by_key;
  bool infra_given = false;
};

}  // namespace

TEST(SweepRunConfig, ReadsAllOrAListAndRoundTrips) {
  RunConfig all = run_config_from_json(sweep_config("all"));
  EXPECT_TRUE(all.workloads.all);
  EXPECT_EQ(run_config_from_json(all.to_json()).to_json(), all.to_json());
  EXPECT_EQ(all.to_json()["workloads"], "all");
  EXPECT_TRUE(has(run_notes(all), "[workloads: all]")) << run_notes(all);

  RunConfig list = run_config_from_json(sweep_config({"M=70", "M=8192"}));
  EXPECT_EQ(list.workloads.items, (std::vector<std::string>{"M=70", "M=8192"}));
  EXPECT_EQ(run_config_from_json(list.to_json()).workloads.items, list.workloads.items);

  RunConfig plain = run_config_from_json({{"policy", "expert"}, {"definitions", {kGemm}}});
  EXPECT_TRUE(plain.workloads.empty());
  EXPECT_FALSE(plain.to_json().contains("workloads")) << "a run without a sweep stores what it always stored";

  auto fails = [](const ordered_json& j, const std::string& fragment) {
    try {
      (void)run_config_from_json(j);
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const InputError& e) {
      EXPECT_TRUE(has(e.what(), fragment)) << e.what();
    }
  };
  ordered_json both = sweep_config("all");
  both["workload"] = "M=70";
  fails(both, "not both");
  fails(sweep_config(3), "workloads");
  fails(sweep_config("all,M=70"), "stands alone");
}

TEST(SweepRunConfig, ThePreflightResolvesTheSweepForEveryDefinition) {
  RunTools tools;
  EXPECT_NO_THROW(check_run_config(tools, run_config_from_json(sweep_config({"M=70", "M=8192"})), PTXBENCH_SOURCE_DIR));
  RunTools again;
  try {
    check_run_config(again, run_config_from_json(sweep_config({"M=70", "M=71"})), PTXBENCH_SOURCE_DIR);
    ADD_FAILURE() << "an unknown workload passed the preflight";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "no workload 'M=71'")) << e.what();
  }
}

TEST(SweepRuns, EachTurnIsEvaluatedAtEveryWorkloadAndStoresTheAggregate) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  PromptBuilder prompts(PTXBENCH_SOURCE_DIR);
  RunConfig config = run_config_from_json(sweep_config("all"));
  RunStore store(":memory:");
  std::string run_id = store.create_run(config.to_json(), "turns", run_notes(config));
  TurnPolicy policy;
  WorkloadService service;
  TrajectoryRunner runner(store, policy, service, config, catalog, prompts, run_id);
  int64_t id = store.ensure_trajectory(run_id, {kGemm, "", "params", 0});
  runner.run(id);

  const std::size_t n = catalog.workloads(kGemm).size();
  ASSERT_EQ(n, 5u);
  TrajectoryInfo t = store.trajectory(id);
  EXPECT_EQ(t.status, TrajectoryStatus::stopped_early) << t.stop_reason;
  std::vector<TurnRecord> turns = store.turns(id);
  ASSERT_EQ(turns.size(), 2u);

  // Turn 1: wrong at M=70 only; the model sees the table and M=70's details.
  EXPECT_EQ(turns[0].status, "INCORRECT_NUMERICAL");
  EXPECT_FALSE(turns[0].speedup);
  ASSERT_TRUE(turns[0].verdict);
  std::optional<SweepVerdict> first = sweep_of(*turns[0].verdict);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->entries.size(), n);
  EXPECT_EQ(first->passed, n - 1);
  ASSERT_TRUE(turns[0].feedback);
  const std::string& feedback = *turns[0].feedback;
  EXPECT_TRUE(has(feedback, "INCORRECT_NUMERICAL at workload M=70")) << feedback;
  EXPECT_TRUE(has(feedback, sweep_table_header())) << feedback;
  for (const auto& w : catalog.workloads(kGemm)) EXPECT_TRUE(has(feedback, w.label(catalog.definition(kGemm)))) << feedback;
  EXPECT_TRUE(has(feedback, "Details of workload M=70")) << feedback;
  EXPECT_TRUE(has(feedback, "geometric-mean speedup of at least 1.2")) << "the protocol note names the sweep's speedup";

  // Turn 2: an INFRA_ERROR at M=232 re-ran the sweep; then PASSED everywhere, geometric mean stored.
  EXPECT_EQ(turns[1].status, "PASSED");
  ASSERT_TRUE(turns[1].speedup);
  EXPECT_NEAR(*turns[1].speedup, std::pow(2.0 * 1.5 * 1.5 * 1.5 * 1.5, 1.0 / 5), 1e-9);
  EXPECT_TRUE(turns[1].target_instruction);
  ASSERT_TRUE(t.best_speedup);
  EXPECT_NEAR(*t.best_speedup, *turns[1].speedup, 1e-12);
  std::vector<InfraAttempt> infra = store.infra_attempts(id);
  ASSERT_EQ(infra.size(), 1u);
  EXPECT_TRUE(has(infra[0].message, "INFRA_ERROR at workload M=232")) << infra[0].message;

  // One submission per workload, in sweep order, each with its own idempotency key; the re-run
  // after the INFRA_ERROR went under fresh keys.
  ASSERT_EQ(service.submissions.size(), 3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(service.submissions[i].workload, catalog.workloads(kGemm)[i].uuid);
    EXPECT_TRUE(service.submissions[i].key.ends_with(":w" + std::to_string(i))) << service.submissions[i].key;
    EXPECT_TRUE(has(service.submissions[2 * n + i].key, ":infra1:w")) << service.submissions[2 * n + i].key;
  }
  ASSERT_TRUE(turns[1].task_id);
  EXPECT_TRUE(turns[1].task_id->starts_with(std::string(kSweepTaskPrefix) + kGemm + ":")) << *turns[1].task_id;

  // The task told the model where its kernel runs.
  ASSERT_FALSE(policy.requests.empty());
  const std::string& task = policy.requests[0].conversation.front().content;
  EXPECT_TRUE(has(task, "evaluated at each of these 5 workloads")) << task;
  EXPECT_TRUE(has(task, "M=2379")) << task;
}

// A resumed turn re-attaches to its tasks: the same keys give the same tasks back, and a sweep id
// read from the store waits for the same workloads.
TEST(SweepRuns, TheSweepTaskIdRoundTripsThroughTheStore) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  WorkloadService service;
  auto sweep = make_sweep_evaluation(service, catalog, parse_workload_selection("M=8192,M=70"));
  EvalRequest request;
  request.definition = kGemm;
  request.source = "// TURN 1";
  std::string id = sweep->submit(request, "run:1:1");
  EXPECT_EQ(sweep->submit(request, "run:1:1"), id);
  EXPECT_EQ(service.submissions.size(), 2u);
  FinishedEvaluation task = sweep->wait_done(id, 60);
  EXPECT_EQ(task.id, id);
  EXPECT_EQ(task.status, Status::INCORRECT_NUMERICAL);
  ASSERT_TRUE(task.verdict);
  Verdict v = *task.verdict;
  ASSERT_TRUE(sweep_of(v));
  EXPECT_EQ(sweep_of(v)->entries[1].workload_label, "M=70");
  EXPECT_FALSE(sweep->forgot(id));
  service.tasks.erase("t2");
  EXPECT_TRUE(sweep->forgot(id)) << "one forgotten workload makes the loop submit the sweep again";
  EXPECT_THROW((void)sweep->wait_done("t1", 60), Error) << "not a sweep's task id";
}

// `run --dry-run` names the sweep and drives a trajectory through it with the fake backend (every
// workload gets the marker's verdict, so the sweep's verdict is that verdict).
TEST(SweepRuns, ADryRunShowsTheSweepAndGoesThroughIt) {
  AgentRunSetup setup;
  setup.root = PTXBENCH_SOURCE_DIR;
  std::FILE* out = std::tmpfile();
  dry_run(run_config_from_json(sweep_config({"M=70", "M=8192"})), "sweep.json", setup, out);
  std::rewind(out);
  std::string text;
  for (int ch; (ch = std::fgetc(out)) != EOF;) text += static_cast<char>(ch);
  std::fclose(out);
  EXPECT_TRUE(has(text, kGemm + " (sweep of 2 workloads: M=70, M=8192)")) << text;
  EXPECT_TRUE(has(text, "turn 1 INCORRECT_NUMERICAL, turn 2 PASSED (1.5×): stopped_early")) << text;
}

// The agent end to end on the CPU: real model client against a fake OpenAI-compatible provider
// started here, real run store, a real `ptxbench serve` with fake GPUs whose verdicts follow markers
// in the candidate (the stored-verdict sequence that stands in for a GPU), the turn loop, the stop
// rule, both context policies, the built-in policies, and a kill -9 mid-run followed by --resume.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <regex>
#include <thread>

#include "agent/agent_run.h"
#include "agent/code_extract.h"
#include "agent/policy.h"
#include "agent/run_config.h"
#include "runs/run_store.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "service/http_server.h"

using namespace ptxbench;

namespace {

// What the fake model answers at turn n (1-based) of any trajectory.
std::string scripted_answer(int turn) {
  auto kernel = [](const std::string& marker) {
    return "Here is the kernel.\n\n```cuda\n#include \"ptxbench_abi.h\"\n// " + marker +
           "\nextern \"C\" int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) { return 0; }\n```\n";
  };
  switch (turn) {
    case 1: return "I would tile the problem first; code follows next time.";  // no code block
    case 2: return kernel("PTXB_FAKE_STATUS=COMPILE_ERROR PTXB_FAKE_SECONDS=0.02");
    case 3: return kernel("PTXB_FAKE_STATUS=INCORRECT_NUMERICAL PTXB_FAKE_SECONDS=0.02");
    default: return kernel("PTXB_FAKE_SPEEDUP=1.5 PTXB_FAKE_SECONDS=0.02");
  }
}

// An OpenAI-compatible chat completions endpoint whose answer depends only on how many assistant
// messages the request carries (the turn), so interrupted and uninterrupted runs see the same model.
class FakeModel {
 public:
  explicit FakeModel(double delay_s = 0) : m_delay(delay_s), m_server(options(), [this](const HttpRequest& r) { return handle(r); }) {
    m_server.start();
  }
  [[nodiscard]] std::string url() const { return "http://" + m_server.address() + "/v1"; }
  [[nodiscard]] std::vector<ordered_json> bodies() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_bodies;
  }

 private:
  static HttpServerOptions options() {
    HttpServerOptions o;
    o.threads = 16;
    return o;
  }
  HttpResponse handle(const HttpRequest& r) {
    ordered_json body = ordered_json::parse(r.body);
    int answered = 0;
    for (const auto& m : body["messages"]) answered += m["role"] == "assistant";
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_bodies.push_back(body);
    }
    if (m_delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(m_delay));
    ordered_json out = {{"id", "fake-" + std::to_string(answered)},
                        {"object", "chat.completion"},
                        {"model", "fake-model"},
                        {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", scripted_answer(answered + 1)}}},
                                      {"finish_reason", "stop"}}}},
                        {"usage", {{"prompt_tokens", 1000 + 100 * answered}, {"completion_tokens", 50}, {"total_tokens", 1050 + 100 * answered}}}};
    return HttpResponse::json(200, out.dump());
  }
  double m_delay;
  mutable std::mutex m_mutex;
  std::vector<ordered_json> m_bodies;
  HttpServer m_server;
};

ordered_json model_run_config(const std::string& url, const std::string& context = "full", int trajectories = 2) {
  return {{"policy", "model"},
          {"model", {{"provider", "openai"}, {"base_url", url}, {"model", "fake-model"}, {"api_key_env", ""}, {"max_tokens", 4096}}},
          {"definitions", {"gemm_n7168_k5120"}},
          {"prompt_tags", {"params"}},
          {"trajectories_per_tag", trajectories},
          {"num_turns", 6},
          {"target_speedup", 1.2},
          {"concurrency", 4},
          {"context", context},
          {"service", "local"}};
}

struct AgentTest : ::testing::Test {
  TempDir dir;
  AgentRunSetup setup() const {
    AgentRunSetup s;
    s.root = PTXBENCH_SOURCE_DIR;
    s.store = (dir.path() / "runs" / "runs.db").string();
    s.runs_dir = dir.path() / "runs";
    s.ptxbench = executable_dir() / "ptxbench";
    s.local_service_args = {"--fake-gpus", "2"};
    return s;
  }
};

std::vector<std::string> statuses(const RunStore& store, int64_t trajectory) {
  std::vector<std::string> out;
  for (const auto& t : store.turns(trajectory)) out.push_back(t.status);
  return out;
}

}  // namespace

TEST(CodeExtraction, TakesTheLastClosedBlockThatDefinesPtxbRun) {
  std::string two = "```cuda\nextern \"C\" int ptxb_run() { return 1; }\n```\nbetter:\n```cpp\nextern \"C\" int ptxb_run() { return 2; }\n```\n"
                    "usage:\n```bash\nnvcc x.cu\n```\n";
  Extraction e = extract_candidate(two);
  ASSERT_TRUE(e.source);
  EXPECT_NE(e.source->find("return 2"), std::string::npos);
  EXPECT_EQ(e.blocks_seen, 3);
  Extraction truncated = extract_candidate("```cuda\nint ptxb_run() { return 1; }\n```\n```cuda\nint ptxb_run() { for (;;");
  ASSERT_TRUE(truncated.source) << "a cut-off last block falls back to the closed one";
  EXPECT_NE(truncated.source->find("return 1"), std::string::npos);
  Extraction only_cut = extract_candidate("```cuda\nextern \"C\" int ptxb_run(");
  EXPECT_FALSE(only_cut.source);
  EXPECT_NE(only_cut.error.find("not closed"), std::string::npos);
  Extraction none = extract_candidate("Let me think about tiling.");
  EXPECT_FALSE(none.source);
  EXPECT_NE(none.error.find("No code block"), std::string::npos);
  Extraction no_entry = extract_candidate("```cuda\n__global__ void k() {}\n```");
  EXPECT_FALSE(no_entry.source);
  EXPECT_NE(no_entry.error.find("defines ptxb_run"), std::string::npos);
  Extraction tilde = extract_candidate("~~~~cu\nint ptxb_run() {}\n```\nstill inside\n~~~~\n");
  ASSERT_TRUE(tilde.source);
  EXPECT_NE(tilde.source->find("still inside"), std::string::npos);
}

TEST(RunConfigTest, StrictWithClearErrorsAndRoundTrips) {
  auto fails = [](const ordered_json& j, const std::string& fragment) {
    try {
      (void)run_config_from_json(j);
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  fails({{"policy", "expert"}}, "definitions");
  fails({{"policy", "oracle"}, {"definitions", {"g"}}}, "expected model, expert or replay");
  fails({{"definitions", {"g"}}}, "model: required");
  fails({{"policy", "expert"}, {"definitions", {"g"}}, {"num_turns", 0}}, "num_turns");
  fails({{"policy", "expert"}, {"definitions", {"g"}}, {"colour", 1}}, "colour");
  fails({{"policy", "expert"}, {"definitions", {"g"}}, {"context", "some"}}, "full or latest");
  fails({{"policy", "replay"}, {"definitions", {"g"}}}, "replay");
  RunConfig c = run_config_from_json(model_run_config("http://127.0.0.1:9/v1", "latest"));
  RunConfig again = run_config_from_json(c.to_json());
  EXPECT_EQ(again.to_json(), c.to_json());
  EXPECT_EQ(again.context, ContextPolicy::latest);
}

// Figure 4's protocol from a config: a run over a named set (the held-out GQA classes); the stored
// form keeps the expansion, so a later change of problem_sets.json never changes a stored run.
TEST(RunConfigTest, AProblemSetExpandsIntoItsDefinitions) {
  RunConfig c = run_config_from_json({{"policy", "expert"}, {"problem_set", "heldout-gqa"}});
  EXPECT_EQ(c.problem_set, "heldout-gqa");
  EXPECT_EQ(c.definitions, (std::vector<std::string>{"gqa_paged_decode_h24_kv8_d128_ps1", "gqa_paged_prefill_causal_h24_kv8_d128_ps1",
                                                     "gqa_ragged_prefill_causal_h32_kv4_d128"}));
  ordered_json stored = c.to_json();
  EXPECT_EQ(stored["problem_set"], "heldout-gqa");
  stored["definitions"] = {"gqa_paged_decode_h24_kv8_d128_ps1"};  // as stored: kept, not re-expanded
  EXPECT_EQ(run_config_from_json(stored).definitions.size(), 1u);
  try {
    (void)run_config_from_json({{"policy", "expert"}, {"problem_set", "heldout_gqa"}});
    ADD_FAILURE() << "an unknown set was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no set 'heldout_gqa' in"), std::string::npos) << e.what();
  }
}

TEST_F(AgentTest, MultiTurnRunStoresEveryTurnAndStopsAtTheTargetSpeedup) {
  FakeModel model;
  AgentRunResult r = start_run(run_config_from_json(model_run_config(model.url())), setup());
  ASSERT_TRUE(r.complete());
  RunStore store(setup().store, RunStore::Open::existing);
  auto trajectories = store.list_trajectories(r.run_id);
  ASSERT_EQ(trajectories.size(), 2u);
  for (const auto& t : trajectories) {
    EXPECT_EQ(t.status, TrajectoryStatus::stopped_early) << t.stop_reason;
    EXPECT_EQ(statuses(store, t.id), (std::vector<std::string>{kExtractionErrorStatus, "COMPILE_ERROR", "INCORRECT_NUMERICAL", "PASSED"}));
    ASSERT_TRUE(t.best_speedup);
    EXPECT_DOUBLE_EQ(*t.best_speedup, 1.5);
    auto turns = store.turns(t.id);
    EXPECT_NE(turns[0].feedback->find("No code block"), std::string::npos);
    EXPECT_EQ(turns[2].usage->prompt_tokens, 1200);
    EXPECT_EQ(turns[2].usage->completion_tokens, 50);
    EXPECT_TRUE(fs::exists(setup().runs_dir / r.run_id));
  }
  // Full context: the 4th call carries the task and three answer/feedback pairs.
  int longest = 0;
  for (const auto& b : model.bodies()) longest = std::max(longest, static_cast<int>(b["messages"].size()));
  EXPECT_EQ(longest, 1 + 1 + 6) << "system + task + 3 pairs";
  EXPECT_EQ(model.bodies().size(), 8u) << "4 turns × 2 trajectories, nothing repeated";
}

TEST_F(AgentTest, LatestPairContextSendsOnlyTheTaskAndTheLastExchange) {
  FakeModel model;
  // With only the last pair the fake model cannot tell turns apart past 2: it sees one answer.
  ordered_json cfg = model_run_config(model.url(), "latest", 1);
  cfg["num_turns"] = 3;
  AgentRunResult r = start_run(run_config_from_json(cfg), setup());
  ASSERT_TRUE(r.complete());
  for (const auto& b : model.bodies()) EXPECT_LE(b["messages"].size(), 1u + 1u + 2u);
  ASSERT_EQ(model.bodies().size(), 3u);
  EXPECT_EQ(model.bodies()[2]["messages"].size(), 4u);
}

TEST_F(AgentTest, ExpertAndReplayPoliciesNeedNoKey) {
  ordered_json cfg = {{"policy", "expert"}, {"definitions", {"gemm_n7168_k5120"}}, {"prompt_tags", {"params"}},
                      {"trajectories_per_tag", 1}, {"num_turns", 2}, {"service", "local"}};
  AgentRunResult expert = start_run(run_config_from_json(cfg), setup());
  ASSERT_TRUE(expert.complete());
  RunStore store(setup().store, RunStore::Open::existing);
  auto t = store.list_trajectories(expert.run_id).at(0);
  auto turns = store.turns(t.id);
  ASSERT_EQ(turns.size(), 2u) << "the fake verdict has no speedup, so no early stop";
  EXPECT_EQ(*turns[0].candidate_source, find_expert_source(PTXBENCH_SOURCE_DIR, "gemm_n7168_k5120").source);
  EXPECT_EQ(turns[0].status, "PASSED");

  ordered_json replay = cfg;
  replay["policy"] = "replay";
  replay["replay"] = {{"store", setup().store}, {"run", expert.run_id}};
  AgentRunResult again = start_run(run_config_from_json(replay), setup());
  ASSERT_TRUE(again.complete());
  auto rt = store.list_trajectories(again.run_id).at(0);
  auto rturns = store.turns(rt.id);
  ASSERT_EQ(rturns.size(), 2u);
  EXPECT_EQ(*rturns[1].answer, *turns[1].answer);
  EXPECT_THROW(find_expert_source(PTXBENCH_SOURCE_DIR, "no_such_definition"), InputError);
}

// An expert is a file named for its definition, or a case of a pack's expert suite (the causal
// forward is the forward expert with its switch on), before any fixture.
TEST(ExpertSources, ThePacksExpertsComeFirstAndAVariantIsAnEditOfOne) {
  ExpertSource fwd = find_expert_source(PTXBENCH_SOURCE_DIR, "mha_with_lse_d128");
  EXPECT_EQ(fwd.origin, "knowledge/hopper/experts/mha_with_lse_d128.cu");
  EXPECT_NE(fwd.source.find("constexpr bool kCausal = false;"), std::string::npos);
  ExpertSource causal = find_expert_source(PTXBENCH_SOURCE_DIR, "mha_with_lse_d128_causal");
  EXPECT_EQ(causal.origin, "knowledge/hopper/experts/mha_with_lse_d128_causal_suite.json:expert_mha_with_lse_d128_causal");
  EXPECT_NE(causal.source.find("constexpr bool kCausal = true;"), std::string::npos);
  EXPECT_NE(causal.source.find("wgmma"), std::string::npos);
  EXPECT_EQ(find_expert_source(PTXBENCH_SOURCE_DIR, "mha_bwd_d128").origin, "knowledge/hopper/experts/mha_bwd_d128.cu");
  ExpertSource bwd_causal = find_expert_source(PTXBENCH_SOURCE_DIR, "mha_bwd_d128_causal");
  EXPECT_EQ(bwd_causal.origin, "knowledge/hopper/experts/mha_bwd_d128_causal_suite.json:expert_mha_bwd_d128_causal");
  EXPECT_NE(bwd_causal.source.find("constexpr bool kCausal = true;"), std::string::npos);
  // The held-out GQA classes have no expert: the expert policy answers their SIMT fixtures.
  for (const char* d : {"gqa_paged_decode_h24_kv8_d128_ps1", "gqa_paged_prefill_causal_h24_kv8_d128_ps1",
                        "gqa_ragged_prefill_causal_h32_kv4_d128"})
    EXPECT_EQ(find_expert_source(PTXBENCH_SOURCE_DIR, d).origin.rfind("tests/fixtures/gqa/", 0), 0u) << d;
}

TEST_F(AgentTest, KilledRunResumesWithNoLostAndNoRepeatedTurn) {
  FakeModel model(0.15);
  ordered_json cfg = model_run_config(model.url(), "full", 3);
  fs::path cfg_file = dir.path() / "run.json";
  write_file_atomic(cfg_file, cfg.dump());
  AgentRunSetup s = setup();
  ProcessSpec spec;
  spec.argv = {s.ptxbench.string(), "run", "--config", cfg_file.string(), "--store", s.store, "--runs-dir", s.runs_dir.string(),
               "--local-service-arg=--fake-gpus", "--local-service-arg=2"};
  spec.env_overrides = {std::string("PTXBENCH_HOME=") + PTXBENCH_SOURCE_DIR};
  ChildProcess child(spec);
  // Kill it once a few turns are stored, somewhere in the middle of others.
  std::string run_id;
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!fs::exists(s.store)) continue;
    try {
      RunStore peek(s.store, RunStore::Open::existing);
      auto runs = peek.list_runs();
      if (runs.empty()) continue;
      run_id = runs[0].id;
      int complete = 0;
      for (const auto& t : peek.list_trajectories(run_id)) complete += static_cast<int>(t.turns_completed);
      if (complete >= 4) break;
    } catch (const std::exception&) {
    }
  }
  ASSERT_FALSE(run_id.empty()) << child.stderr_capture().text;
  ::kill(-child.pid(), SIGKILL);
  child.wait_for(10);
  {
    RunStore peek(s.store, RunStore::Open::existing);
    int complete = 0;
    for (const auto& t : peek.list_trajectories(run_id)) complete += static_cast<int>(t.turns_completed);
    ASSERT_LT(complete, 12) << "the run finished before the kill: nothing to resume";
    // Its process is gone: the run is no longer running but crashed, for every reader.
    EXPECT_EQ(peek.run(run_id).status, RunStatus::crashed);
  }
  AgentRunResult resumed = resume_run(run_id, s);
  ASSERT_TRUE(resumed.complete());
  {
    RunStore peek(s.store, RunStore::Open::existing);
    EXPECT_EQ(peek.run(run_id).status, RunStatus::finished);
    EXPECT_FALSE(peek.run(run_id).holder) << "a finished run is held by nobody";
  }

  // The same run without interruption, for comparison.
  FakeModel model2;
  AgentRunResult whole = start_run(run_config_from_json(model_run_config(model2.url(), "full", 3)), s);
  RunStore store(s.store, RunStore::Open::existing);
  auto a = store.list_trajectories(run_id), b = store.list_trajectories(whole.run_id);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(statuses(store, a[i].id), statuses(store, b[i].id));
    auto ma = store.messages(a[i].id), mb = store.messages(b[i].id);
    ASSERT_EQ(ma.size(), mb.size());
    for (std::size_t k = 0; k < ma.size(); ++k) {
      EXPECT_EQ(ma[k].role, mb[k].role);
      EXPECT_EQ(ma[k].turn, mb[k].turn);
      // Which fake GPU evaluated a turn may differ; nothing else may.
      auto norm = [](std::string s) { return std::regex_replace(s, std::regex("on device [0-9]+"), "on device N"); };
      if (ma[k].role != "user" || ma[k].turn != 0) {
        EXPECT_EQ(norm(ma[k].content), norm(mb[k].content)) << "message " << k;
      }
    }
    for (const auto& t : store.turns(a[i].id)) EXPECT_EQ(t.submissions, t.status == kExtractionErrorStatus ? 0 : 1);
  }
}

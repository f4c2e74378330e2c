// Issue 20 on the GPU: one external-agent trajectory end to end against the real evaluation
// service on the H200, and the refinement run it is compared with. opencode (from npm,
// scripts/install_agent_clis.sh) is driven by a scripted model behind `ptxbench proxy`; through
// `ptxbench mcp` it submits a wrong kernel, then the pack's expert GEMM. `ptxbench run` (our
// refinement loop) gets the same two kernels from the same kind of scripted model. Both runs must
// be stored with their real verdicts and tokens, and `ptxbench report AGENT --against REFINEMENT`
// must compare them. With $PTXBENCH_GPU_TEST_OUT set, the transcript, the stored turns and the
// comparison are copied there (the results file quotes them).
#include <gtest/gtest.h>

#include <cstdlib>

#include "runs/run_store.h"
#include "coding_agent/agent_cli.h"
#include "coding_agent/agent_runner.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "gpu_test_support.h"
#include "helpers/fake_provider.h"
#include "service/local_service.h"

using namespace ptxbench;
using namespace ptxbench::coding_agent;
using fakes::FakeCall;
using fakes::FakeProvider;
using fakes::FakeTurn;

namespace {

constexpr const char* kDefinition = "gemm_n7168_k5120";

// Writes zeros over C: compiles, runs, and is wrong everywhere (INCORRECT_NUMERICAL on the GPU).
const std::string kWrong = R"(#include "ptxbench_abi.h"
#include <cuda_bf16.h>
__global__ void zero_c(__nv_bfloat16* c, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) c[i] = __float2bfloat16(0.f);
}
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  if (nargs != 3) return cudaErrorInvalidValue;
  zero_c<<<1024, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(args[2].data), args[2].shape[0] * args[2].shape[1]);
  return static_cast<int>(cudaGetLastError());
}
)";

std::string right_kernel() { return read_file(data_root() / "knowledge/hopper/experts/gemm_n7168_k5120.cu"); }

fs::path install_dir() {
  if (const char* d = std::getenv("PTXBENCH_AGENT_CLI_DIR"); d && *d) return d;
  return agent_install_dir(PTXBENCH_SOURCE_DIR);
}

// The external agent's model: with our evaluate tool offered, it submits the wrong kernel, then the
// right one, then ends with a summary; a call without tools (opencode's session title) gets a line.
FakeTurn scripted_agent(const FakeCall& call, const std::string& right) {
  bool offered = false;
  for (const std::string& name : call.tool_names()) offered = offered || name == "ptxbench_evaluate";
  FakeTurn t;
  if (!offered) {
    t.text = "GEMM kernel";
    t.usage = {300, 5, 0, 0};
    return t;
  }
  const int results = call.tool_result_count();
  if (results >= 2) {
    t.text = "Done: the expert GEMM passed.";
    t.usage = {9000, 30, 0, 8000};
    return t;
  }
  t.text = results == 0 ? "A first kernel." : "Now the TMA + wgmma kernel.";
  t.tool_calls = {{"", "ptxbench_evaluate", ordered_json{{"source", results == 0 ? kWrong : right}}.dump(), ""}};
  t.usage = results == 0 ? fakes::FakeUsage{4000, 900, 300, 0} : fakes::FakeUsage{6000, 4200, 500, 3900};
  return t;
}

void keep(const fs::path& from, const std::string& name) {
  const char* out = std::getenv("PTXBENCH_GPU_TEST_OUT");
  if (!out || !*out || !fs::exists(from)) return;
  fs::create_directories(out);
  fs::copy_file(from, fs::path(out) / name, fs::copy_options::overwrite_existing);
}

std::string turn_line(const TurnRecord& r) {
  return std::to_string(r.turn) + " " + r.status + " tokens " + (r.usage ? std::to_string(r.usage->prompt_tokens) + "+" +
                                                                          std::to_string(r.usage->completion_tokens)
                                                                    : std::string("-"));
}

}  // namespace

class AgentOnGpu : public ptxbench::testing::GpuTest {};

TEST_F(AgentOnGpu, OpencodeTrajectoryAgainstTheRealServiceComparedWithARefinementRun) {
  auto cli = make_agent_cli("opencode");
  const fs::path exe = installed_executable(*cli, install_dir());
  if (exe.empty()) GTEST_SKIP() << "opencode-ai is not installed under " << install_dir().string();
  TempDir dir("ptxbench-agent-gpu");
  const fs::path store_path = dir.path() / "runs.db";
  LocalService service(executable_dir() / "ptxbench", dir.path() / "service.db", {"--gpus", "1"}, "127.0.0.1:0",
                       {std::string("PTXBENCH_HOME=") + PTXBENCH_SOURCE_DIR}, 60);
  const std::string right = right_kernel();

  // The external agent: budget 2, the same prompt tag as the refinement run.
  FakeProvider agent_model;
  agent_model.set_responder([&](const FakeCall& c) { return scripted_agent(c, right); });
  ordered_json j = {{"agent", {{"cli", "opencode"}, {"executable", exe.string()}, {"model", "scripted-model"}}},
                    {"upstream", {{"openai_base_url", agent_model.url() + "/v1"}}},
                    {"definitions", {kDefinition}},
                    {"prompt_tags", {"contract"}},
                    {"budget", 2},
                    {"wall_time_s", 400},
                    {"eval_timeout_s", 300},
                    {"service", service.url()},
                    {"store", store_path.string()},
                    {"output_dir", (dir.path() / "agents").string()}};
  AgentRunnerHooks hooks;
  hooks.ptxbench = executable_dir() / "ptxbench";
  std::string log;
  hooks.log = [&log](const std::string& line) { log += line + "\n"; };
  AgentRunResult agent = AgentRunner(agent_run_config_from_json(j), hooks).run();
  ASSERT_EQ(agent.attempts.size(), 1u) << log;
  const AgentAttempt& a = agent.attempts[0];
  keep(a.dir / "transcript.jsonl", "agent_transcript.jsonl");
  SCOPED_TRACE("runner log:\n" + log + "\nstderr:\n" + read_file(a.dir / "stderr.log").substr(0, 3000));
  EXPECT_FALSE(a.timed_out);
  EXPECT_EQ(a.transcript.evaluate_calls, 2);

  // Our refinement loop with the same two kernels, from a scripted model of the same name.
  FakeProvider refine_model;
  for (const std::string& k : {kWrong, right}) {
    FakeTurn t;
    t.text = "```cuda\n" + k + "```\n";
    t.usage = {5000, 3000, 0, 0};
    refine_model.push_turn(t);
  }
  ordered_json rc = {{"name", "refinement with the scripted model (issue 20 on the H200)"},
                     {"policy", "model"},
                     {"model", {{"provider", "openai"}, {"base_url", refine_model.url() + "/v1"}, {"model", "scripted-model"},
                                {"api_key_env", ""}, {"max_tokens", 8192}}},
                     {"definitions", {kDefinition}},
                     {"prompt_tags", {"contract"}},
                     {"trajectories_per_tag", 1},
                     {"num_turns", 2},
                     {"concurrency", 1},
                     {"service", service.url()}};
  write_file_atomic(dir.path() / "refine.json", rc.dump(2));
  auto ptxbench = [&](std::vector<std::string> args, double timeout_s) {
    ProcessSpec p;
    p.argv = {(executable_dir() / "ptxbench").string()};
    p.argv.insert(p.argv.end(), args.begin(), args.end());
    p.env_overrides = {"PTXBENCH_HOME=" + data_root().string()};
    return run_process(p, timeout_s);
  };
  ProcessResult run = ptxbench({"run", "--config", (dir.path() / "refine.json").string(), "--store", store_path.string(),
                                "--runs-dir", (dir.path() / "runs").string()},
                               600);
  EXPECT_TRUE(run.status.success()) << run.out.text << run.err.text;

  // Both runs stored with real verdicts: wrong, then PASSED with the mechanisms executed.
  RunStore store(store_path.string(), RunStore::Open::existing);
  std::string refine_id;
  for (const RunInfo& r : store.list_runs())
    if (r.id != agent.run_id) refine_id = r.id;
  ASSERT_FALSE(refine_id.empty());
  std::string stored_turns;
  for (const std::string& id : {agent.run_id, refine_id}) {
    for (const TrajectoryInfo& t : store.list_trajectories(id)) {
      std::vector<TurnRecord> turns = store.turns(t.id);
      ASSERT_EQ(turns.size(), 2u) << id;
      EXPECT_EQ(turns[0].status, "INCORRECT_NUMERICAL") << id;
      EXPECT_EQ(turns[1].status, "PASSED") << id;
      ASSERT_TRUE(turns[1].verdict) << id;
      EXPECT_TRUE(turns[1].verdict->target_instruction_correct) << id;
      ASSERT_TRUE(turns[1].usage) << id;
      EXPECT_GT(turns[1].usage->completion_tokens, 0) << id;
      for (const TurnRecord& r : turns) stored_turns += id + " " + turn_line(r) + "\n";
    }
  }
  write_file_atomic(dir.path() / "stored_turns.txt", stored_turns);
  keep(dir.path() / "stored_turns.txt", "stored_turns.txt");

  // The comparison (Table 3 layout and Figure 14) reads both.
  ProcessResult cmp = ptxbench({"report", agent.run_id, "--against", refine_id, "--store", store_path.string(), "--html",
                                (dir.path() / "comparison.html").string()},
                               120);
  EXPECT_TRUE(cmp.status.success()) << cmp.err.text;
  EXPECT_NE(cmp.out.text.find(kDefinition), std::string::npos) << cmp.out.text;
  write_file_atomic(dir.path() / "comparison.txt", cmp.out.text + cmp.err.text);
  keep(dir.path() / "comparison.txt", "comparison.txt");
  keep(dir.path() / "comparison.html", "comparison.html");
  keep(store_path, "runs.db");
}

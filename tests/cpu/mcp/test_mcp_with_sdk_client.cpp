// `ptxbench mcp` driven by a real MCP client: the official TypeScript SDK's Client and
// StdioClientTransport (tests/helpers/mcp_client.mjs; scripts/install_mcp_client.sh installs the
// pinned SDK), against a real `ptxbench serve --fake-gpus`: version negotiation, the tool schemas
// (the SDK checks every structuredContent against its outputSchema), each tool, the budget refusal,
// bad arguments, an unknown tool; then the run store afterwards. Skips without node or the SDK.
// Also the command's own refusals before it serves (no node needed).
#include <gtest/gtest.h>

#include "runs/run_store.h"
#include "common/cuda_tools.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/subprocess.h"
#include "mcp/mcp_server.h"
#include "mcp/trajectory_session.h"
#include "service/local_service.h"

using namespace ptxbench;

namespace {

const fs::path kRoot = PTXBENCH_SOURCE_DIR;
const fs::path kInstall = kRoot / "third_party/mcp";
constexpr const char* kDefinition = "gemm_n7168_k5120";

std::string kernel(const std::string& markers) {
  return "#include \"ptxbench_abi.h\"\n// " + markers +
         "\nextern \"C\" int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) { return 0; }\n";
}

const char* kGoodKernel = R"(#include "ptxbench_abi.h"
__global__ void scale(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= 2.0f;
}
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  int n = (int)args[0].shape[0];
  scale<<<(n + 255) / 256, 256, 0, stream>>>((float*)args[0].data, n);
  return (int)cudaGetLastError();
}
)";

bool contains(const ordered_json& text, const std::string& needle) {
  return text.is_string() && text.get<std::string>().find(needle) != std::string::npos;
}

std::string env_home() { return "PTXBENCH_HOME=" + data_root().string(); }

}  // namespace

TEST(McpWithSdkClient, TheOfficialTypeScriptClientUsesEveryToolAndIsRefusedPastTheBudget) {
  std::string node = find_on_path("node");
  if (node.empty()) GTEST_SKIP() << "node is not on PATH (scripts/install_mcp_client.sh installs it)";
  if (!fs::exists(kInstall / "node_modules/@modelcontextprotocol/sdk/package.json"))
    GTEST_SKIP() << "the MCP TypeScript SDK is not installed: run scripts/install_mcp_client.sh";
  TempDir dir("ptxbench-mcp-sdk");
  LocalService service(executable_dir() / "ptxbench", dir.path() / "service.db", {"--fake-gpus", "1"});
  const fs::path store = dir.path() / "runs.db";
  const int budget = 3;
  const std::vector<std::string> sources = {kernel("PTXB_FAKE_STATUS=COMPILE_ERROR PTXB_FAKE_SECONDS=0.02"),
                                            kernel("PTXB_FAKE_STATUS=INCORRECT_NUMERICAL PTXB_FAKE_SECONDS=0.02"),
                                            kernel("PTXB_FAKE_SPEEDUP=1.5 PTXB_FAKE_SECONDS=0.02"),
                                            kernel("PTXB_FAKE_SPEEDUP=9 one too many")};
  const fs::path plan = dir.path() / "plan.json";
  write_file_atomic(plan, ordered_json{{"definition", kDefinition}, {"compile_source", kGoodKernel}, {"sources", sources}}.dump());

  ProcessSpec spec;
  spec.argv = {node,
               (kRoot / "tests/helpers/mcp_client.mjs").string(),
               kInstall.string(),
               plan.string(),
               (executable_dir() / "ptxbench").string(),
               "mcp",
               "--definition",
               kDefinition,
               "--store",
               store.string(),
               "--service",
               service.url(),
               "--budget",
               std::to_string(budget)};
  spec.env_overrides = {env_home(), "PTXBENCH_CACHE_DIR=" + (dir.path() / "cache").string()};
  ProcessResult r = run_process(spec, 300);
  ASSERT_FALSE(r.timed_out) << r.err.text;
  ASSERT_TRUE(r.status.success()) << r.status.describe() << "\nstdout: " << r.out.text << "\nstderr: " << r.err.text;
  ordered_json s = ordered_json::parse(r.out.text);
  SCOPED_TRACE("summary: " + s.dump(1).substr(0, 6000) + "\nserver stderr: " + r.err.text);

  // Lifecycle: the SDK asked for its latest revision, which is ours.
  EXPECT_EQ(s["askedVersion"], mcp::kProtocolVersion);
  EXPECT_EQ(s["protocolVersion"], mcp::kProtocolVersion);
  EXPECT_EQ(s["serverInfo"]["name"], "ptxbench");
  EXPECT_EQ(s["capabilities"]["tools"]["listChanged"], false);
  EXPECT_TRUE(contains(s["instructions"], kDefinition));
  EXPECT_EQ(s["ping"], ordered_json::object());

  // Tools and their schemas.
  ASSERT_EQ(s["tools"].size(), 4u);
  std::vector<std::string> names;
  for (const auto& t : s["tools"]) {
    names.push_back(t["name"]);
    EXPECT_EQ(t["inputSchema"]["type"], "object");
    EXPECT_EQ(t["inputSchema"]["additionalProperties"], false);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"list_definitions", "get_task", "compile", "evaluate"}));
  EXPECT_EQ(s["tools"][3]["inputSchema"]["required"], ordered_json({"source"}));
  EXPECT_EQ(s["tools"][3]["hasOutputSchema"], true);

  // The free tools.
  EXPECT_EQ(s["listDefinitions"]["isError"], false);
  EXPECT_EQ(s["listDefinitions"]["structuredContent"]["evaluated_definition"], kDefinition);
  EXPECT_EQ(s["listDefinitions"]["structuredContent"]["remaining"], budget);
  EXPECT_EQ(s["getTask"]["isError"], false);
  EXPECT_GT(s["getTask"]["chars"].get<int>(), 1000);
  EXPECT_TRUE(contains(s["getTask"]["text"], "===== system message ====="));
  if (find_cuda_tool("nvcc").empty()) {
    EXPECT_EQ(s["compile"]["isError"], true) << "no nvcc here: the compile tool says so";
  } else {
    EXPECT_EQ(s["compile"]["isError"], false);
    EXPECT_EQ(s["compile"]["structuredContent"]["status"], "ok");
  }

  // The evaluations: budget of them answered, the one past it refused.
  const ordered_json& ev = s["evaluations"];
  ASSERT_EQ(ev.size(), sources.size());
  const std::vector<std::string> statuses = {"COMPILE_ERROR", "INCORRECT_NUMERICAL", "PASSED"};
  for (int i = 0; i < budget; ++i) {
    EXPECT_EQ(ev[i]["isError"], false) << i;
    EXPECT_EQ(ev[i]["structuredContent"]["status"], statuses[i]);
    EXPECT_EQ(ev[i]["structuredContent"]["turn"], i + 1);
    EXPECT_EQ(ev[i]["structuredContent"]["remaining"], budget - i - 1);
  }
  EXPECT_DOUBLE_EQ(ev[2]["structuredContent"]["speedup"].get<double>(), 1.5);
  EXPECT_EQ(ev[2]["structuredContent"]["target_instruction"], true);
  EXPECT_TRUE(contains(ev[2]["text"], "Verdict: PASSED"));
  EXPECT_EQ(ev[3]["isError"], true);
  EXPECT_TRUE(ev[3]["structuredContent"].is_null());
  EXPECT_TRUE(contains(ev[3]["text"], "request budget of 3 evaluations used up"));

  // Bad arguments are tool errors the model can read; an unknown tool is a protocol error.
  const ordered_json& bad = s["badArguments"];
  EXPECT_EQ(bad["missing"]["isError"], true);
  EXPECT_TRUE(contains(bad["missing"]["text"], "missing required argument 'source'"));
  EXPECT_EQ(bad["wrongType"]["isError"], true);
  EXPECT_TRUE(contains(bad["wrongType"]["text"], "must be a string"));
  EXPECT_EQ(bad["extra"]["isError"], true);
  EXPECT_TRUE(contains(bad["extra"]["text"], "unknown argument 'definition'"));
  EXPECT_EQ(bad["unknownDefinition"]["isError"], true);
  EXPECT_TRUE(contains(bad["unknownDefinition"]["text"], "no_such_definition"));
  EXPECT_EQ(bad["unknownTool"]["protocolError"]["code"], mcp::kInvalidParams);
  EXPECT_EQ(s["closed"], true);

  // The run store afterwards: one MCP run, its trajectory ended by the budget, three turns; the
  // refused call and the bad ones stored nothing.
  RunStore runs(store.string(), RunStore::Open::existing);
  auto all = runs.list_runs();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].config["policy"], mcp::kMcpPolicy);
  EXPECT_EQ(all[0].config["num_turns"], budget);
  EXPECT_EQ(all[0].status, RunStatus::finished);
  auto trajectories = runs.list_trajectories(all[0].id);
  ASSERT_EQ(trajectories.size(), 1u);
  EXPECT_EQ(trajectories[0].status, TrajectoryStatus::finished);
  EXPECT_EQ(trajectories[0].stop_reason, mcp::budget_reason(budget));
  EXPECT_EQ(trajectories[0].key.definition, kDefinition);
  auto turns = runs.turns(trajectories[0].id);
  ASSERT_EQ(turns.size(), static_cast<std::size_t>(budget));
  for (int i = 0; i < budget; ++i) {
    EXPECT_EQ(turns[i].step, TurnStep::complete);
    EXPECT_EQ(turns[i].status, statuses[i]);
    EXPECT_EQ(*turns[i].candidate_source, sources[i]);
    EXPECT_TRUE(contains(*turns[i].answer, "ptxbench-sdk-test 1.0.0")) << "the client's name is recorded";
  }
  EXPECT_FALSE(runs.candidate_source(sha256_hex(sources[3])).has_value()) << "the refused source was not stored";
}

TEST(McpCommand, RefusesAnUnknownDefinitionOrAnAbsentServiceBeforeServing) {
  TempDir dir("ptxbench-mcp-cli");
  auto run = [&](std::vector<std::string> args) {
    ProcessSpec spec;
    spec.argv = {(executable_dir() / "ptxbench").string(), "mcp", "--store", (dir.path() / "runs.db").string()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env_overrides = {env_home()};
    return run_process(spec, 60);
  };
  // Nothing listens on port 9 (discard) of the loopback.
  ProcessResult unknown = run({"--definition", "no_such_definition", "--service", "http://127.0.0.1:9"});
  EXPECT_EQ(unknown.status.exit_code, 2) << "the definition is checked first: " << unknown.err.text;
  EXPECT_NE(unknown.err.text.find("no_such_definition"), std::string::npos) << unknown.err.text;
  ProcessResult away = run({"--definition", kDefinition, "--service", "http://127.0.0.1:9"});
  EXPECT_EQ(away.status.exit_code, 3) << away.err.text;
  EXPECT_NE(away.err.text.find("cannot reach the evaluation service at http://127.0.0.1:9"), std::string::npos) << away.err.text;
  EXPECT_TRUE(away.out.text.empty()) << "stdout carries the protocol alone";
  EXPECT_FALSE(fs::exists(dir.path() / "runs.db")) << "no store is made for a session that never started";
  ProcessResult no_definition = run({"--service", "http://127.0.0.1:9"});
  EXPECT_EQ(no_definition.status.exit_code, 2) << no_definition.err.text;
}

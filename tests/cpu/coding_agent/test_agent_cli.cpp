// `ptxbench agent run` end to end with real agent CLIs from npm (scripts/install_agent_clis.sh):
// Codex and opencode, each driven by a scripted model (the fake provider's responder, answering in
// the format the CLI speaks, streamed) behind the proxy, with `ptxbench mcp` against a real
// `ptxbench serve --fake-gpus`. The agent must really call the MCP `evaluate` tool — twice: a wrong
// kernel, then a right one — and its tokens must land in the stored turns (the rest, after the
// last evaluation, in the ledger); `ptxbench report` must read the run. Skips a CLI that is not
// installed. Also the adapters' config files and the run config's checks (no CLI needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "runs/run_store.h"
#include "coding_agent/agent_cli.h"
#include "coding_agent/agent_runner.h"
#include "coding_agent/usage_ledger.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "helpers/fake_provider.h"
#include "mcp/trajectory_session.h"
#include "service/local_service.h"

using namespace ptxbench;
using namespace ptxbench::coding_agent;
using fakes::FakeCall;
using fakes::FakeProvider;
using fakes::FakeTurn;

namespace {

constexpr const char* kDefinition = "gemm_n7168_k5120";

std::string kernel(const std::string& markers) {
  return "#include \"ptxbench_abi.h\"\n// " + markers +
         "\nextern \"C\" int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) { return 0; }\n";
}
const std::string kWrong = kernel("PTXB_FAKE_STATUS=INCORRECT_NUMERICAL PTXB_FAKE_SECONDS=0.02");
const std::string kRight = kernel("PTXB_FAKE_SPEEDUP=1.5 PTXB_FAKE_SECONDS=0.02");

/// Where the CLIs are: $PTXBENCH_AGENT_CLI_DIR, else where scripts/install_agent_clis.sh puts them.
fs::path install_dir() {
  if (const char* d = std::getenv("PTXBENCH_AGENT_CLI_DIR"); d && *d) return d;
  return agent_install_dir(PTXBENCH_SOURCE_DIR);
}

/// The scripted model: offered our evaluate tool, it submits the wrong kernel, then (with one
/// result in the conversation) the right one, then (with two) ends with a summary. A call without
/// the tool (a title, a summary) gets a line of text. Each kind of call reports its own usage.
FakeTurn scripted_agent(const FakeCall& call) {
  std::string tool, name_space;
  for (const std::string& name : call.tool_names()) {
    if (name == "mcp__ptxbench/evaluate") {  // Codex offers MCP tools as a namespace
      name_space = "mcp__ptxbench";
      tool = "evaluate";
    } else if (name == "ptxbench_evaluate") {  // opencode as server_tool
      tool = name;
    }
  }
  FakeTurn t;
  if (tool.empty()) {
    t.text = "GEMM kernel evaluation";
    t.usage = {300, 5, 0, 0};
    return t;
  }
  const int results = call.tool_result_count();
  if (results >= 2) {
    t.text = "Done: the second kernel passed (" + call.last_tool_result().substr(0, 40) + ").";
    t.usage = {5000, 40, 8, 4096};
    return t;
  }
  t.text = results == 0 ? "Submitting a first kernel." : "Fixing it and submitting again.";
  t.tool_calls = {{"", tool, ordered_json{{"source", results == 0 ? kWrong : kRight}}.dump(), name_space}};
  t.usage = results == 0 ? fakes::FakeUsage{4000, 900, 300, 0} : fakes::FakeUsage{4600, 700, 200, 3800};
  return t;
}

struct Totals {
  int64_t prompt = 0, completion = 0, reasoning = 0, cached = 0;
};

/// `ptxbench mcp` as it starts on a machine that never ran it (cold caches, two busy cores, the
/// tokenizer read for the first time): slower than the one second that Codex gives an optional MCP
/// server before its first model call. The agent must still be offered the tools from its first call on.
fs::path slow_starting_ptxbench(const fs::path& dir) {
  const fs::path script = dir / "ptxbench-slow-start";
  write_file_atomic(script, "#!/bin/sh\nsleep 3\nexec '" + (executable_dir() / "ptxbench").string() + "' \"$@\"\n");
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

void run_end_to_end(const std::string& cli_name) {
  auto cli = make_agent_cli(cli_name);
  const fs::path exe = installed_executable(*cli, install_dir());
  if (exe.empty())
    GTEST_SKIP() << cli->npm_package() << " is not installed under " << install_dir().string()
                 << ": run scripts/install_agent_clis.sh";
  if (find_on_path("node").empty()) GTEST_SKIP() << "node is not on PATH (the CLIs' npm launchers need it)";
  TempDir dir("ptxbench-agent-" + cli_name);
  LocalService service(executable_dir() / "ptxbench", dir.path() / "service.db", {"--fake-gpus", "1"});
  FakeProvider model;
  model.set_responder(scripted_agent);

  ordered_json j = {{"agent", {{"cli", cli_name}, {"executable", exe.string()}, {"model", "fake-model"}}},
                    {"upstream", {{"openai_base_url", model.url() + "/v1"}}},
                    {"definitions", {kDefinition}},
                    {"budget", 3},
                    {"wall_time_s", 240},
                    {"eval_timeout_s", 120},
                    {"service", service.url()},
                    {"store", (dir.path() / "runs.db").string()},
                    {"output_dir", (dir.path() / "agents").string()}};
  if (cli_name == "codex") j["agent"]["options"] = {{"sandbox", "read-only"}};
  AgentRunConfig config = agent_run_config_from_json(j);
  AgentRunnerHooks hooks;
  hooks.ptxbench = slow_starting_ptxbench(dir.path());
  std::string log;
  hooks.log = [&log](const std::string& line) { log += line + "\n"; };
  AgentRunResult result = AgentRunner(config, hooks).run();

  ASSERT_EQ(result.attempts.size(), 1u) << log;
  const AgentAttempt& a = result.attempts[0];
  const std::string transcript = read_file(a.dir / "transcript.jsonl");
  SCOPED_TRACE("runner log:\n" + log + "\nstderr:\n" + read_file(a.dir / "stderr.log").substr(0, 4000) +
               "\ntranscript:\n" + transcript.substr(0, 6000));
  EXPECT_FALSE(a.timed_out);
  EXPECT_TRUE(a.exit.success()) << a.exit.describe();
  EXPECT_TRUE(fs::exists(a.dir / "workspace" / "TASK.md"));
  EXPECT_GT(a.transcript.events, 2);
  // Every call the agent made for its work offered our tool, the first included: a call without
  // any tool is a title or summary (opencode), never one that should have submitted.
  int offered = 0, toolless = 0;
  for (const FakeCall& c : model.calls()) {
    const std::vector<std::string> names = c.tool_names();
    toolless += names.empty();
    offered += std::find_if(names.begin(), names.end(), [](const std::string& n) {
                 return n == "mcp__ptxbench/evaluate" || n == "ptxbench_evaluate";
               }) != names.end();
  }
  EXPECT_EQ(offered + toolless, model.turns_served()) << "a call went out before the MCP server's tools were offered";
  if (cli_name == "codex") {
    EXPECT_EQ(read_file(a.dir / "stderr.log").find("could not create PATH aliases"), std::string::npos)
        << "Codex left out its helper binaries: its home lies inside its temp folder";
  }
  EXPECT_EQ(a.transcript.evaluate_calls, 2) << "the agent called the MCP evaluate tool twice";
  EXPECT_NE(a.transcript.last_message.find("the second kernel passed"), std::string::npos);

  // The stored run: an MCP run with the agent in its config, two evaluations as turns.
  RunStore store((dir.path() / "runs.db").string(), RunStore::Open::existing);
  RunInfo run = store.run(result.run_id);
  EXPECT_EQ(run.config["policy"], mcp::kMcpPolicy);
  EXPECT_EQ(run.config["agent"]["cli"], cli_name);
  EXPECT_EQ(run.config["num_turns"], 3);
  EXPECT_EQ(run.status, RunStatus::finished);
  TrajectoryInfo t = store.trajectory(a.trajectory_id);
  EXPECT_EQ(t.status, TrajectoryStatus::finished);
  EXPECT_EQ(t.stop_reason, mcp::kEndedReason) << "the MCP session ended with the agent, one evaluation unused";
  std::vector<TurnRecord> turns = store.turns(a.trajectory_id);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].status, "INCORRECT_NUMERICAL");
  EXPECT_EQ(turns[1].status, "PASSED");
  EXPECT_EQ(*turns[0].candidate_source, kWrong);
  EXPECT_EQ(*turns[1].candidate_source, kRight);

  // The tokens: every call the model answered is in the ledger with its usage; each turn carries
  // those before its evaluation (the first at least the call that submitted it), the rest waits
  // in the ledger as the agent's words after its last evaluation. Nothing is lost or counted twice.
  UsageLedger ledger((dir.path() / "runs.db").string());
  std::vector<ModelCall> calls = ledger.calls(a.trajectory_id);
  EXPECT_EQ(static_cast<int>(calls.size()), model.turns_served());
  for (const ModelCall& c : calls) {
    EXPECT_EQ(c.status, 200);
    EXPECT_TRUE(c.usage.reported);
    EXPECT_TRUE(c.stream) << "both CLIs stream";
    EXPECT_EQ(c.api, cli_name == "codex" ? WireApi::responses : WireApi::chat_completions);
  }
  Totals stored;
  for (const TurnRecord& r : turns) {
    ASSERT_TRUE(r.usage);
    stored.prompt += r.usage->prompt_tokens;
    stored.completion += r.usage->completion_tokens;
    stored.reasoning += r.usage->reasoning_tokens;
    stored.cached += r.usage->cached_tokens;
    EXPECT_EQ(r.usage->provider, cli_name == "codex" ? "agent:responses" : "agent:chat_completions");
    EXPECT_EQ(r.usage->model, "fake-model");
  }
  EXPECT_GE(turns[0].usage->prompt_tokens, 4000);
  EXPECT_GE(turns[0].usage->completion_tokens, 900);
  EXPECT_GE(turns[1].usage->prompt_tokens, 4600) << "the second turn: the call that resubmitted";
  const fakes::FakeUsage served = model.usage_served();
  EXPECT_EQ(stored.prompt + a.after_last.usage.prompt_tokens, served.prompt);
  EXPECT_EQ(stored.completion + a.after_last.usage.completion_tokens, served.completion);
  EXPECT_EQ(stored.reasoning + a.after_last.usage.reasoning_tokens, served.reasoning);
  EXPECT_EQ(stored.cached + a.after_last.usage.cached_tokens, served.cached);
  EXPECT_GE(a.after_last.usage.prompt_tokens, 5000) << "the closing summary came after the last evaluation";
  // The CLI's own count agrees with the proxy's, but for the calls it does not count itself
  // (opencode's session title: 300 + 5 tokens each).
  ASSERT_TRUE(a.transcript.reported_usage);
  int titles = 0;
  for (const FakeCall& c : model.calls()) titles += c.tool_names().empty();
  EXPECT_EQ(a.transcript.reported_usage->prompt_tokens, served.prompt - 300 * titles);
  EXPECT_EQ(a.transcript.reported_usage->completion_tokens, served.completion - 5 * titles);
  EXPECT_EQ(a.transcript.reported_usage->reasoning_tokens, served.reasoning);
  EXPECT_EQ(a.transcript.reported_usage->cached_tokens, served.cached);

  // The CLI never held the real key and never left the loopback: every request it made reached
  // the fake through the proxy, on the format it speaks.
  for (const HttpRequest& r : model.requests())
    EXPECT_EQ(r.path, cli_name == "codex" ? "/v1/responses" : "/v1/chat/completions");

  // `ptxbench report` reads the run as it reads ours.
  ProcessSpec report;
  report.argv = {(executable_dir() / "ptxbench").string(), "report", result.run_id, "--store",
                 (dir.path() / "runs.db").string(), "--allow-fake"};
  report.env_overrides = {"PTXBENCH_HOME=" + data_root().string()};
  ProcessResult rr = run_process(report, 60);
  EXPECT_TRUE(rr.status.success()) << rr.err.text;
  EXPECT_NE(rr.out.text.find(kDefinition), std::string::npos) << rr.out.text;
}

}  // namespace

TEST(AgentCliEndToEnd, CodexCallsEvaluateThroughMcpAndItsTokensAreStored) { run_end_to_end("codex"); }

TEST(AgentCliEndToEnd, OpencodeCallsEvaluateThroughMcpAndItsTokensAreStored) { run_end_to_end("opencode"); }

TEST(AgentCliEndToEnd, AnAgentPastItsWallTimeIsStoppedAndItsTrajectoryEnded) {
  auto cli = make_agent_cli("codex");
  const fs::path exe = installed_executable(*cli, install_dir());
  if (exe.empty()) GTEST_SKIP() << "@openai/codex is not installed: run scripts/install_agent_clis.sh";
  if (find_on_path("node").empty()) GTEST_SKIP() << "node is not on PATH";
  TempDir dir("ptxbench-agent-timeout");
  LocalService service(executable_dir() / "ptxbench", dir.path() / "service.db", {"--fake-gpus", "1"});
  FakeProvider model;
  model.set_responder(scripted_agent);
  model.set_event_delay(3);  // the first answer alone takes half a minute to stream
  ordered_json j = {{"agent", {{"cli", "codex"}, {"executable", exe.string()}, {"model", "fake-model"},
                               {"options", {{"sandbox", "read-only"}}}}},
                    {"upstream", {{"openai_base_url", model.url() + "/v1"}}},
                    {"definitions", {kDefinition}},
                    {"budget", 3},
                    {"wall_time_s", 6},
                    {"service", service.url()},
                    {"store", (dir.path() / "runs.db").string()},
                    {"output_dir", (dir.path() / "agents").string()}};
  AgentRunnerHooks hooks;
  hooks.ptxbench = executable_dir() / "ptxbench";
  hooks.log = [](const std::string&) {};
  AgentRunResult result = AgentRunner(agent_run_config_from_json(j), hooks).run();
  ASSERT_EQ(result.attempts.size(), 1u);
  const AgentAttempt& a = result.attempts[0];
  EXPECT_TRUE(a.timed_out);
  EXPECT_LT(a.wall_s, 20);
  EXPECT_EQ(a.turns, 0);
  RunStore store((dir.path() / "runs.db").string(), RunStore::Open::existing);
  TrajectoryInfo t = store.trajectory(a.trajectory_id);
  EXPECT_EQ(t.status, TrajectoryStatus::finished);
  EXPECT_EQ(t.stop_reason, "agent wall-time limit of 6 s reached");
  EXPECT_EQ(store.run(result.run_id).status, RunStatus::finished);
  EXPECT_EQ(store.messages(a.trajectory_id).size(), 2u) << "the opening messages are stored as for any trajectory";
}

TEST(AgentCliEndToEnd, ACodexWhoseMcpServerCannotStartAsksTheModelNothingAndItsTrajectoryStaysOpen) {
  auto cli = make_agent_cli("codex");
  const fs::path exe = installed_executable(*cli, install_dir());
  if (exe.empty()) GTEST_SKIP() << "@openai/codex is not installed: run scripts/install_agent_clis.sh";
  if (find_on_path("node").empty()) GTEST_SKIP() << "node is not on PATH";
  TempDir dir("ptxbench-agent-no-mcp");
  LocalService service(executable_dir() / "ptxbench", dir.path() / "service.db", {"--fake-gpus", "1"});
  FakeProvider model;
  model.set_responder(scripted_agent);
  const fs::path broken = dir.path() / "ptxbench-broken";  // the MCP server dies before its handshake
  write_file_atomic(broken, "#!/bin/sh\necho 'no evaluator today' >&2\nexit 3\n");
  fs::permissions(broken, fs::perms::owner_all);
  ordered_json j = {{"agent", {{"cli", "codex"}, {"executable", exe.string()}, {"model", "fake-model"},
                               {"options", {{"sandbox", "read-only"}}}}},
                    {"upstream", {{"openai_base_url", model.url() + "/v1"}}},
                    {"definitions", {kDefinition}},
                    {"budget", 3},
                    {"wall_time_s", 120},
                    {"service", service.url()},
                    {"store", (dir.path() / "runs.db").string()},
                    {"output_dir", (dir.path() / "agents").string()}};
  AgentRunnerHooks hooks;
  hooks.ptxbench = broken;
  std::string log;
  hooks.log = [&log](const std::string& line) { log += line + "\n"; };
  AgentRunResult result = AgentRunner(agent_run_config_from_json(j), hooks).run();
  ASSERT_EQ(result.attempts.size(), 1u);
  const AgentAttempt& a = result.attempts[0];
  SCOPED_TRACE("runner log:\n" + log + "\nstderr:\n" + read_file(a.dir / "stderr.log").substr(0, 4000));
  EXPECT_FALSE(a.timed_out);
  EXPECT_FALSE(a.exit.success()) << "Codex ends when its required MCP server cannot start";
  EXPECT_LT(a.wall_s, 60);
  EXPECT_EQ(model.turns_served(), 0) << "no model call without the evaluator";
  EXPECT_EQ(a.turns, 0);
  RunStore store((dir.path() / "runs.db").string(), RunStore::Open::existing);
  EXPECT_EQ(store.trajectory(a.trajectory_id).status, TrajectoryStatus::running)
      << "nothing ran: the trajectory is not a failure of the model, `--run` retries it";
  EXPECT_EQ(store.run(result.run_id).status, RunStatus::running);
  EXPECT_NE(log.find("stays open"), std::string::npos);
}

TEST(AgentCliAdapters, WriteConfigsThatPointAtTheProxyAndTheMcpServerAndNothingElse) {
  TempDir dir("ptxbench-agent-adapters");
  AgentLaunch l;
  l.workspace = dir.path() / "ws";
  l.home = dir.path() / "home";
  fs::create_directories(l.workspace);
  l.model = "gpt-x";
  l.openai_base_url = "http://127.0.0.1:1234/t/9/v1";
  l.anthropic_base_url = "http://127.0.0.1:1234/t/9";
  l.mcp_command = {"/opt/ptxbench", "mcp", "--definition", "a \"quoted\" name"};
  l.mcp_env = {"PTXBENCH_HOME=/data"};
  l.prompt = "do it";

  auto codex = make_agent_cli("codex");
  ProcessSpec c = codex->prepare("/bin/codex", l);
  const std::string toml = read_file(l.home / ".codex" / "config.toml");
  EXPECT_NE(toml.find("base_url = \"http://127.0.0.1:1234/t/9/v1\""), std::string::npos) << toml;
  EXPECT_NE(toml.find("wire_api = \"responses\""), std::string::npos);
  EXPECT_NE(toml.find("args = [\"mcp\", \"--definition\", \"a \\\"quoted\\\" name\"]"), std::string::npos) << toml;
  EXPECT_NE(toml.find("env = { \"PTXBENCH_HOME\" = \"/data\" }"), std::string::npos) << toml;
  EXPECT_NE(toml.find("approval_policy = \"never\""), std::string::npos);
  EXPECT_NE(toml.find("required = true"), std::string::npos) << "Codex must wait for its evaluator before the first call";
  std::string tmpdir;
  for (const auto& e : c.env_overrides)
    if (e.rfind("TMPDIR=", 0) == 0) tmpdir = e.substr(7);
  ASSERT_FALSE(tmpdir.empty()) << "Codex gets a temp folder of its own";
  EXPECT_TRUE(fs::is_directory(tmpdir));
  const std::string codex_home = (l.home / ".codex").string();
  EXPECT_NE(codex_home.rfind(tmpdir, 0), 0u) << "CODEX_HOME inside the temp folder: Codex would make no helper binaries";
  EXPECT_EQ(c.argv.back(), "do it");
  EXPECT_EQ(c.cwd, l.workspace.string());
  EXPECT_TRUE(fs::is_empty(l.workspace)) << "nothing of the CLI's config lands in the workspace";
  l.options = {{"sandbox", "everything"}};
  EXPECT_THROW((void)codex->prepare("/bin/codex", l), InputError);
  l.options = {{"colour", "red"}};
  EXPECT_THROW((void)codex->prepare("/bin/codex", l), InputError);
  l.options = ordered_json::object();
  l.provider = "anthropic";
  EXPECT_THROW((void)codex->prepare("/bin/codex", l), InputError) << "codex speaks only the Responses API";

  auto opencode = make_agent_cli("opencode");
  ProcessSpec o = opencode->prepare("/bin/opencode", l);
  ordered_json oc = ordered_json::parse(read_file(l.home / "opencode.json"));
  EXPECT_EQ(oc["provider"]["ptxbench"]["npm"], "@ai-sdk/anthropic");
  EXPECT_EQ(oc["provider"]["ptxbench"]["options"]["baseURL"], "http://127.0.0.1:1234/t/9/v1");
  EXPECT_EQ(oc["mcp"]["ptxbench"]["command"][3], "a \"quoted\" name");
  EXPECT_EQ(oc["model"], "ptxbench/gpt-x");
  EXPECT_EQ(oc["autoupdate"], false);
  bool config_named = false;
  for (const auto& e : o.env_overrides) config_named |= e == "OPENCODE_CONFIG=" + (l.home / "opencode.json").string();
  EXPECT_TRUE(config_named);
  EXPECT_TRUE(fs::is_empty(l.workspace));

  EXPECT_THROW((void)make_agent_cli("claude"), InputError);
  EXPECT_EQ(toml_string("a\\b\n\x01"), "\"a\\\\b\\n\\u0001\"");
}

TEST(AgentRunConfig, IsReadStrictlyNamingTheField) {
  const ordered_json base = {{"agent", {{"cli", "codex"}, {"model", "gpt-x"}}},
                             {"upstream", {{"openai_base_url", "http://127.0.0.1:8000/v1"}}},
                             {"definitions", {kDefinition}}};
  AgentRunConfig c = agent_run_config_from_json(base);
  EXPECT_EQ(c.budget, 8) << "the paper's budget for external agents";
  EXPECT_EQ(c.service, "local");
  EXPECT_EQ(c.parallel, 1);
  struct Case {
    ordered_json patch;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {{{"colour", 1}}, "colour"},
      {{{"agent", {{"cli", "claude"}, {"model", "m"}}}}, "unknown agent CLI 'claude'"},
      {{{"agent", {{"cli", "codex"}, {"model", "m"}, {"provider", "anthropic"}}}}, "codex cannot speak anthropic"},
      {{{"agent", {{"cli", "opencode"}, {"model", "m"}, {"provider", "anthropic"}}}}, "upstream.anthropic_base_url"},
      {{{"budget", 0}}, "budget"},
      {{{"definitions", ordered_json::array()}}, "definitions"},
      {{{"local_service_args", {"--fake-gpus"}}, {"service", "http://127.0.0.1:1"}}, "local_service_args"},
      {{{"upstream", {{"openai_base_url", "ftp://x"}}}}, "openai_base_url"},
  };
  for (const auto& k : cases) {
    ordered_json j = base;
    j.update(k.patch);
    try {
      (void)agent_run_config_from_json(j, "agent.json");
      ADD_FAILURE() << "accepted " << k.patch.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(k.fragment), std::string::npos) << e.what();
    }
  }
}

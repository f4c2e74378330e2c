// `ptxbench agent`: external coding agents (Codex, opencode) as subjects of the benchmark, each
// trajectory one agent session with the evaluator as its MCP tool and the proxy as its model
// endpoint (coding_agent/agent_runner.h, docs/coding_agents.md).
#include <fmt/format.h>

#include <csignal>

#include "cli/commands.h"
#include "coding_agent/agent_cli.h"
#include "coding_agent/agent_runner.h"
#include "common/error.h"
#include "common/fs.h"

namespace ptxbench::cli {
namespace {

struct AgentArgs {
  std::string config, run;
  bool json = false;
};

int run_agents(const AgentArgs& a) {
  std::signal(SIGPIPE, SIG_IGN);  // an agent gone mid-answer is a write error, not our death
  JsonChecker check(a.config);
  coding_agent::AgentRunConfig config = coding_agent::agent_run_config_from_json(check.parse(read_file(a.config)), a.config);
  coding_agent::AgentRunner runner(config);
  coding_agent::AgentRunResult r = runner.run(a.run);
  int unfinished = 0;
  for (const auto& t : r.attempts) unfinished += t.status == TrajectoryStatus::running || t.status == TrajectoryStatus::failed;
  if (a.json) {
    ordered_json j = {{"run_id", r.run_id}, {"cli", r.cli}, {"cli_version", r.cli_version}, {"skipped", r.skipped},
                      {"attempts", ordered_json::array()}};
    for (const auto& t : r.attempts) j["attempts"].push_back(t.to_json());
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("run {} ({} {}): {} trajectories run, {} skipped (finished before)\n", r.run_id, r.cli, r.cli_version,
               r.attempts.size(), r.skipped);
    fmt::print("{:>6}  {:<28} {:<10} {:>5}  {:>6}  {:>8}  {:>12}  {}\n", "traj", "definition", "tag", "evals", "calls",
               "wall s", "tokens", "ended");
    for (const auto& t : r.attempts)
      fmt::print("{:>6}  {:<28} {:<10} {:>5}  {:>6}  {:>8.1f}  {:>12}  {}\n", t.trajectory_id, t.key.definition,
                 t.key.prompt_tag, t.turns, t.transcript.tool_calls, t.wall_s,
                 t.turn_usage.prompt_tokens + t.turn_usage.completion_tokens + t.after_last.usage.prompt_tokens +
                     t.after_last.usage.completion_tokens,
                 t.stop_reason.empty() ? to_string(t.status) : t.stop_reason);
    fmt::print("transcripts under {}/{}; `ptxbench report {} --store {}` reads the run\n", config.output_dir, r.run_id,
               r.run_id, config.store);
  }
  return unfinished > 0 ? 4 : 0;
}

int list_clis() {
  const fs::path install = coding_agent::agent_install_dir(PTXBENCH_SOURCE_DIR);
  for (const auto& name : coding_agent::agent_cli_names()) {
    auto cli = coding_agent::make_agent_cli(name);
    std::string version = coding_agent::installed_version(*cli, install);
    fmt::print("{:<10} {:<16} speaks {:<18} {}\n", name, cli->npm_package(), fmt::format("{}", fmt::join(cli->providers(), ", ")),
               version.empty() ? "not installed (scripts/install_agent_clis.sh)" : version + " in " + install.string());
  }
  return 0;
}

}  // namespace

void register_agent(CLI::App& app, Action& action) {
  static AgentArgs a;
  auto* cmd = app.add_subcommand("agent", "run external coding agents (Codex, opencode) with the evaluator as their MCP tool");
  cmd->require_subcommand(1);
  auto* run = cmd->add_subcommand("run", "one agent session per trajectory of a config, stored as an MCP run");
  run->add_option("--config", a.config, "agent run config (configs/agent_example.json; docs/coding_agents.md)")
      ->required()
      ->check(CLI::ExistingFile);
  run->add_option("--run", a.run, "continue this agent run: finished trajectories are skipped");
  run->add_flag("--json", a.json, "print the attempts as JSON");
  run->footer("Each agent works in a scratch workspace with `ptxbench mcp` (bound to its trajectory, with the budget) and\n"
              "`ptxbench proxy` (its tokens go to the trajectory's turns) under the wall-time limit; its transcript\n"
              "(JSON events), stderr and a summary go under output_dir/<run>/. Exit 4 when a trajectory is left unfinished.");
  run->callback([&action] { action = [] { return run_agents(a); }; });
  auto* clis = cmd->add_subcommand("clis", "the agent CLIs ptxbench can drive and the installed versions");
  clis->callback([&action] { action = [] { return list_clis(); }; });
}

}  // namespace ptxbench::cli

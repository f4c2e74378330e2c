// `ptxbench agent run --config FILE` (issue 20): external coding agents as subjects. For each
// trajectory (definition × prompt tag × index) it starts an agent CLI in a scratch workspace of its
// own, with `ptxbench mcp` as its MCP server (bound to that trajectory of an MCP run in the run
// store, with the request budget) and `ptxbench proxy` as its model endpoint (the agent's tokens
// go to the trajectory's turns), under a wall-time limit, and keeps its transcript. The run is
// stored as `ptxbench mcp` stores one, so `ptxbench report` reads it as it reads ours.
// docs/coding_agents.md.
#pragma once

#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runs/run_store.h"
#include "coding_agent/agent_cli.h"
#include "coding_agent/usage_ledger.h"
#include "coding_agent/usage_proxy.h"
#include "common/fs.h"
#include "common/json_check.h"
#include "common/subprocess.h"

namespace ptxbench {
struct Prompt;
}  // namespace ptxbench

namespace ptxbench::coding_agent {

/// The run config (configs/agent_example.json; docs/coding_agents.md describes every field).
struct AgentRunConfig {
  // "agent": which CLI and how it is started
  std::string cli;            ///< "codex", "opencode"
  std::string executable;     ///< "": the one scripts/install_agent_clis.sh installed
  std::string model;          ///< the model the CLI asks the provider for
  std::string provider = "openai";  ///< the format the CLI speaks through the proxy: openai, anthropic
  ordered_json options = ordered_json::object();  ///< the adapter's options (agent_cli.h)
  std::vector<std::string> extra_args;
  std::vector<std::string> env;  ///< NAME=value for the CLI
  std::string instructions;      ///< the instruction the CLI starts with; "": the default (default_instructions)
  // "upstream": where the proxy sends the agent's calls
  UpstreamConfig upstream;
  // the trajectories
  std::vector<std::string> definitions;
  std::vector<std::string> prompt_tags;  ///< empty: the prompt builder's last default tag
  int trajectories_per_tag = 1;
  int budget = 8;             ///< evaluations per trajectory (the paper gives external agents 8)
  std::string arch = "sm_90a";
  double wall_time_s = 3600;  ///< one agent's whole session
  double eval_timeout_s = 3600;
  int parallel = 1;           ///< agents running at once
  // where
  std::string service = "local";  ///< the evaluation service URL, or "local": one started as a child
  std::vector<std::string> local_service_args;
  std::string token_file;
  std::string store = "runs/runs.db";
  std::string output_dir = "runs/agents";  ///< <output_dir>/<run id>/<trajectory>/attempt-N/
};
/// Strict: an unknown field, a wrong type or a value out of range is an InputError naming the field.
[[nodiscard]] AgentRunConfig agent_run_config_from_json(const ordered_json& j, const std::string& document = "agent config");

/// The instruction an agent starts with unless the config gives one: where the task is, the MCP
/// tools, the budget.
[[nodiscard]] std::string default_instructions(int budget);

/// One agent session of one trajectory.
struct AgentAttempt {
  int64_t trajectory_id = 0;
  TrajectoryKey key;
  fs::path dir;                ///< attempt-N: workspace/, home/, transcript.jsonl, stderr.log, summary.json
  ExitStatus exit;
  bool timed_out = false;
  double wall_s = 0;
  int turns = 0;               ///< evaluations stored in the trajectory after it
  TrajectoryStatus status = TrajectoryStatus::running;
  std::string stop_reason;
  TranscriptSummary transcript;
  CallUsage turn_usage;        ///< the tokens the trajectory's turns carry
  UsageLedger::Unattributed after_last;  ///< the agent's calls after its last evaluation
  [[nodiscard]] ordered_json to_json() const;
};

struct AgentRunResult {
  std::string run_id;
  std::string cli, cli_version;
  std::vector<AgentAttempt> attempts;  ///< trajectories found finished already are not attempted
  int skipped = 0;                     ///< ...and counted here
};

struct AgentRunnerHooks {
  fs::path ptxbench;  ///< the ptxbench executable the MCP servers run (default: ours)
  std::function<void(const std::string&)> log;  ///< progress lines; empty: stderr with "[agent] "
};

class AgentRunner {
 public:
  /// Checks the config against the catalog, the prompt builder and the installed CLI (InputError,
  /// EnvironmentError naming scripts/install_agent_clis.sh) before anything is started or stored.
  AgentRunner(AgentRunConfig config, AgentRunnerHooks hooks = {});

  /// Runs every trajectory of the config into a new run, or into `run_id` (an MCP run of this
  /// config: trajectories it finished are skipped, unfinished ones get a new agent session).
  AgentRunResult run(const std::string& run_id = "");

 private:
  [[nodiscard]] ordered_json agent_json() const;  ///< the run config's "agent"
  /// A new run of this config, or `run_id` checked to be one (and set running again); its id.
  std::string open_run(RunStore& store, const std::string& run_id, const ordered_json& agent) const;
  /// Every trajectory of the config, `parallel` at a time, into result.attempts and result.skipped;
  /// the first failure, after the others have ended.
  std::exception_ptr run_trajectories(RunStore& store, UsageLedger& ledger, const UsageProxy& proxy,
                                      const std::string& service_url, AgentRunResult& result);
  AgentAttempt run_one(RunStore& store, UsageLedger& ledger, const UsageProxy& proxy, const std::string& run_id,
                       const std::string& service_url, const TrajectoryKey& key);
  /// How the CLI is started for attempt `a` (its folders are a.dir/workspace and a.dir/home).
  [[nodiscard]] AgentLaunch launch_for(const AgentAttempt& a, const UsageProxy& proxy, const std::string& run_id,
                                       const std::string& service_url) const;
  /// Runs the CLI under the wall-time limit; its exit, transcript and time go into `a`.
  void run_agent(const AgentLaunch& l, AgentAttempt& a) const;
  /// Ends the trajectory's session where the MCP server did not (a CLI that killed it, a timeout),
  /// unless nothing was asked yet after a failed start or an evaluation still waits for its verdict.
  void end_session(RunStore& store, const AgentAttempt& a, const Prompt& prompt, const std::string& run_id) const;
  void log(const std::string& line) const;

  AgentRunConfig m_config;
  AgentRunnerHooks m_hooks;
  std::unique_ptr<AgentCli> m_cli;
  fs::path m_executable;
  std::string m_version;
  std::vector<std::string> m_tags;  ///< the config's tags, resolved
};

}  // namespace ptxbench::coding_agent

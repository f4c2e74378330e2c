// The coding-agent CLIs that `ptxbench agent run` drives (issue 20), one adapter each: where the
// CLI is installed (scripts/install_agent_clis.sh), the config files that point it at the proxy
// and at `ptxbench mcp` with every call home switched off, its non-interactive command line, and
// what its transcript (the JSON events it prints) says. docs/coding_agents.md lists what each
// needs to run offline and what was tried.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coding_agent/usage_ledger.h"
#include "common/fs.h"
#include "common/json_check.h"
#include "common/subprocess.h"

namespace ptxbench::coding_agent {

/// Everything an adapter needs to start one trajectory's agent.
struct AgentLaunch {
  fs::path workspace;  ///< the agent's working directory: a scratch folder of its own
  fs::path home;       ///< the CLI's private HOME (its config, state, sessions), beside the workspace
  std::string model;   ///< the model name the CLI sends to the provider
  /// The proxy's base URLs for this trajectory (UsageProxy::openai_base_url / anthropic_base_url).
  std::string openai_base_url, anthropic_base_url;
  /// Which format the CLI should speak when it can speak several: "openai" or "anthropic".
  std::string provider = "openai";
  std::vector<std::string> mcp_command;  ///< argv of `ptxbench mcp ...`
  std::vector<std::string> mcp_env;      ///< NAME=value the MCP server needs (PTXBENCH_HOME, ...)
  std::string prompt;                    ///< the instruction the CLI starts with
  double tool_timeout_s = 3600;          ///< one MCP tool call (an evaluation, queue included)
  /// Adapter options from the run config's "agent.options" (docs/coding_agents.md), e.g.
  /// {"sandbox": "read-only", "reasoning_effort": "high"} for codex.
  ordered_json options = ordered_json::object();
  std::vector<std::string> extra_args;   ///< appended to the CLI's own arguments
  std::vector<std::string> env;          ///< NAME=value for the CLI process
};

/// What the CLI's JSON events say, for the run's summary (the events themselves are stored whole).
struct TranscriptSummary {
  int64_t events = 0;          ///< JSON lines read
  int64_t tool_calls = 0;      ///< tool calls of any kind the agent made
  int64_t evaluate_calls = 0;  ///< calls of our MCP `evaluate` tool
  std::optional<CallUsage> reported_usage;  ///< the tokens the CLI itself counted, where it prints them
  std::string last_message;    ///< the agent's last words
};

class AgentCli {
 public:
  virtual ~AgentCli() = default;
  [[nodiscard]] virtual std::string name() const = 0;         ///< "codex", "opencode"
  [[nodiscard]] virtual std::string npm_package() const = 0;  ///< "@openai/codex", "opencode-ai"
  [[nodiscard]] virtual std::string binary() const = 0;       ///< its node_modules/.bin/ name
  /// The providers ("openai", "anthropic") the CLI can be pointed at through the proxy.
  [[nodiscard]] virtual std::vector<std::string> providers() const = 0;
  /// Writes the CLI's config under launch.home (never into the workspace) and returns the command
  /// to run: argv, environment, working directory. InputError for an option it does not know.
  [[nodiscard]] virtual ProcessSpec prepare(const fs::path& executable, const AgentLaunch& launch) const = 0;
  [[nodiscard]] virtual TranscriptSummary summarize(const std::string& transcript) const = 0;
};

/// "codex" or "opencode"; InputError naming the known ones otherwise.
[[nodiscard]] std::unique_ptr<AgentCli> make_agent_cli(const std::string& name);
[[nodiscard]] std::vector<std::string> agent_cli_names();

/// Where scripts/install_agent_clis.sh installs the CLIs: <root>/third_party/agents.
[[nodiscard]] fs::path agent_install_dir(const fs::path& source_root);
/// <install dir>/node_modules/.bin/<binary>, or "" when it is not there.
[[nodiscard]] fs::path installed_executable(const AgentCli& cli, const fs::path& install_dir);
/// The installed package's version (its package.json), or "".
[[nodiscard]] std::string installed_version(const AgentCli& cli, const fs::path& install_dir);

/// TOML's basic string: quoted, with \ " and control characters escaped.
[[nodiscard]] std::string toml_string(const std::string& s);

}  // namespace ptxbench::coding_agent

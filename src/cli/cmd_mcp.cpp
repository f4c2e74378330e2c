// `ptxbench mcp`: the evaluator as an MCP server over stdio for coding agents (docs/design.md §10,
// docs/mcp.md), bound to one trajectory of a run in the run store with a budget of evaluations.
// stdout carries the protocol alone; every log line goes to stderr.
#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <memory>
#include <set>

#include "runs/run_store.h"
#include "cli/commands.h"
#include "cli/eval_args.h"
#include "coding_agent/usage_ledger.h"
#include "common/error.h"
#include "common/fd.h"
#include "common/fs.h"
#include "definitions/catalog.h"
#include "mcp/mcp_server.h"
#include "mcp/trajectory_session.h"
#include "prompt/prompt_builder.h"
#include "service/access_token.h"
#include "service/local_service.h"
#include "service/service_client.h"

namespace ptxbench::cli {
namespace {

struct McpArgs {
  std::string service = "http://127.0.0.1:8742", token_file, store = "runs/runs.db", run, definition, tag,
              model = mcp::kMcpPolicy, arch = "sm_90a";
  int budget = mcp::kDefaultBudget;
  bool budget_given = false;
  int64_t index = 0;
  double eval_timeout = 3600;
  std::vector<std::string> local_service_args;
};

int run_mcp(const McpArgs& a) {
  // The protocol keeps its own descriptor; fd 1 becomes stderr, so nothing else written to stdout
  // (by a library, by a child that inherits it) can break a message.
  Fd protocol(::dup(STDOUT_FILENO));
  if (!protocol.valid() || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw EnvironmentError("mcp", "cannot set stdout aside for the protocol");
  std::signal(SIGPIPE, SIG_IGN);  // a client gone is a write error (EPIPE), not our death

  fs::path root = data_root();
  Catalog catalog = Catalog::load(root);
  PromptBuilder prompts(root);
  (void)catalog.definition(a.definition);  // a usage error before the service is asked anything
  if (fs::path(a.store).has_parent_path()) fs::create_directories(fs::path(a.store).parent_path());
  std::unique_ptr<LocalService> local;
  std::string url = a.service;
  if (a.service == "local") {
    local = std::make_unique<LocalService>(executable_dir() / "ptxbench", fs::path(a.store).parent_path() / "service.db",
                                           a.local_service_args);
    url = local->url();
  } else if (!a.local_service_args.empty()) {
    throw InputError("cli", "--local-service-arg goes with --service local");
  }
  ServiceClient service(url, service_client_options(a.token_file));
  // The service must answer and know the definition before a client is told the session is ready.
  service.require_definitions({a.definition}, "mcp");
  RunStore store(a.store);

  mcp::SessionConfig c;
  c.run_id = a.run;
  c.definition = a.definition;
  c.tag = a.tag;
  c.index = a.index;
  if (a.budget_given) c.budget = a.budget;
  c.model = a.model;
  c.arch = a.arch;
  c.service = a.service;  // "local" or the URL: what a later session would be started with
  c.eval_timeout_s = a.eval_timeout;
  // The agent's tokens, where `ptxbench proxy` (or `agent run`) records its model calls in this
  // store; none recorded: the turns carry zeros, as before (docs/coding_agents.md).
  c.usage_hook = coding_agent::ledger_usage_hook(a.store);
  mcp::TrajectorySession session(store, service, catalog, prompts, c);
  fmt::print(stderr, "[mcp] run {}, trajectory {} ({}, tag {}, index {}): {} of {} evaluations left; service {}; store {}\n",
             session.run_id(), session.trajectory_id(), a.definition, session.key().prompt_tag, a.index,
             session.remaining(), session.budget(), url, a.store);
  mcp::McpServer server(catalog, prompts, session);
  server.serve(STDIN_FILENO, protocol.get());
  fmt::print(stderr, "[mcp] session ended: {} of {} evaluations used\n", session.used(), session.budget());
  return 0;
}

}  // namespace

void register_mcp(CLI::App& app, Action& action) {
  static McpArgs a;
  auto* cmd = app.add_subcommand("mcp", "serve the evaluator to a coding agent over MCP (stdio), bound to one trajectory");
  cmd->add_option("--definition", a.definition, "definition the session evaluates (ptxbench definitions list)")->required();
  cmd->add_option("--tag", a.tag, "prompt tag of the task (default: the last default evaluation tag, contract)");
  cmd->add_option("--index", a.index, "trajectory index within (definition, tag)")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--arch", a.arch,
                  "prompt target of a new run: sm_90a (Hopper pack, H200 parameters), sm_100a (Blackwell), or a GPU: h100, "
                  "h200, b200")
      ->capture_default_str();
  cmd->add_option("--run", a.run, "add the trajectory to this stored MCP run (default: create a run)");
  auto* budget = cmd->add_option("--budget", a.budget, "evaluations per trajectory (a new run's; an existing run keeps its own)")
                     ->check(CLI::Range(1, 100))
                     ->capture_default_str();
  cmd->add_option("--store", a.store, "run store (SQLite)")->capture_default_str();
  cmd->add_option("--service", a.service, "evaluation service URL, or \"local\": start one as a child (its queue service.db beside the store)")
      ->capture_default_str();
  add_token_file_option(cmd, a.token_file);
  cmd->add_option("--local-service-arg", a.local_service_args,
                  "extra option for the service of --service local (repeatable, e.g. --local-service-arg=--fake-gpus)")
      ->allow_extra_args(false);
  cmd->add_option("--model", a.model, "a new run's model label (the report's Model column)")->capture_default_str();
  cmd->add_option("--eval-timeout", a.eval_timeout, "seconds one evaluation may take, queue included")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->footer("Speaks MCP (revision 2025-11-25) on stdin/stdout; logs on stderr. Tools: list_definitions, get_task, compile,\n"
              "evaluate. Each evaluate call is stored as a turn; past the budget it is refused. A turn carries the tokens\n"
              "the agent spent since the previous one where `ptxbench proxy` records its model calls in the same store\n"
              "(docs/coding_agents.md). docs/mcp.md.");
  cmd->callback([&action, budget] {
    a.budget_given = budget->count() > 0;
    action = [] { return run_mcp(a); };
  });
}

}  // namespace ptxbench::cli

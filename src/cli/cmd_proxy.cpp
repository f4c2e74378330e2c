// `ptxbench proxy`: the model-call pass-through that records a coding agent's tokens into the run
// store's usage ledger, keyed by the trajectory in the URL (coding_agent/usage_proxy.h,
// docs/coding_agents.md). `ptxbench agent run` starts one itself; this command runs one on its own
// for an agent started by hand beside `ptxbench mcp`.
#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "cli/commands.h"
#include "coding_agent/usage_ledger.h"
#include "coding_agent/usage_proxy.h"
#include "common/fs.h"
#include "service/http_server.h"

namespace ptxbench::cli {
namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

struct ProxyArgs {
  std::string listen = "127.0.0.1:8743", store = "runs/runs.db";
  std::string openai_base_url, openai_key_env, anthropic_base_url, anthropic_key_env;
  bool no_inject = false;
  double call_timeout = 3600;
};

int run_proxy(const ProxyArgs& a) {
  ordered_json upstream = ordered_json::object();
  if (!a.openai_base_url.empty()) upstream["openai_base_url"] = a.openai_base_url;
  if (!a.openai_key_env.empty()) upstream["openai_key_env"] = a.openai_key_env;
  if (!a.anthropic_base_url.empty()) upstream["anthropic_base_url"] = a.anthropic_base_url;
  if (!a.anthropic_key_env.empty()) upstream["anthropic_key_env"] = a.anthropic_key_env;
  coding_agent::ProxyConfig c;
  c.upstream = coding_agent::upstream_config_from_json(upstream, "proxy options");
  auto [host, port] = parse_listen_address(a.listen);
  c.host = host;
  c.port = port;
  c.inject_stream_usage = !a.no_inject;
  c.call_timeout_s = a.call_timeout;
  if (fs::path(a.store).has_parent_path()) fs::create_directories(fs::path(a.store).parent_path());
  coding_agent::UsageLedger ledger(a.store);
  coding_agent::UsageProxy proxy(c, ledger);

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  fmt::print("ptxbench proxy listening on {0} (store {1}): an agent of trajectory ID gets the base URL {0}/t/ID/v1 "
             "(OpenAI formats) or {0}/t/ID (Anthropic)\n",
             proxy.url(), a.store);
  std::fflush(stdout);
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  proxy.stop();
  fmt::print(stderr, "[proxy] stopped after {} calls\n", proxy.calls());
  return 0;
}

}  // namespace

void register_proxy(CLI::App& app, Action& action) {
  static ProxyArgs a;
  auto* cmd = app.add_subcommand("proxy", "pass a coding agent's model calls through to its provider, recording their tokens");
  cmd->add_option("--listen", a.listen, "HOST:PORT to listen on (loopback: the agent runs here)")->capture_default_str();
  cmd->add_option("--store", a.store, "run store (SQLite) whose usage ledger records the calls")->capture_default_str();
  cmd->add_option("--openai-base-url", a.openai_base_url,
                  "upstream of /v1/chat/completions and /v1/responses: the URL they are appended to (https://api.openai.com/v1)");
  cmd->add_option("--openai-key-env", a.openai_key_env,
                  "environment variable holding the key the proxy sends upstream (default: pass the agent's own)");
  cmd->add_option("--anthropic-base-url", a.anthropic_base_url,
                  "upstream of /v1/messages: the URL /v1/messages is appended to (https://api.anthropic.com)");
  cmd->add_option("--anthropic-key-env", a.anthropic_key_env,
                  "environment variable holding the Anthropic key the proxy sends upstream");
  cmd->add_flag("--no-usage-injection", a.no_inject,
                "do not add stream_options.include_usage to streamed chat completions (their tokens are then unknown)");
  cmd->add_option("--call-timeout", a.call_timeout, "seconds one upstream call may take, streamed answer included")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->footer("Routes /t/<trajectory id>/v1/... to the upstream and records each call's prompt, completion, reasoning\n"
              "and cached tokens under that trajectory; `ptxbench mcp` hands them to the next evaluation's turn.\n"
              "Runs until SIGINT or SIGTERM. docs/coding_agents.md.");
  cmd->callback([&action] { action = [] { return run_proxy(a); }; });
}

}  // namespace ptxbench::cli

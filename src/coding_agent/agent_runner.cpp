#include "coding_agent/agent_runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "common/error.h"
#include "definitions/catalog.h"
#include "mcp/trajectory_session.h"
#include "prompt/prompt_builder.h"
#include "service/local_service.h"
#include "service/service_client.h"

namespace ptxbench::coding_agent {
namespace {

constexpr const char* kLib = "agent";
// A transcript of JSON events is a few MB for a long session; the cap keeps head and tail.
constexpr std::size_t kTranscriptCap = std::size_t{64} << 20;
// How long the MCP server may take to end its session once the CLI has exited (when the CLI closes
// its stdin; Codex terminates it instead, and the runner stores the end).
constexpr double kSessionEndWaitS = 3;

std::vector<std::string> env_entries(const ordered_json& j, const JsonChecker& check, const std::string& path) {
  std::vector<std::string> out;
  if (j.is_null()) return out;
  check.require_object(j, path);
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it->is_string()) check.fail(JsonChecker::join(path, it.key()), "expected a string");
    if (it.key().empty() || it.key().find('=') != std::string::npos)
      check.fail(JsonChecker::join(path, it.key()), "not an environment variable name");
    out.push_back(it.key() + "=" + it->get<std::string>());
  }
  return out;
}

std::string safe_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return s;
}

CallUsage& operator+=(CallUsage& u, const TurnRow& r) {
  u.prompt_tokens += r.prompt_tokens;
  u.completion_tokens += r.completion_tokens;
  u.reasoning_tokens += r.reasoning_tokens;
  u.cached_tokens += r.cached_tokens;
  return u;
}

ordered_json usage_json(const CallUsage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"reasoning_tokens", u.reasoning_tokens},
          {"cached_tokens", u.cached_tokens}};
}

/// attempt-N under the trajectory's folder <run_dir>/t<ID>-<definition>-<tag>-<index>: the first N
/// not taken.
fs::path next_attempt_dir(const fs::path& run_dir, int64_t trajectory_id, const TrajectoryKey& key) {
  const fs::path tdir = run_dir / fmt::format("t{}-{}-{}-{}", trajectory_id, safe_name(key.definition),
                                              safe_name(key.prompt_tag), key.index);
  int n = 1;
  while (fs::exists(tdir / fmt::format("attempt-{}", n))) ++n;
  return tdir / fmt::format("attempt-{}", n);
}

/// The trajectory's prompt, as our own agent's model reads it.
Prompt task_prompt(const TrajectoryKey& key, const std::string& arch) {
  Catalog catalog = Catalog::load(data_root());
  PromptBuilder prompts(data_root());
  const Definition& def = catalog.definition(key.definition);
  return prompts.build(def, resolve_workload(def, catalog.default_workload(def.name)), key.prompt_tag, arch);
}

}  // namespace

AgentRunConfig agent_run_config_from_json(const ordered_json& j, const std::string& document) {
  JsonChecker check(document);
  check.require_object(j, "");
  check.only_fields(j, "",
                    {"agent", "upstream", "definitions", "prompt_tags", "trajectories_per_tag", "budget", "arch",
                     "wall_time_s", "eval_timeout_s", "parallel", "service", "local_service_args", "token_file", "store",
                     "output_dir"});
  AgentRunConfig c;
  const ordered_json& a = check.member(j, "", "agent");
  check.require_object(a, "agent");
  check.only_fields(a, "agent", {"cli", "executable", "model", "provider", "options", "extra_args", "env", "instructions"});
  c.cli = check.string_field(a, "agent", "cli");
  (void)make_agent_cli(c.cli);  // an unknown CLI names the known ones
  c.executable = check.optional_string(a, "agent", "executable", "");
  c.model = check.string_field(a, "agent", "model");
  if (c.model.empty()) check.fail("agent.model", "must not be empty");
  c.provider = check.optional_string(a, "agent", "provider", "openai");
  if (c.provider != "openai" && c.provider != "anthropic") check.fail("agent.provider", "expected \"openai\" or \"anthropic\"");
  if (a.contains("options")) {
    check.require_object(a["options"], "agent.options");
    c.options = a["options"];
  }
  c.extra_args = check.string_list(a, "agent", "extra_args");
  if (a.contains("env")) c.env = env_entries(a["env"], check, "agent.env");
  c.instructions = check.optional_string(a, "agent", "instructions", "");
  c.upstream = upstream_config_from_json(check.member(j, "", "upstream"), document + ": upstream");
  c.definitions = check.string_list(j, "", "definitions");
  if (c.definitions.empty()) check.fail("definitions", "name at least one definition");
  c.prompt_tags = check.string_list(j, "", "prompt_tags");
  if (j.contains("trajectories_per_tag")) c.trajectories_per_tag = static_cast<int>(check.int_in(j, "", "trajectories_per_tag", 1, 1000));
  if (j.contains("budget")) c.budget = static_cast<int>(check.int_in(j, "", "budget", 1, 100));
  c.arch = check.optional_string(j, "", "arch", c.arch);
  if (j.contains("wall_time_s")) c.wall_time_s = check.number_in(j, "", "wall_time_s", 0, 7 * 24 * 3600.0, true);
  if (j.contains("eval_timeout_s")) c.eval_timeout_s = check.number_in(j, "", "eval_timeout_s", 0, 24 * 3600.0, true);
  if (j.contains("parallel")) c.parallel = static_cast<int>(check.int_in(j, "", "parallel", 1, 64));
  c.service = check.optional_string(j, "", "service", c.service);
  c.local_service_args = check.string_list(j, "", "local_service_args");
  if (!c.local_service_args.empty() && c.service != "local") check.fail("local_service_args", "goes with \"service\": \"local\"");
  c.token_file = check.optional_string(j, "", "token_file", "");
  c.store = check.optional_string(j, "", "store", c.store);
  c.output_dir = check.optional_string(j, "", "output_dir", c.output_dir);
  auto cli = make_agent_cli(c.cli);
  auto providers = cli->providers();
  if (std::find(providers.begin(), providers.end(), c.provider) == providers.end())
    check.fail("agent.provider", fmt::format("{} cannot speak {} through the proxy (it speaks: {})", c.cli, c.provider,
                                             fmt::join(providers, ", ")));
  if (c.provider == "openai" && c.upstream.openai_base_url.empty())
    check.fail("upstream.openai_base_url", "the agent speaks openai: name its upstream");
  if (c.provider == "anthropic" && c.upstream.anthropic_base_url.empty())
    check.fail("upstream.anthropic_base_url", "the agent speaks anthropic: name its upstream");
  return c;
}

std::string default_instructions(int budget) {
  return fmt::format(
      "You are a GPU kernel engineer, and this session is scored. The task is in TASK.md in your working directory "
      "(the same text the get_task tool of the MCP server `ptxbench` returns). Write the kernel, then submit it with "
      "the `evaluate` tool of the `ptxbench` MCP server, passing the complete .cu source: it compiles, checks and "
      "times the kernel on the target GPU and answers with the verdict and feedback. You have {} evaluations in all; "
      "use the feedback to improve the kernel between them, and stop when they are used up or you cannot do better. "
      "The `compile` tool is free and checks a build without running it. Only kernels submitted with `evaluate` count.",
      budget);
}

ordered_json AgentAttempt::to_json() const {
  ordered_json j = {{"trajectory_id", trajectory_id},
                    {"definition", key.definition},
                    {"prompt_tag", key.prompt_tag},
                    {"index", key.index},
                    {"dir", dir.string()},
                    {"exit", exit.describe()},
                    {"timed_out", timed_out},
                    {"wall_s", wall_s},
                    {"turns", turns},
                    {"status", to_string(status)},
                    {"stop_reason", stop_reason},
                    {"transcript", {{"events", transcript.events},
                                    {"tool_calls", transcript.tool_calls},
                                    {"evaluate_calls", transcript.evaluate_calls},
                                    {"last_message", transcript.last_message}}},
                    {"turn_tokens", usage_json(turn_usage)},
                    {"after_last_evaluation", {{"calls", after_last.calls}, {"tokens", usage_json(after_last.usage)}}}};
  if (transcript.reported_usage) j["transcript"]["tokens_the_cli_counted"] = usage_json(*transcript.reported_usage);
  return j;
}

AgentRunner::AgentRunner(AgentRunConfig config, AgentRunnerHooks hooks)
    : m_config(std::move(config)), m_hooks(std::move(hooks)), m_cli(make_agent_cli(m_config.cli)) {
  if (m_hooks.ptxbench.empty()) m_hooks.ptxbench = executable_dir() / "ptxbench";
  const fs::path install = agent_install_dir(PTXBENCH_SOURCE_DIR);
  if (!m_config.executable.empty()) {
    m_executable = m_config.executable;
    if (!fs::exists(m_executable))
      throw EnvironmentError(kLib, "agent.executable " + m_executable.string() + " does not exist");
    // An npm launcher (PREFIX/node_modules/.bin/NAME) tells its package's version.
    const fs::path bin_dir = m_executable.parent_path();
    if (bin_dir.filename() == ".bin" && bin_dir.parent_path().filename() == "node_modules")
      m_version = installed_version(*m_cli, bin_dir.parent_path().parent_path());
  } else {
    m_executable = installed_executable(*m_cli, install);
    if (m_executable.empty())
      throw EnvironmentError(kLib, fmt::format("{} ({}) is not installed under {}: run scripts/install_agent_clis.sh, or "
                                               "name the CLI in agent.executable",
                                               m_cli->name(), m_cli->npm_package(), install.string()));
    m_version = installed_version(*m_cli, install);
  }
  // Definitions, tags and the target are checked now: a bad one stores nothing and starts nothing.
  Catalog catalog = Catalog::load(data_root());
  PromptBuilder prompts(data_root());
  m_tags = m_config.prompt_tags.empty() ? std::vector<std::string>{prompts.default_tags().back()} : m_config.prompt_tags;
  for (const auto& name : m_config.definitions) {
    const Definition& def = catalog.definition(name);
    for (const auto& tag : m_tags) (void)prompts.build(def, resolve_workload(def, catalog.default_workload(def.name)), tag, m_config.arch);
  }
}

void AgentRunner::log(const std::string& line) const {
  if (m_hooks.log) m_hooks.log(line);
  else std::fprintf(stderr, "[agent] %s\n", line.c_str());
}

ordered_json AgentRunner::agent_json() const {
  return {{"cli", m_cli->name()},       {"package", m_cli->npm_package()}, {"version", m_version},
          {"model", m_config.model},    {"provider", m_config.provider},    {"options", m_config.options},
          {"wall_time_s", m_config.wall_time_s}};
}

std::string AgentRunner::open_run(RunStore& store, const std::string& run_id, const ordered_json& agent) const {
  if (run_id.empty()) {
    // The run: what `ptxbench mcp` would create, plus the agent that works in it.
    ordered_json c = {{"policy", mcp::kMcpPolicy},
                      {"definitions", m_config.definitions},
                      {"prompt_tags", m_tags},
                      {"trajectories_per_tag", m_config.trajectories_per_tag},
                      {"num_turns", m_config.budget},
                      {"service", m_config.service},
                      {"eval_options", ordered_json::object()},
                      {"eval_timeout_s", m_config.eval_timeout_s},
                      {"arch", m_config.arch},
                      {"agent", agent}};
    return store.create_run(c, m_config.model + " (" + m_cli->name() + ")");
  }
  RunInfo info = store.run(run_id);
  if (info.config.value("policy", "") != mcp::kMcpPolicy || !info.config.contains("agent"))
    throw InputError(kLib, "run " + run_id + " is not an agent run (made by `ptxbench agent run`)");
  if (info.config.value("num_turns", 0) != m_config.budget)
    throw InputError(kLib, fmt::format("run {} has a budget of {} evaluations, the config {}", run_id,
                                       info.config.value("num_turns", 0), m_config.budget));
  if (info.status != RunStatus::running) store.set_run_status(run_id, RunStatus::running);
  return run_id;
}

std::exception_ptr AgentRunner::run_trajectories(RunStore& store, UsageLedger& ledger, const UsageProxy& proxy,
                                                 const std::string& service_url, AgentRunResult& result) {
  std::vector<TrajectoryKey> keys;
  for (const auto& def : m_config.definitions)
    for (const auto& tag : m_tags)
      for (int i = 0; i < m_config.trajectories_per_tag; ++i) keys.push_back({def, "", tag, i});
  std::mutex mutex;
  std::size_t next = 0;
  std::vector<std::optional<AgentAttempt>> done(keys.size());
  std::exception_ptr failure;
  auto worker = [&] {
    for (;;) {
      std::size_t k;
      {
        std::lock_guard lock(mutex);
        if (next >= keys.size() || failure) return;
        k = next++;
      }
      try {
        int64_t id = store.ensure_trajectory(result.run_id, keys[k]);
        TrajectoryInfo t = store.trajectory(id);
        if (t.status != TrajectoryStatus::running) {
          log(fmt::format("trajectory {} ({} {} {}) is {} already: skipped", id, keys[k].definition, keys[k].prompt_tag,
                          keys[k].index, to_string(t.status)));
          std::lock_guard lock(mutex);
          ++result.skipped;
          continue;
        }
        done[k] = run_one(store, ledger, proxy, result.run_id, service_url, keys[k]);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < std::min<int>(m_config.parallel, static_cast<int>(keys.size())); ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (auto& a : done)
    if (a) result.attempts.push_back(std::move(*a));
  return failure;
}

AgentRunResult AgentRunner::run(const std::string& run_id_in) {
  AgentRunResult result;
  result.cli = m_cli->name();
  result.cli_version = m_version;
  const fs::path store_path = fs::absolute(m_config.store);
  fs::create_directories(store_path.parent_path());
  RunStore store(store_path.string());

  std::unique_ptr<LocalService> local;
  std::string service_url = m_config.service;
  if (m_config.service == "local") {
    local = std::make_unique<LocalService>(m_hooks.ptxbench, store_path.parent_path() / "service.db", m_config.local_service_args);
    service_url = local->url();
  }
  ServiceClient service(service_url, service_client_options(m_config.token_file));
  service.require_definitions(m_config.definitions, "agent run");

  UsageLedger ledger(store_path.string());  // the proxy's key and the service are checked before the run is stored
  ProxyConfig pc;
  pc.upstream = m_config.upstream;
  pc.call_timeout_s = m_config.wall_time_s;
  pc.threads = std::max(32, 4 * m_config.parallel);  // a streamed call holds a thread; agents make a few at once
  UsageProxy proxy(pc, ledger);

  const ordered_json agent = agent_json();
  result.run_id = open_run(store, run_id_in, agent);
  log(fmt::format("run {}: {} {} with model {}, {} evaluations per trajectory, wall time {} s", result.run_id,
                  m_cli->name(), m_version.empty() ? m_executable.string() : m_version, m_config.model, m_config.budget,
                  m_config.wall_time_s));
  log("proxy on " + proxy.url() + ", service " + service_url);

  std::exception_ptr failure = run_trajectories(store, ledger, proxy, service_url, result);
  proxy.stop();
  bool running = false;
  for (const auto& t : store.list_trajectories(result.run_id)) running |= t.status == TrajectoryStatus::running;
  if (!running) store.set_run_status(result.run_id, RunStatus::finished);

  ordered_json summary = {{"run_id", result.run_id}, {"agent", agent}, {"proxy_calls", proxy.calls()},
                          {"skipped", result.skipped}, {"attempts", ordered_json::array()}};
  for (const auto& a : result.attempts) summary["attempts"].push_back(a.to_json());
  const fs::path run_dir = fs::path(m_config.output_dir) / result.run_id;
  fs::create_directories(run_dir);
  write_file_atomic(run_dir / "summary.json", summary.dump(2) + "\n");
  if (failure) std::rethrow_exception(failure);
  return result;
}

AgentLaunch AgentRunner::launch_for(const AgentAttempt& a, const UsageProxy& proxy, const std::string& run_id,
                                    const std::string& service_url) const {
  AgentLaunch l;
  l.workspace = a.dir / "workspace";
  l.home = a.dir / "home";
  l.model = m_config.model;
  l.provider = m_config.provider;
  l.openai_base_url = proxy.openai_base_url(a.trajectory_id);
  l.anthropic_base_url = proxy.anthropic_base_url(a.trajectory_id);
  l.mcp_command = {fs::absolute(m_hooks.ptxbench).string(), "mcp", "--run", run_id, "--definition", a.key.definition,
                   "--tag", a.key.prompt_tag, "--index", std::to_string(a.key.index), "--store",
                   fs::absolute(m_config.store).string(), "--service", service_url, "--eval-timeout",
                   fmt::format("{}", m_config.eval_timeout_s)};
  if (!m_config.token_file.empty()) {
    l.mcp_command.push_back("--token-file");
    l.mcp_command.push_back(fs::absolute(m_config.token_file).string());
  }
  l.mcp_env = {"PTXBENCH_HOME=" + data_root().string()};
  for (const char* name : {"PTXBENCH_CACHE_DIR", "PTXBENCH_TOKEN", "PTXBENCH_CLIENT"})
    if (const char* v = std::getenv(name)) l.mcp_env.push_back(std::string(name) + "=" + v);
  l.prompt = m_config.instructions.empty() ? default_instructions(m_config.budget) : m_config.instructions;
  l.tool_timeout_s = m_config.eval_timeout_s + 60;
  l.options = m_config.options;
  l.extra_args = m_config.extra_args;
  l.env = m_config.env;
  return l;
}

void AgentRunner::run_agent(const AgentLaunch& l, AgentAttempt& a) const {
  ProcessSpec spec = m_cli->prepare(m_executable, l);
  spec.output_cap_bytes = kTranscriptCap;
  log(fmt::format("trajectory {} ({}, tag {}, index {}): {} starts in {}", a.trajectory_id, a.key.definition,
                  a.key.prompt_tag, a.key.index, m_cli->name(), a.dir.string()));
  const auto start = std::chrono::steady_clock::now();
  // The MCP server's command line up to --index, as /proc/PID/cmdline holds it (NUL-separated):
  // it names this trajectory's server alone. A CLI may start it in a process group of its own.
  std::string mcp_marker;
  for (std::size_t i = 1; i < 10 && i < l.mcp_command.size(); ++i) mcp_marker += l.mcp_command[i] + '\0';
  {
    ChildProcess child(spec);
    std::optional<ExitStatus> status = child.wait_for(m_config.wall_time_s);
    if (!status) {
      a.timed_out = true;
      // The MCP server first: once the CLI is gone it would end the session as if the agent had.
      kill_processes_mentioning(mcp_marker);
      status = child.kill_and_wait();
    }
    a.exit = *status;
    write_file_atomic(a.dir / "transcript.jsonl", child.stdout_capture().text);
    write_file_atomic(a.dir / "stderr.log", child.stderr_capture().text);
  }
  a.wall_s = seconds_since(start);
  // What the CLI left behind in its folders (an MCP server it did not stop) goes now.
  kill_processes_in(a.dir.string());
}

void AgentRunner::end_session(RunStore& store, const AgentAttempt& a, const Prompt& prompt, const std::string& run_id) const {
  // The MCP server ends the session when its stdin closes; one terminated by the CLI or killed with
  // it (on a timeout the whole group is) leaves that to us.
  const auto wait_until = std::chrono::steady_clock::now() + std::chrono::duration<double>(kSessionEndWaitS);
  while (!a.timed_out && store.trajectory(a.trajectory_id).status == TrajectoryStatus::running &&
         std::chrono::steady_clock::now() < wait_until)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (store.trajectory(a.trajectory_id).status != TrajectoryStatus::running) return;
  ResumePoint rp = store.resume_point(a.trajectory_id);
  // An agent that exited on its own ended the session as surely as one that closed its stdin.
  std::string reason = a.timed_out        ? fmt::format("agent wall-time limit of {} s reached", m_config.wall_time_s)
                       : a.exit.success() ? std::string(mcp::kEndedReason)
                                          : "agent exited (" + a.exit.describe() + ")";
  const bool never_opened = rp.next() == NextAction::store_initial_messages;
  if (never_opened && !a.timed_out && !a.exit.success()) {
    // The CLI failed before its MCP server opened the session (Codex ends so when its required
    // server cannot start): neither the model nor the evaluator was asked anything, so nothing may
    // count against the model.
    log(fmt::format("trajectory {}: {} {} before its MCP server opened the session; nothing was evaluated and the "
                    "trajectory stays open (`ptxbench agent run --run {}` retries it); {} says why",
                    a.trajectory_id, m_cli->name(), a.exit.describe(), run_id, (a.dir / "stderr.log").string()));
  } else if (rp.next() == NextAction::next_turn || never_opened) {
    try {
      if (rp.next() == NextAction::store_initial_messages)  // the agent never started its MCP server
        store.record_initial_messages(a.trajectory_id, {{"system", prompt.system, 0, 0, ""}, {"user", prompt.user, 0, 0, ""}});
      store.finish_trajectory(a.trajectory_id, TrajectoryStatus::finished, reason);
    } catch (const RunStoreError& e) {
      log(fmt::format("trajectory {}: its MCP session ended it meanwhile ({})", a.trajectory_id, e.what()));
    }
  } else {
    log(fmt::format("trajectory {}: evaluation {} still waits for its verdict; it stays open (`ptxbench agent run "
                    "--run {}` resumes it)",
                    a.trajectory_id, rp.turn, run_id));
  }
}

AgentAttempt AgentRunner::run_one(RunStore& store, UsageLedger& ledger, const UsageProxy& proxy, const std::string& run_id,
                                  const std::string& service_url, const TrajectoryKey& key) {
  AgentAttempt a;
  a.key = key;
  a.trajectory_id = store.ensure_trajectory(run_id, key);
  a.dir = next_attempt_dir(fs::absolute(fs::path(m_config.output_dir) / run_id), a.trajectory_id, key);
  const AgentLaunch l = launch_for(a, proxy, run_id, service_url);
  fs::create_directories(l.workspace);
  fs::create_directories(l.home);
  // The task, as our own agent's model reads it, in the workspace.
  const Prompt prompt = task_prompt(key, m_config.arch);
  write_file_atomic(l.workspace / "TASK.md", prompt.system + "\n\n" + prompt.user + "\n");

  run_agent(l, a);
  end_session(store, a, prompt, run_id);
  TrajectoryInfo t = store.trajectory(a.trajectory_id);
  a.status = t.status;
  a.stop_reason = t.stop_reason;
  for (const TurnRow& r : store.turn_rows(a.trajectory_id)) {
    a.turn_usage += r;
    ++a.turns;
  }
  a.after_last = ledger.unattributed(a.trajectory_id);
  a.transcript = m_cli->summarize(read_file(a.dir / "transcript.jsonl"));
  write_file_atomic(a.dir / "summary.json", a.to_json().dump(2) + "\n");
  log(fmt::format("trajectory {}: {} after {:.1f} s ({}), {} evaluations, {} tokens in turns + {} after the last "
                  "evaluation",
                  a.trajectory_id, to_string(a.status), a.wall_s, a.timed_out ? "wall-time limit" : a.exit.describe(),
                  a.turns, a.turn_usage.prompt_tokens + a.turn_usage.completion_tokens,
                  a.after_last.usage.prompt_tokens + a.after_last.usage.completion_tokens));
  return a;
}

}  // namespace ptxbench::coding_agent

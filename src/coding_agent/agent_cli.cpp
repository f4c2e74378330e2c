// The adapters: Codex (`codex exec`, Responses API, config.toml under CODEX_HOME) and opencode
// (`opencode run`, chat completions or Anthropic Messages through the AI SDK providers bundled in
// its binary, opencode.json named by OPENCODE_CONFIG). What each needs to run offline was found
// by running it in a network namespace with nothing but loopback (docs/coding_agents.md).
#include "coding_agent/agent_cli.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <sstream>

#include "common/error.h"

namespace ptxbench::coding_agent {
namespace {

constexpr const char* kLib = "agent";
/// The key the CLI sends: the proxy replaces it with the real one, so the agent never holds it.
constexpr const char* kDummyKey = "ptxbench-proxy-adds-the-real-key";
/// The MCP server's name in the CLIs' configs: Codex offers its tools as the namespace
/// mcp__ptxbench, opencode as ptxbench_<tool>.
constexpr const char* kServer = "ptxbench";

const ordered_json kNull;

const ordered_json& member(const ordered_json& j, const char* key) {
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

int64_t count_of(const ordered_json& j, const char* key) {
  const ordered_json& v = member(j, key);
  return v.is_number_integer() ? v.get<int64_t>() : 0;
}

std::string option_string(const ordered_json& options, const char* key, const std::string& fallback,
                          const std::vector<std::string>& allowed = {}) {
  const ordered_json& v = member(options, key);
  if (v.is_null()) return fallback;
  if (!v.is_string()) throw InputError(kLib, fmt::format("agent.options.{} must be a string", key));
  std::string s = v.get<std::string>();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    throw InputError(kLib, fmt::format("agent.options.{} must be one of {}, got '{}'", key, fmt::join(allowed, ", "), s));
  return s;
}

void only_options(const ordered_json& options, const std::string& cli, std::initializer_list<const char*> allowed) {
  if (options.is_null()) return;
  if (!options.is_object()) throw InputError(kLib, "agent.options must be an object");
  for (auto it = options.begin(); it != options.end(); ++it)
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return it.key() == a; }))
      throw InputError(kLib, fmt::format("agent.options.{}: not an option of {} (its options: {})", it.key(), cli,
                                         fmt::join(allowed, ", ")));
}

std::string toml_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + toml_string(items[i]);
  return out + "]";
}

/// "NAME=value" entries as a TOML inline table or a JSON object.
std::vector<std::pair<std::string, std::string>> split_env(const std::vector<std::string>& env) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : env) {
    auto eq = e.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError(kLib, "environment entry '" + e + "' is not NAME=value");
    out.emplace_back(e.substr(0, eq), e.substr(eq + 1));
  }
  return out;
}

void for_each_json_line(const std::string& text, const std::function<void(const ordered_json&)>& fn) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() != '{') continue;
    ordered_json j = ordered_json::parse(line, nullptr, false);
    if (j.is_object()) fn(j);
  }
}

// ---------------------------------------------------------------------------------------------
// Codex

class CodexCli final : public AgentCli {
 public:
  std::string name() const override { return "codex"; }
  std::string npm_package() const override { return "@openai/codex"; }
  std::string binary() const override { return "codex"; }
  // Codex speaks only the Responses API to a custom provider (wire_api = "chat" is refused).
  std::vector<std::string> providers() const override { return {"openai"}; }

  ProcessSpec prepare(const fs::path& executable, const AgentLaunch& l) const override {
    only_options(l.options, name(), {"sandbox", "reasoning_effort"});
    if (l.provider != "openai")
      throw InputError(kLib, "codex speaks only the OpenAI Responses API to a custom provider: set agent.provider to openai");
    const std::string sandbox =
        option_string(l.options, "sandbox", "workspace-write", {"read-only", "workspace-write", "danger-full-access"});
    const std::string effort = option_string(l.options, "reasoning_effort", "");
    const fs::path codex_home = l.home / ".codex";
    fs::create_directories(codex_home);
    std::string toml = "# Written by ptxbench agent run (src/coding_agent/agent_cli.cpp): the proxy as the model\n"
                       "# provider, ptxbench mcp as the only MCP server, nothing that calls home.\n";
    toml += "model = " + toml_string(l.model) + "\n";
    toml += "model_provider = \"ptxbench\"\n";
    toml += "approval_policy = \"never\"\n";
    toml += "sandbox_mode = " + toml_string(sandbox) + "\n";
    toml += "check_for_update_on_startup = false\n";
    if (!effort.empty()) toml += "model_reasoning_effort = " + toml_string(effort) + "\n";
    toml += "\n[model_providers.ptxbench]\n";
    toml += "name = \"ptxbench proxy\"\n";
    toml += "base_url = " + toml_string(l.openai_base_url) + "\n";
    toml += "wire_api = \"responses\"\n";
    toml += "env_key = \"PTXBENCH_PROXY_KEY\"\n";
    // The proxy passes the provider's own errors through; Codex's retries are the agent's.
    toml += "request_max_retries = 4\nstream_max_retries = 4\n";
    toml += "stream_idle_timeout_ms = 900000\n";  // a reasoning model may think for minutes
    toml += fmt::format("\n[mcp_servers.{}]\n", kServer);
    toml += "command = " + toml_string(l.mcp_command.at(0)) + "\n";
    toml += "args = " + toml_array(std::vector<std::string>(l.mcp_command.begin() + 1, l.mcp_command.end())) + "\n";
    if (!l.mcp_env.empty()) {
      toml += "env = { ";
      bool first = true;
      for (const auto& [k, v] : split_env(l.mcp_env)) {
        toml += (first ? "" : ", ") + toml_string(k) + " = " + toml_string(v);
        first = false;
      }
      toml += " }\n";
    }
    // Required: Codex then waits for the server (up to startup_timeout_sec) before its first model
    // call, and ends at once if it cannot start it. An optional server gets only
    // mcp_optional_startup_grace_ms (1 s) and is otherwise left out of the tools without a word:
    // `ptxbench mcp` took 3.3-3.7 s to answer on a busy two-core machine (a cold 300 MB binary,
    // the tokenizer, a question to the service), and Codex did the task without the evaluator.
    toml += "required = true\n";
    toml += "startup_timeout_sec = 120\n";
    toml += fmt::format("tool_timeout_sec = {}\n", static_cast<int64_t>(l.tool_timeout_s));
    write_file_atomic(codex_home / "config.toml", toml);

    ProcessSpec spec;
    spec.argv = {executable.string(), "exec", "--json", "--skip-git-repo-check", "--color", "never", "-C",
                 l.workspace.string(), "-o", (l.home / "last_message.txt").string()};
    spec.argv.insert(spec.argv.end(), l.extra_args.begin(), l.extra_args.end());
    spec.argv.push_back(l.prompt);
    spec.cwd = l.workspace.string();
    // A temp folder of its own: Codex refuses to create its helper binaries (the PATH aliases of
    // apply_patch and its Linux sandbox) under CODEX_HOME when CODEX_HOME lies inside the temp
    // folder, which it would whenever the output folder is under /tmp (as in the tests).
    const fs::path tmp = l.home / "tmp";
    fs::create_directories(tmp);
    spec.env_overrides = {"CODEX_HOME=" + codex_home.string(), "HOME=" + l.home.string(), "TMPDIR=" + tmp.string(),
                          std::string("PTXBENCH_PROXY_KEY=") + kDummyKey, "NO_COLOR=1"};
    spec.env_overrides.insert(spec.env_overrides.end(), l.env.begin(), l.env.end());
    return spec;
  }

  TranscriptSummary summarize(const std::string& transcript) const override {
    TranscriptSummary s;
    for_each_json_line(transcript, [&](const ordered_json& j) {
      ++s.events;
      const std::string type = member(j, "type").is_string() ? j["type"].get<std::string>() : "";
      const ordered_json& item = member(j, "item");
      const std::string kind = member(item, "type").is_string() ? item["type"].get<std::string>() : "";
      if (type == "item.completed") {
        if (kind == "mcp_tool_call") {
          ++s.tool_calls;
          if (member(item, "server") == kServer && member(item, "tool") == "evaluate") ++s.evaluate_calls;
        } else if (kind == "command_execution" || kind == "file_change" || kind == "web_search") {
          ++s.tool_calls;
        } else if (kind == "agent_message" && member(item, "text").is_string()) {
          s.last_message = item["text"].get<std::string>();
        }
      } else if (type == "turn.completed") {
        const ordered_json& u = member(j, "usage");
        CallUsage c;
        c.prompt_tokens = count_of(u, "input_tokens");  // cached included
        c.cached_tokens = count_of(u, "cached_input_tokens");
        c.completion_tokens = count_of(u, "output_tokens");
        c.reasoning_tokens = count_of(u, "reasoning_output_tokens");
        c.reported = true;
        if (!s.reported_usage) s.reported_usage = CallUsage{};
        *s.reported_usage += c;
      }
    });
    return s;
  }
};

// ---------------------------------------------------------------------------------------------
// opencode

class OpencodeCli final : public AgentCli {
 public:
  std::string name() const override { return "opencode"; }
  std::string npm_package() const override { return "opencode-ai"; }
  std::string binary() const override { return "opencode"; }
  std::vector<std::string> providers() const override { return {"openai", "anthropic"}; }

  ProcessSpec prepare(const fs::path& executable, const AgentLaunch& l) const override {
    only_options(l.options, name(), {"permission"});
    fs::create_directories(l.home);
    const bool anthropic = l.provider == "anthropic";
    if (!anthropic && l.provider != "openai")
      throw InputError(kLib, "opencode speaks openai (chat completions) or anthropic, not '" + l.provider + "'");
    ordered_json provider = {
        {"npm", anthropic ? "@ai-sdk/anthropic" : "@ai-sdk/openai-compatible"},
        {"name", "ptxbench proxy"},
        // The Anthropic SDK appends /messages to a base URL that ends in /v1.
        {"options", {{"baseURL", anthropic ? l.anthropic_base_url + "/v1" : l.openai_base_url}, {"apiKey", kDummyKey}}},
        {"models", {{l.model, {{"name", l.model}, {"tool_call", true}}}}}};
    ordered_json mcp_env = ordered_json::object();
    for (const auto& [k, v] : split_env(l.mcp_env)) mcp_env[k] = v;
    ordered_json config = {
        {"$schema", "https://opencode.ai/config.json"},
        {"model", std::string(kServer) + "/" + l.model},
        {"small_model", std::string(kServer) + "/" + l.model},  // its title and summary calls go through the proxy too
        {"enabled_providers", {kServer}},
        {"provider", {{kServer, provider}}},
        {"mcp", {{kServer, {{"type", "local"}, {"command", l.mcp_command}, {"environment", mcp_env}, {"enabled", true},
                            {"timeout", static_cast<int64_t>(l.tool_timeout_s * 1000)}}}}},
        {"autoupdate", false},
        {"share", "disabled"},
        {"permission", member(l.options, "permission").is_object() ? l.options["permission"]
                                                                    : ordered_json{{"edit", "allow"}, {"bash", "allow"}, {"webfetch", "deny"}}}};
    const fs::path config_path = l.home / "opencode.json";
    write_file_atomic(config_path, config.dump(2) + "\n");

    ProcessSpec spec;
    spec.argv = {executable.string(), "run", "--format", "json", "--model", std::string(kServer) + "/" + l.model};
    spec.argv.insert(spec.argv.end(), l.extra_args.begin(), l.extra_args.end());
    spec.argv.push_back(l.prompt);
    spec.cwd = l.workspace.string();
    const std::string h = l.home.string();
    spec.env_overrides = {"HOME=" + h,
                          "XDG_CONFIG_HOME=" + h + "/.config",
                          "XDG_DATA_HOME=" + h + "/.local/share",
                          "XDG_CACHE_HOME=" + h + "/.cache",
                          "XDG_STATE_HOME=" + h + "/.local/state",
                          "OPENCODE_CONFIG=" + config_path.string(),
                          "OPENCODE_DISABLE_PROJECT_CONFIG=1",
                          "OPENCODE_DISABLE_AUTOUPDATE=1",
                          "OPENCODE_DISABLE_MODELS_FETCH=1",
                          "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
                          "OPENCODE_DISABLE_SHARE=1",
                          "OPENCODE_DISABLE_CLAUDE_CODE=1",
                          "OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
                          "NO_COLOR=1"};
    spec.env_overrides.insert(spec.env_overrides.end(), l.env.begin(), l.env.end());
    return spec;
  }

  TranscriptSummary summarize(const std::string& transcript) const override {
    TranscriptSummary s;
    for_each_json_line(transcript, [&](const ordered_json& j) {
      ++s.events;
      const ordered_json& part = member(j, "part");
      const std::string type = member(j, "type").is_string() ? j["type"].get<std::string>() : "";
      if (type == "tool_use") {
        ++s.tool_calls;
        if (member(part, "tool") == std::string(kServer) + "_evaluate") ++s.evaluate_calls;
      } else if (type == "text" && member(part, "text").is_string()) {
        s.last_message = part["text"].get<std::string>();
      } else if (type == "step_finish") {
        const ordered_json& t = member(part, "tokens");
        CallUsage c;
        c.cached_tokens = count_of(member(t, "cache"), "read");
        c.prompt_tokens = count_of(t, "input") + c.cached_tokens + count_of(member(t, "cache"), "write");
        c.completion_tokens = count_of(t, "output") + count_of(t, "reasoning");
        c.reasoning_tokens = count_of(t, "reasoning");
        c.reported = true;
        if (!s.reported_usage) s.reported_usage = CallUsage{};
        *s.reported_usage += c;
      }
    });
    return s;
  }
};

}  // namespace

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\u{:04X}", static_cast<unsigned>(c));
        else out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::unique_ptr<AgentCli> make_agent_cli(const std::string& name) {
  if (name == "codex") return std::make_unique<CodexCli>();
  if (name == "opencode") return std::make_unique<OpencodeCli>();
  throw InputError(kLib, fmt::format("unknown agent CLI '{}' (known: {})", name, fmt::join(agent_cli_names(), ", ")));
}

std::vector<std::string> agent_cli_names() { return {"codex", "opencode"}; }

fs::path agent_install_dir(const fs::path& source_root) { return source_root / "third_party" / "agents"; }

fs::path installed_executable(const AgentCli& cli, const fs::path& install_dir) {
  fs::path p = install_dir / "node_modules" / ".bin" / cli.binary();
  return fs::exists(p) ? p : fs::path{};
}

std::string installed_version(const AgentCli& cli, const fs::path& install_dir) {
  fs::path manifest = install_dir / "node_modules" / cli.npm_package() / "package.json";
  if (!fs::exists(manifest)) return "";
  ordered_json j = ordered_json::parse(read_file(manifest), nullptr, false);
  return member(j, "version").is_string() ? j["version"].get<std::string>() : "";
}

}  // namespace ptxbench::coding_agent

// The MCP server of `ptxbench mcp` (docs/design.md §10; protocol revision 2025-11-25 over stdio): the
// lifecycle (initialize with version negotiation, notifications/initialized, ping), tools/list and
// tools/call with four tools — list_definitions, get_task, compile (free), evaluate (through the
// service, counted against the trajectory's budget, stored as a turn). Protocol errors (unknown
// method or tool, malformed request) are JSON-RPC errors; bad tool arguments, a spent budget and
// a failed evaluation are tool results with isError, which a model reads and can act on. docs/mcp.md.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compile/compiler.h"
#include "definitions/catalog.h"
#include "mcp/json_rpc.h"
#include "mcp/trajectory_session.h"
#include "prompt/prompt_builder.h"

namespace ptxbench::mcp {

/// The revision this server implements; the answer to a client that asks for one we do not know.
inline constexpr const char* kProtocolVersion = "2025-11-25";
/// The revisions a client may ask for and get, newest first (what changed between them does not
/// touch the messages this server sends or reads, docs/mcp.md).
const std::vector<std::string>& supported_protocol_versions();

struct ServerOptions {
  std::string version = PTXBENCH_VERSION;  ///< serverInfo.version
  std::size_t max_source_bytes = std::size_t{1} << 20;  ///< the service's limit on a source
  /// The compile tool's options; `arch` is replaced with the session's.
  CompileOptions compile{};
  std::function<void(const std::string&)> log;  ///< diagnostics; empty: stderr with "[mcp] "
};

class McpServer {
 public:
  /// Messages sent besides the response (notifications/progress while a verdict is awaited).
  using Send = std::function<void(const ordered_json& message)>;

  McpServer(const Catalog& catalog, const PromptBuilder& prompts, TrajectorySession& session, ServerOptions options = {});
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  /// One incoming line: the message to answer with, or nullopt (notifications, responses, and
  /// malformed notifications get no answer). Thread-safe.
  std::optional<ordered_json> handle_line(std::string_view line, const Send& send = {});
  std::optional<ordered_json> handle(const RpcMessage& message, const Send& send = {});

  /// The stdio transport: reads messages from `in_fd` until end of input and writes answers to
  /// `out_fd`, one per line. tools/call requests run on threads of their own (an evaluation may
  /// take minutes; ping and notifications/cancelled are served meanwhile; a cancelled call gets no
  /// answer, though an evaluation already submitted is still stored). At end of input it waits for
  /// the calls in flight, then ends the session (TrajectorySession::end).
  void serve(int in_fd, int out_fd);

  /// The tools/list result.
  [[nodiscard]] const ordered_json& tools() const noexcept { return m_tools; }

 private:
  ordered_json initialize(const ordered_json& params);
  ordered_json call_tool(const ordered_json& params, const Send& send);
  ordered_json list_definitions() const;
  ordered_json get_task(const ordered_json& args) const;
  ordered_json compile(const ordered_json& args) const;
  ordered_json evaluate(const ordered_json& args, const ordered_json& progress_token, const Send& send);
  void log(const std::string& line) const;

  enum class State { fresh, initialized, ready };
  const Catalog& m_catalog;
  const PromptBuilder& m_prompts;
  TrajectorySession& m_session;
  ServerOptions m_options;
  ordered_json m_tools;
  mutable std::mutex m_mutex;
  State m_state = State::fresh;
  std::string m_version;  ///< the negotiated protocol revision
};

}  // namespace ptxbench::mcp

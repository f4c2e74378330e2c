// `ptxbench proxy` (issue 20): an HTTP pass-through between a coding agent's CLI and its model
// provider that records every call's tokens into the usage ledger of the run store, keyed by the
// trajectory named in the URL (/t/<trajectory id>/v1/...). It speaks what the CLIs speak:
// OpenAI chat completions and Responses (/v1/chat/completions, /v1/responses) and Anthropic
// Messages (/v1/messages), streaming (server-sent events, passed through as they arrive) or not.
// The agent gets a dummy key; the proxy adds the real one. docs/coding_agents.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "coding_agent/usage_ledger.h"
#include "common/json_check.h"
#include "service/http_server.h"

namespace ptxbench::coding_agent {

/// Where the proxy sends what it receives. The key itself is never configured, only the name of
/// the environment variable that holds it; "" passes the agent's own key header through.
struct UpstreamConfig {
  /// The URL that "/chat/completions" and "/responses" are appended to ("https://api.openai.com/v1",
  /// "http://127.0.0.1:8000/v1" for vLLM); "" refuses OpenAI-format calls.
  std::string openai_base_url;
  std::string openai_key_env;
  /// The URL that "/v1/messages" is appended to ("https://api.anthropic.com"); "" refuses them.
  std::string anthropic_base_url;
  std::string anthropic_key_env;
};

struct ProxyConfig {
  std::string host = "127.0.0.1";
  int port = 0;  ///< 0: ephemeral
  UpstreamConfig upstream;
  /// Add stream_options.include_usage to streamed chat completions that do not ask for it: without
  /// it an OpenAI-compatible stream carries no usage at all.
  bool inject_stream_usage = true;
  double connect_timeout_s = 10;
  double call_timeout_s = 3600;  ///< one upstream call, first byte to last (a streamed answer included)
  int threads = 32;
  std::size_t max_request_bytes = 64 << 20;  ///< an agent's whole conversation is one request
};
/// Strict, as model_config_from_json: {"openai_base_url", "openai_key_env", "anthropic_base_url",
/// "anthropic_key_env"}; the keys, if named, must be set in the environment now.
[[nodiscard]] UpstreamConfig upstream_config_from_json(const ordered_json& j, const std::string& document = "upstream");

/// Reads the tokens of one call from its answer as it streams by: server-sent events of any of
/// the three formats (the last usage seen wins; Anthropic's is assembled from message_start and
/// message_delta), or a whole JSON body. Pure: tested on its own.
class UsageMeter {
 public:
  explicit UsageMeter(WireApi api);
  /// Bytes of an event stream, in whatever pieces they arrive.
  void feed_events(std::string_view bytes);
  /// A whole JSON answer (a non-streamed call, or an error body).
  void read_body(std::string_view body);
  /// Ends the stream (dispatches an event not closed by a blank line).
  void finish();

  [[nodiscard]] const CallUsage& usage() const noexcept { return m_usage; }
  /// The model the answer named ("" when none did).
  [[nodiscard]] const std::string& model() const noexcept { return m_model; }
  [[nodiscard]] int64_t events() const noexcept { return m_events; }

 private:
  void on_line(std::string_view line);
  void dispatch();
  void on_json(const ordered_json& j, const std::string& event);

  WireApi m_api;
  CallUsage m_usage;
  std::string m_model;
  std::string m_partial;  ///< an incomplete line
  std::string m_event;    ///< the current event's "event:" name
  std::string m_data;     ///< the current event's joined "data:" lines
  bool m_has_data = false;
  int64_t m_events = 0;
  int64_t m_anthropic_input = 0, m_anthropic_write = 0, m_anthropic_read = 0;  ///< message_start's parts
};

/// One proxy: an HTTP server on a loopback port in front of the configured upstreams.
class UsageProxy {
 public:
  /// Binds (throws Error("http", ...) when it cannot) and starts serving. `ledger` must outlive it.
  UsageProxy(ProxyConfig config, UsageLedger& ledger);
  ~UsageProxy();  ///< stop()
  UsageProxy(const UsageProxy&) = delete;
  UsageProxy& operator=(const UsageProxy&) = delete;

  /// Aborts the calls in flight (recorded with their error) and stops the server. Idempotent.
  void stop();

  [[nodiscard]] std::string url() const;  ///< "http://127.0.0.1:PORT"
  /// What an OpenAI-format client of the trajectory is given as its base URL: URL/t/ID/v1.
  [[nodiscard]] std::string openai_base_url(int64_t trajectory_id) const;
  /// What an Anthropic-format client is given (it appends /v1/messages): URL/t/ID.
  [[nodiscard]] std::string anthropic_base_url(int64_t trajectory_id) const;
  /// Calls answered so far (any status), for logs.
  [[nodiscard]] int64_t calls() const noexcept { return m_calls.load(); }

  /// The request handler itself (what the server calls), for tests that need no socket.
  std::optional<HttpResponse> handle(const HttpRequest& request, HttpStreamWriter& out);

 private:
  ProxyConfig m_config;
  UsageLedger& m_ledger;
  std::string m_openai_key, m_anthropic_key;
  std::atomic<bool> m_stopping{false};
  std::atomic<int64_t> m_calls{0};
  std::unique_ptr<HttpServer> m_server;  // last: stopped before the rest goes
};

}  // namespace ptxbench::coding_agent

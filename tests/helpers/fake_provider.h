// A scriptable fake model provider for tests: our HttpServer on an ephemeral loopback port that
// speaks the three wire formats coding agents and our model clients use — OpenAI chat
// completions, OpenAI Responses and Anthropic Messages — streamed (server-sent events, written
// event by event) or not. It answers with raw scripted replies (status, body, headers, delay),
// with scripted model turns (text, tool calls, usage) encoded in whatever format was called, or
// with turns a responder computes from each call (an agent's conversation, its tools).
// Every request is recorded. Out of script it answers 418, so a test that sends too much fails loudly.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/json_check.h"
#include "service/http_server.h"

namespace ptxbench::fakes {

/// One scripted raw reply: status, body, headers, and how long to stall before answering.
struct Scripted {
  using Headers = std::vector<std::pair<std::string, std::string>>;
  Scripted() = default;
  Scripted(int status_, std::string body_, Headers headers_ = {}, double delay_s_ = 0)
      : status(status_), body(std::move(body_)), headers(std::move(headers_)), delay_s(delay_s_) {}
  int status = 200;
  std::string body;
  Headers headers;
  double delay_s = 0;
};

/// The formats the fake speaks, by the path called.
enum class FakeApi { chat_completions, responses, anthropic_messages };

/// A tool call the model makes. For Codex's MCP tools, which it offers as a namespace
/// ({"type": "namespace", "name": "mcp__server", "tools": [...]}), `name_space` is that name and
/// `name` the tool's.
struct FakeToolCall {
  std::string id;         ///< "" : made up (call_1, call_2, ...)
  std::string name;
  std::string arguments;  ///< JSON text
  std::string name_space{};
};

/// Tokens the fake reports, in our convention: prompt includes cached, completion includes reasoning.
struct FakeUsage {
  int64_t prompt = 0, completion = 0, reasoning = 0, cached = 0;
  [[nodiscard]] bool operator==(const FakeUsage&) const = default;
  FakeUsage& operator+=(const FakeUsage& o) {
    prompt += o.prompt;
    completion += o.completion;
    reasoning += o.reasoning;
    cached += o.cached;
    return *this;
  }
};

/// One model turn: text and/or tool calls, with the usage the answer reports.
struct FakeTurn {
  std::string text;
  std::vector<FakeToolCall> tool_calls;
  FakeUsage usage{100, 20, 0, 0};
};

/// What the fake received, parsed.
struct FakeCall {
  FakeApi api = FakeApi::chat_completions;
  HttpRequest request;
  ordered_json body;    ///< the request body (null when it was not JSON)
  bool stream = false;  ///< body.stream
  /// The tool names offered: chat completions' function names, Responses' function names and the
  /// tools of its namespaces (as "namespace/name"), Anthropic's tool names.
  [[nodiscard]] std::vector<std::string> tool_names() const;
  /// Whether the conversation holds a tool's result already (role tool, function_call_output,
  /// tool_result blocks), and the text of the last one.
  [[nodiscard]] bool has_tool_result() const { return tool_result_count() > 0; }
  [[nodiscard]] int tool_result_count() const;
  [[nodiscard]] std::string last_tool_result() const;
};
using FakeResponder = std::function<FakeTurn(const FakeCall&)>;

/// The wire encodings of a turn, whole or as server-sent events (one string per event).
std::string encode_turn(FakeApi api, const FakeTurn& turn, const std::string& model);
std::vector<std::string> encode_turn_events(FakeApi api, const FakeTurn& turn, const std::string& model,
                                            bool include_usage = true);

class FakeProvider {
 public:
  FakeProvider();
  ~FakeProvider();
  FakeProvider(const FakeProvider&) = delete;
  FakeProvider& operator=(const FakeProvider&) = delete;

  /// Raw replies, served first, in order, whatever the path.
  void push(Scripted s, int times = 1);
  /// Model turns, served next, in the format of the path called (streamed when the body asks).
  void push_turn(FakeTurn turn);
  /// Answers calls once the scripts are spent.
  void set_responder(FakeResponder responder);
  /// Stall between streamed events (lets a test see a stream pass through piece by piece).
  void set_event_delay(double seconds);

  [[nodiscard]] std::vector<HttpRequest> requests() const;
  [[nodiscard]] std::vector<FakeCall> calls() const;  ///< the model calls (requests that parsed)
  /// The usage of every turn the fake answered with, summed.
  [[nodiscard]] FakeUsage usage_served() const;
  [[nodiscard]] int turns_served() const;
  [[nodiscard]] std::string url() const;

 private:
  std::optional<HttpResponse> handle(const HttpRequest& r, HttpStreamWriter& out);

  mutable std::mutex m_mutex;
  std::deque<Scripted> m_script;
  std::deque<FakeTurn> m_turns;
  FakeResponder m_responder;
  double m_event_delay_s = 0;
  std::vector<HttpRequest> m_requests;
  std::vector<FakeCall> m_calls;
  FakeUsage m_served;
  int m_turns_served = 0;
  std::unique_ptr<HttpServer> m_server;  // last: stopped (and its handlers joined) before the script goes
};

}  // namespace ptxbench::fakes

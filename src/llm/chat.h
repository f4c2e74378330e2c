// Provider-neutral chat types: what the agent sends a model and what comes back, with the token
// accounting of docs/design.md §6. The JSON shapes here are the ones stored in run records.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_check.h"

namespace ptxbench {

/// Why generation ended, normalised over providers: `stop` (the model finished: OpenAI "stop",
/// Anthropic "end_turn"/"stop_sequence"), `length` (the max_tokens limit: "length"/"max_tokens"),
/// `other` (content filter, refusal, tool call, anything else; the raw value is kept beside it).
enum class FinishReason { stop, length, other };

[[nodiscard]] std::string_view to_string(FinishReason reason);
/// "stop" | "length" | "other"; InputError otherwise.
[[nodiscard]] FinishReason finish_reason_from_string(std::string_view text);

struct ChatMessage {
  std::string role;  ///< "user" or "assistant"; the system text is ChatRequest::system
  std::string content;
  bool operator==(const ChatMessage&) const = default;
};

/// Token counts as the provider reported them. Subsets are included in their totals:
/// reasoning_tokens ⊆ completion_tokens and cached_tokens ⊆ prompt_tokens.
struct Usage {
  int64_t prompt_tokens = 0;      ///< every input token (Anthropic: input + cache write + cache read)
  int64_t completion_tokens = 0;  ///< every output token, reasoning included
  int64_t reasoning_tokens = 0;   ///< 0 where the provider does not report it (Anthropic)
  int64_t cached_tokens = 0;      ///< input tokens read from the provider's prompt cache

  Usage& operator+=(const Usage& other);
  bool operator==(const Usage&) const = default;
};
[[nodiscard]] Usage operator+(Usage a, const Usage& b);

struct ChatRequest {
  std::string system;  ///< empty: none sent
  std::vector<ChatMessage> messages;
  std::string model;                  ///< empty: the client's configured model
  std::optional<int64_t> max_tokens;  ///< absent: the configured value
  std::optional<double> temperature;  ///< absent: the configured value (or the provider's default)
  std::optional<double> top_p;
  /// Top-level body fields merged over the configured `extra` (e.g. {"reasoning_effort": "high"}).
  ordered_json extra = ordered_json::object();
};

struct ChatResponse {
  std::string text;               ///< the answer: message content (OpenAI) or the text blocks joined (Anthropic)
  std::string reasoning;          ///< visible reasoning: reasoning_content (vLLM, SGLang) or thinking blocks
  int reasoning_blocks = 0;       ///< Anthropic thinking and redacted_thinking blocks
  FinishReason finish_reason = FinishReason::other;
  std::string raw_finish_reason;  ///< as the provider said it: "stop", "end_turn", "max_tokens", ...
  Usage usage;
  std::string id;                 ///< the provider's response id
  std::string model;              ///< the model that answered, as reported
  double latency_s = 0;           ///< the successful attempt: request sent to response received
  double total_s = 0;             ///< the whole call: every attempt and back-off wait
  int attempts = 0;               ///< HTTP attempts; 1 when the first one succeeded
};

[[nodiscard]] ordered_json to_json(const ChatMessage& m);
[[nodiscard]] ordered_json to_json(const Usage& u);
[[nodiscard]] ordered_json to_json(const ChatRequest& r);
[[nodiscard]] ordered_json to_json(const ChatResponse& r);

/// Strict readers (stored records): unknown or mistyped fields are an InputError naming
/// `document` and the field path.
[[nodiscard]] Usage usage_from_json(const ordered_json& j, const std::string& document = "usage");
[[nodiscard]] ChatRequest chat_request_from_json(const ordered_json& j, const std::string& document = "chat request");
[[nodiscard]] ChatResponse chat_response_from_json(const ordered_json& j, const std::string& document = "chat response");

}  // namespace ptxbench

// The two wire formats as pure functions: request bodies from a ChatRequest, ChatResponses and
// provider errors from response bodies. No I/O here; model_client.cpp sends and retries.
#pragma once

#include <stdexcept>
#include <string>

#include "llm/chat.h"
#include "llm/model_client.h"

namespace ptxbench {

/// A 2xx body that is not a valid response of the format (not JSON, no choices, no usage, ...).
class MalformedResponse : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// POST {base_url}/chat/completions: the system text as the first message (role "system"),
/// max tokens under config.max_tokens_field, then config.extra and request.extra merged on top.
/// InputError when the request is unusable (no messages, a bad role, an extra field we own).
[[nodiscard]] ordered_json openai_request_body(const ModelConfig& config, const ChatRequest& request);
/// POST {base_url}/v1/messages: the system text as the top-level "system" field, max_tokens always.
[[nodiscard]] ordered_json anthropic_request_body(const ModelConfig& config, const ChatRequest& request);

/// Throw MalformedResponse with what was wrong. Fill text, reasoning, finish reasons, usage, id and
/// model; the caller adds timings and attempts.
[[nodiscard]] ChatResponse parse_openai_response(const std::string& body);
[[nodiscard]] ChatResponse parse_anthropic_response(const std::string& body);

/// What an error response says, read leniently: OpenAI {"error": {"message", "type", "code"}},
/// Anthropic {"type": "error", "error": {"type", "message"}}, vLLM's older top-level
/// {"message", "type", "code"}, or a non-JSON body (its start becomes the message).
struct ProviderError {
  std::string type;     ///< "rate_limit_error", "insufficient_quota", ...
  std::string code;     ///< OpenAI's error.code ("insufficient_quota"), a number as text, or ""
  std::string message;  ///< the provider's own words
  bool spend_limit = false;  ///< quota, billing or spend limit: retrying will not help
};
[[nodiscard]] ProviderError parse_provider_error(const std::string& body);

/// Fields of the request body that the client sets itself and `extra` may not override.
[[nodiscard]] bool is_reserved_body_field(const std::string& key);

}  // namespace ptxbench

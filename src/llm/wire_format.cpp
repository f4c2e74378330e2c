#include "llm/wire_format.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "common/error.h"
#include "common/text.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "model client";
constexpr std::size_t kMaxQuotedBody = 500;

const ordered_json kNull;

void check_messages(const ChatRequest& request) {
  if (request.messages.empty()) throw InputError(kLib, "a chat request needs at least one message");
  for (std::size_t i = 0; i < request.messages.size(); ++i) {
    const auto& role = request.messages[i].role;
    if (role != "user" && role != "assistant")
      throw InputError(kLib, "messages[" + std::to_string(i) + "].role must be \"user\" or \"assistant\", got \"" +
                                 role + "\" (the system text goes in ChatRequest::system)");
  }
}

/// config.extra, then request.extra over it; neither may set a field the client owns.
ordered_json merged_extra(const ModelConfig& config, const ChatRequest& request) {
  if (!request.extra.is_object()) throw InputError(kLib, "request extra must be a JSON object");
  ordered_json out = config.extra.is_object() ? config.extra : ordered_json::object();
  for (auto it = request.extra.begin(); it != request.extra.end(); ++it) {
    if (is_reserved_body_field(it.key()))
      throw InputError(kLib, "request extra." + it.key() + ": set by the client itself, not through extra");
    out[it.key()] = it.value();
  }
  return out;
}

void put_sampling(ordered_json& body, const ModelConfig& config, const ChatRequest& request) {
  if (auto t = request.temperature ? request.temperature : config.temperature) body["temperature"] = *t;
  if (auto p = request.top_p ? request.top_p : config.top_p) body["top_p"] = *p;
}

std::optional<int64_t> effective_max_tokens(const ModelConfig& config, const ChatRequest& request) {
  auto n = request.max_tokens ? request.max_tokens : config.max_tokens;
  if (n && *n < 1) throw InputError(kLib, "max_tokens must be at least 1, got " + std::to_string(*n));
  return n;
}

ordered_json parse_body(const std::string& body) {
  try {
    return ordered_json::parse(body);
  } catch (const nlohmann::json::parse_error& e) {
    std::string start = body.substr(0, std::min<std::size_t>(body.size(), 200));
    throw MalformedResponse("body is not JSON (byte " + std::to_string(e.byte) + "): '" + start + "'");
  }
}

/// An optional string member: "" when absent or null; anything else but a string is malformed.
std::string opt_string(const ordered_json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (!it->is_string()) throw MalformedResponse(where + "." + key + " is not a string: " + it->dump());
  return it->get<std::string>();
}

/// A token count: 0 when absent or null (when `required`, absence is malformed).
int64_t count(const ordered_json& j, const char* key, const std::string& where, bool required) {
  if (!j.is_object()) {
    if (j.is_null() && !required) return 0;
    throw MalformedResponse(where + " is not an object: " + j.dump());
  }
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) throw MalformedResponse(where + "." + key + " is missing");
    return 0;
  }
  if (!it->is_number_integer() || it->get<int64_t>() < 0)
    throw MalformedResponse(where + "." + key + " is not a token count: " + it->dump());
  return it->get<int64_t>();
}

const ordered_json& member_or_null(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

/// A success body that is really an error (some gateways answer 200 with {"error": ...}).
void reject_error_object(const ordered_json& j) {
  if (j.contains("error") && !j["error"].is_null())
    throw MalformedResponse("error object in a success response: " + parse_provider_error(j.dump()).message);
}

std::string scalar_text(const ordered_json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number() || j.is_boolean()) return j.dump();
  return "";
}

}  // namespace

bool is_reserved_body_field(const std::string& key) {
  static const std::array<const char*, 9> reserved = {"model", "messages", "system", "max_tokens",
                                                      "max_completion_tokens", "temperature", "top_p", "stream", "n"};
  return std::any_of(reserved.begin(), reserved.end(), [&](const char* r) { return key == r; });
}

ordered_json openai_request_body(const ModelConfig& config, const ChatRequest& request) {
  check_messages(request);
  ordered_json body;
  body["model"] = request.model.empty() ? config.model : request.model;
  ordered_json messages = ordered_json::array();
  if (!request.system.empty()) messages.push_back({{"role", "system"}, {"content", request.system}});
  for (const auto& m : request.messages) messages.push_back(to_json(m));
  body["messages"] = std::move(messages);
  if (auto n = effective_max_tokens(config, request))
    body[config.max_tokens_field.empty() ? "max_tokens" : config.max_tokens_field] = *n;
  put_sampling(body, config, request);
  body.update(merged_extra(config, request));
  return body;
}

ordered_json anthropic_request_body(const ModelConfig& config, const ChatRequest& request) {
  check_messages(request);
  auto max_tokens = effective_max_tokens(config, request);
  if (!max_tokens) throw InputError(kLib, "the Anthropic Messages API needs max_tokens (set it in the model config)");
  ordered_json body;
  body["model"] = request.model.empty() ? config.model : request.model;
  body["max_tokens"] = *max_tokens;
  const ordered_json cache = {{"type", "ephemeral"}};
  if (!request.system.empty()) {
    if (config.prompt_cache)
      body["system"] = ordered_json::array({{{"type", "text"}, {"text", request.system}, {"cache_control", cache}}});
    else
      body["system"] = request.system;
  }
  // The last user message carries the second cache breakpoint: the next turn's prefix lookup finds
  // everything up to it.
  std::size_t last_user = request.messages.size();
  for (std::size_t i = 0; i < request.messages.size(); ++i)
    if (request.messages[i].role == "user") last_user = i;
  ordered_json messages = ordered_json::array();
  for (std::size_t i = 0; i < request.messages.size(); ++i) {
    const auto& m = request.messages[i];
    if (config.prompt_cache && i == last_user)
      messages.push_back({{"role", m.role},
                          {"content", ordered_json::array({{{"type", "text"}, {"text", m.content}, {"cache_control", cache}}})}});
    else
      messages.push_back(to_json(m));
  }
  body["messages"] = std::move(messages);
  put_sampling(body, config, request);
  body.update(merged_extra(config, request));
  return body;
}

ChatResponse parse_openai_response(const std::string& text) {
  ordered_json j = parse_body(text);
  if (!j.is_object()) throw MalformedResponse("expected a JSON object, got " + std::string(j.type_name()));
  reject_error_object(j);
  const auto& choices = member_or_null(j, "choices");
  if (!choices.is_array() || choices.empty()) throw MalformedResponse("no choices in the response");
  const auto& choice = choices[0];
  if (!choice.is_object()) throw MalformedResponse("choices[0] is not an object");
  const auto& message = member_or_null(choice, "message");
  if (!message.is_object()) throw MalformedResponse("choices[0].message is missing");

  ChatResponse r;
  r.text = opt_string(message, "content", "choices[0].message");  // null when everything went to reasoning
  r.reasoning = opt_string(message, "reasoning_content", "choices[0].message");
  if (r.reasoning.empty()) r.reasoning = opt_string(message, "reasoning", "choices[0].message");
  r.raw_finish_reason = opt_string(choice, "finish_reason", "choices[0]");
  r.finish_reason = r.raw_finish_reason == "stop"     ? FinishReason::stop
                    : r.raw_finish_reason == "length" ? FinishReason::length
                                                      : FinishReason::other;
  const auto& usage = member_or_null(j, "usage");
  if (!usage.is_object()) throw MalformedResponse("no usage in the response");
  r.usage.prompt_tokens = count(usage, "prompt_tokens", "usage", true);
  r.usage.completion_tokens = count(usage, "completion_tokens", "usage", true);
  r.usage.reasoning_tokens =
      count(member_or_null(usage, "completion_tokens_details"), "reasoning_tokens", "usage.completion_tokens_details", false);
  r.usage.cached_tokens =
      count(member_or_null(usage, "prompt_tokens_details"), "cached_tokens", "usage.prompt_tokens_details", false);
  r.id = opt_string(j, "id", "response");
  r.model = opt_string(j, "model", "response");
  return r;
}

ChatResponse parse_anthropic_response(const std::string& text) {
  ordered_json j = parse_body(text);
  if (!j.is_object()) throw MalformedResponse("expected a JSON object, got " + std::string(j.type_name()));
  reject_error_object(j);
  const auto& content = member_or_null(j, "content");
  if (!content.is_array()) throw MalformedResponse("no content array in the response");

  ChatResponse r;
  for (std::size_t i = 0; i < content.size(); ++i) {
    const auto& block = content[i];
    std::string where = "content[" + std::to_string(i) + "]";
    if (!block.is_object()) throw MalformedResponse(where + " is not an object");
    std::string type = opt_string(block, "type", where);
    if (type == "text") {
      r.text += opt_string(block, "text", where);
    } else if (type == "thinking") {
      std::string thought = opt_string(block, "thinking", where);
      if (!r.reasoning.empty() && !thought.empty()) r.reasoning += "\n\n";
      r.reasoning += thought;
      ++r.reasoning_blocks;
    } else if (type == "redacted_thinking") {
      ++r.reasoning_blocks;
    }
    // Other blocks (tool_use, ...) carry no answer text for us.
  }
  r.raw_finish_reason = opt_string(j, "stop_reason", "response");
  r.finish_reason = (r.raw_finish_reason == "end_turn" || r.raw_finish_reason == "stop_sequence") ? FinishReason::stop
                    : r.raw_finish_reason == "max_tokens"                                         ? FinishReason::length
                                                                                                  : FinishReason::other;
  const auto& usage = member_or_null(j, "usage");
  if (!usage.is_object()) throw MalformedResponse("no usage in the response");
  int64_t input = count(usage, "input_tokens", "usage", true);
  int64_t cache_write = count(usage, "cache_creation_input_tokens", "usage", false);
  int64_t cache_read = count(usage, "cache_read_input_tokens", "usage", false);
  // Anthropic's input_tokens excludes both cache parts; our prompt_tokens is every input token.
  r.usage.prompt_tokens = input + cache_write + cache_read;
  r.usage.cached_tokens = cache_read;
  r.usage.completion_tokens = count(usage, "output_tokens", "usage", true);  // thinking included
  r.id = opt_string(j, "id", "response");
  r.model = opt_string(j, "model", "response");
  return r;
}

ProviderError parse_provider_error(const std::string& body) {
  ProviderError e;
  ordered_json j;
  try {
    j = ordered_json::parse(body);
  } catch (const nlohmann::json::parse_error&) {
    j = nullptr;
  }
  if (j.is_object()) {
    const ordered_json* src = &j;
    if (j.contains("error") && j["error"].is_object()) src = &j["error"];
    if (src->contains("type")) e.type = scalar_text((*src)["type"]);
    if (src->contains("code")) e.code = scalar_text((*src)["code"]);
    if (src->contains("message")) e.message = scalar_text((*src)["message"]);
    if (e.message.empty() && j.contains("error") && j["error"].is_string()) e.message = j["error"].get<std::string>();
    if (src == &j && e.type == "error") e.type.clear();  // Anthropic's envelope without an inner error
  }
  if (e.message.empty()) {
    e.message = body.substr(0, std::min(body.size(), kMaxQuotedBody));
    if (body.size() > kMaxQuotedBody) e.message += "...";
  }
  // OpenAI: 429 insufficient_quota (and the billing codes); Anthropic: billing_error, a 400/429 about
  // the credit balance, or the workspace's "API usage limits".
  static const std::array<const char*, 5> spend_codes = {"insufficient_quota", "billing_hard_limit_reached",
                                                         "billing_not_active", "access_terminated", "billing_error"};
  for (const char* c : spend_codes) e.spend_limit = e.spend_limit || e.type == c || e.code == c;
  std::string msg = lower(e.message);
  for (const char* phrase : {"exceeded your current quota", "credit balance", "usage limits", "spend limit"})
    e.spend_limit = e.spend_limit || msg.find(phrase) != std::string::npos;
  return e;
}

}  // namespace ptxbench

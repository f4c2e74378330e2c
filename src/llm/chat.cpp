#include "llm/chat.h"

#include "common/enum_names.h"
#include "common/error.h"

namespace ptxbench {
namespace {

constexpr EnumName<FinishReason> kFinishReasons[] = {
    {FinishReason::stop, "stop"}, {FinishReason::length, "length"}, {FinishReason::other, "other"}};

int64_t count_field(const JsonChecker& check, const ordered_json& j, const std::string& path, const char* key) {
  int64_t v = check.int_field(j, path, key);
  if (v < 0) check.fail(JsonChecker::join(path, key), "must not be negative");
  return v;
}

ChatMessage read_message(const JsonChecker& check, const ordered_json& j, const std::string& path) {
  check.only_fields(j, path, {"role", "content"});
  ChatMessage m{check.string_field(j, path, "role"), check.string_field(j, path, "content")};
  if (m.role != "user" && m.role != "assistant")
    check.fail(JsonChecker::join(path, "role"), "expected \"user\" or \"assistant\", got \"" + m.role + "\"");
  return m;
}

Usage read_usage(const JsonChecker& check, const ordered_json& j, const std::string& path) {
  check.only_fields(j, path, {"prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens"});
  Usage u;
  u.prompt_tokens = count_field(check, j, path, "prompt_tokens");
  u.completion_tokens = count_field(check, j, path, "completion_tokens");
  u.reasoning_tokens = count_field(check, j, path, "reasoning_tokens");
  u.cached_tokens = count_field(check, j, path, "cached_tokens");
  return u;
}

}  // namespace

std::string_view to_string(FinishReason reason) { return enum_name_view(kFinishReasons, reason); }

FinishReason finish_reason_from_string(std::string_view text) {
  return parse_enum(kFinishReasons, text, "finish reason", "chat");
}

Usage& Usage::operator+=(const Usage& other) {
  prompt_tokens += other.prompt_tokens;
  completion_tokens += other.completion_tokens;
  reasoning_tokens += other.reasoning_tokens;
  cached_tokens += other.cached_tokens;
  return *this;
}

Usage operator+(Usage a, const Usage& b) { return a += b; }

ordered_json to_json(const ChatMessage& m) { return {{"role", m.role}, {"content", m.content}}; }

ordered_json to_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"reasoning_tokens", u.reasoning_tokens},
          {"cached_tokens", u.cached_tokens}};
}

ordered_json to_json(const ChatRequest& r) {
  ordered_json j = {{"system", r.system}, {"messages", ordered_json::array()}};
  for (const auto& m : r.messages) j["messages"].push_back(to_json(m));
  if (!r.model.empty()) j["model"] = r.model;
  if (r.max_tokens) j["max_tokens"] = *r.max_tokens;
  if (r.temperature) j["temperature"] = *r.temperature;
  if (r.top_p) j["top_p"] = *r.top_p;
  if (!r.extra.empty()) j["extra"] = r.extra;
  return j;
}

ordered_json to_json(const ChatResponse& r) {
  return {{"text", r.text},
          {"reasoning", r.reasoning},
          {"reasoning_blocks", r.reasoning_blocks},
          {"finish_reason", to_string(r.finish_reason)},
          {"raw_finish_reason", r.raw_finish_reason},
          {"usage", to_json(r.usage)},
          {"id", r.id},
          {"model", r.model},
          {"latency_s", r.latency_s},
          {"total_s", r.total_s},
          {"attempts", r.attempts}};
}

Usage usage_from_json(const ordered_json& j, const std::string& document) {
  return read_usage(JsonChecker(document), j, "");
}

ChatRequest chat_request_from_json(const ordered_json& j, const std::string& document) {
  JsonChecker check(document);
  check.only_fields(j, "", {"system", "messages", "model", "max_tokens", "temperature", "top_p", "extra"});
  ChatRequest r;
  r.system = check.optional_string(j, "", "system", "");
  const auto& messages = check.member(j, "", "messages");
  if (!messages.is_array()) check.fail("messages", std::string("expected an array, got ") + messages.type_name());
  for (std::size_t i = 0; i < messages.size(); ++i)
    r.messages.push_back(read_message(check, messages[i], "messages[" + std::to_string(i) + "]"));
  r.model = check.optional_string(j, "", "model", "");
  if (j.contains("max_tokens")) r.max_tokens = check.int_field(j, "", "max_tokens");
  if (j.contains("temperature")) r.temperature = check.number_field(j, "", "temperature");
  if (j.contains("top_p")) r.top_p = check.number_field(j, "", "top_p");
  if (j.contains("extra")) {
    check.require_object(j["extra"], "extra");
    r.extra = j["extra"];
  }
  return r;
}

ChatResponse chat_response_from_json(const ordered_json& j, const std::string& document) {
  JsonChecker check(document);
  check.only_fields(j, "", {"text", "reasoning", "reasoning_blocks", "finish_reason", "raw_finish_reason", "usage", "id",
                            "model", "latency_s", "total_s", "attempts"});
  ChatResponse r;
  r.text = check.string_field(j, "", "text");
  r.reasoning = check.optional_string(j, "", "reasoning", "");
  if (j.contains("reasoning_blocks")) r.reasoning_blocks = static_cast<int>(count_field(check, j, "", "reasoning_blocks"));
  try {
    r.finish_reason = finish_reason_from_string(check.string_field(j, "", "finish_reason"));
  } catch (const InputError& e) {
    check.fail("finish_reason", e.what());
  }
  r.raw_finish_reason = check.optional_string(j, "", "raw_finish_reason", "");
  r.usage = read_usage(check, check.member(j, "", "usage"), "usage");
  r.id = check.optional_string(j, "", "id", "");
  r.model = check.optional_string(j, "", "model", "");
  if (j.contains("latency_s")) r.latency_s = check.number_field(j, "", "latency_s");
  if (j.contains("total_s")) r.total_s = check.number_field(j, "", "total_s");
  if (j.contains("attempts")) r.attempts = static_cast<int>(count_field(check, j, "", "attempts"));
  return r;
}

}  // namespace ptxbench

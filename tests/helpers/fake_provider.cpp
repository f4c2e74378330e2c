#include "fake_provider.h"

#include <chrono>
#include <thread>

namespace ptxbench::fakes {
namespace {

const ordered_json kNull;

const ordered_json& member(const ordered_json& j, const char* key) {
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string text_of(const ordered_json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const auto& part : content)
      if (member(part, "text").is_string()) out += part["text"].get<std::string>();
  return out;
}

std::string call_id(const FakeToolCall& c, std::size_t i) { return c.id.empty() ? "call_" + std::to_string(i + 1) : c.id; }

/// Two pieces of a string, so streams carry more than one delta.
std::pair<std::string, std::string> halves(const std::string& s) {
  std::size_t mid = s.size() / 2;
  return {s.substr(0, mid), s.substr(mid)};
}

std::string sse(const ordered_json& data) { return "data: " + data.dump() + "\n\n"; }
std::string sse(const std::string& event, const ordered_json& data) {
  return "event: " + event + "\ndata: " + data.dump() + "\n\n";
}

ordered_json chat_usage(const FakeUsage& u) {
  return {{"prompt_tokens", u.prompt},
          {"completion_tokens", u.completion},
          {"total_tokens", u.prompt + u.completion},
          {"prompt_tokens_details", {{"cached_tokens", u.cached}}},
          {"completion_tokens_details", {{"reasoning_tokens", u.reasoning}}}};
}

ordered_json responses_usage(const FakeUsage& u) {
  return {{"input_tokens", u.prompt},
          {"input_tokens_details", {{"cached_tokens", u.cached}}},
          {"output_tokens", u.completion},
          {"output_tokens_details", {{"reasoning_tokens", u.reasoning}}},
          {"total_tokens", u.prompt + u.completion}};
}

ordered_json anthropic_usage(const FakeUsage& u, bool start) {
  return {{"input_tokens", u.prompt - u.cached},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", u.cached},
          {"output_tokens", start ? 1 : u.completion}};
}

ordered_json arguments_object(const std::string& arguments) {
  ordered_json j = ordered_json::parse(arguments, nullptr, false);
  return j.is_object() ? j : ordered_json::object();
}

ordered_json responses_items(const FakeTurn& t, bool done) {
  ordered_json out = ordered_json::array();
  if (!t.text.empty())
    out.push_back({{"type", "message"},
                   {"id", "msg_fake"},
                   {"status", done ? "completed" : "in_progress"},
                   {"role", "assistant"},
                   {"content", done ? ordered_json::array({{{"type", "output_text"}, {"text", t.text}, {"annotations", ordered_json::array()}}})
                                    : ordered_json::array()}});
  for (std::size_t i = 0; i < t.tool_calls.size(); ++i) {
    const auto& c = t.tool_calls[i];
    ordered_json item = {{"type", "function_call"},
                         {"id", "fc_" + std::to_string(i + 1)},
                         {"call_id", call_id(c, i)},
                         {"name", c.name},
                         {"arguments", done ? c.arguments : ""},
                         {"status", done ? "completed" : "in_progress"}};
    if (!c.name_space.empty()) item["namespace"] = c.name_space;
    out.push_back(item);
  }
  return out;
}

ordered_json response_object(const FakeTurn& t, const std::string& model, bool done) {
  ordered_json r = {{"id", "resp_fake"},
                    {"object", "response"},
                    {"created_at", 0},
                    {"status", done ? "completed" : "in_progress"},
                    {"model", model},
                    {"output", done ? responses_items(t, true) : ordered_json::array()}};
  if (done) r["usage"] = responses_usage(t.usage);
  return r;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// What a call holds

std::vector<std::string> FakeCall::tool_names() const {
  std::vector<std::string> names;
  const ordered_json& tools = member(body, "tools");
  if (!tools.is_array()) return names;
  for (const auto& t : tools) {
    if (member(t, "type") == "namespace") {
      for (const auto& sub : member(t, "tools"))
        if (member(sub, "name").is_string()) names.push_back(t["name"].get<std::string>() + "/" + sub["name"].get<std::string>());
    } else if (member(member(t, "function"), "name").is_string()) {
      names.push_back(t["function"]["name"].get<std::string>());
    } else if (member(t, "name").is_string()) {
      names.push_back(t["name"].get<std::string>());
    }
  }
  return names;
}

int FakeCall::tool_result_count() const {
  int n = 0;
  switch (api) {
    case FakeApi::chat_completions:
      for (const auto& m : member(body, "messages")) n += member(m, "role") == "tool";
      break;
    case FakeApi::responses:
      for (const auto& i : member(body, "input")) n += member(i, "type") == "function_call_output";
      break;
    case FakeApi::anthropic_messages:
      for (const auto& m : member(body, "messages"))
        for (const auto& block : member(m, "content")) n += member(block, "type") == "tool_result";
      break;
  }
  return n;
}

std::string FakeCall::last_tool_result() const {
  std::string last;
  switch (api) {
    case FakeApi::chat_completions:
      for (const auto& m : member(body, "messages"))
        if (member(m, "role") == "tool") last = text_of(member(m, "content"));
      break;
    case FakeApi::responses:
      for (const auto& i : member(body, "input"))
        if (member(i, "type") == "function_call_output") last = text_of(member(i, "output"));
      break;
    case FakeApi::anthropic_messages:
      for (const auto& m : member(body, "messages"))
        for (const auto& block : member(m, "content"))
          if (member(block, "type") == "tool_result") last = text_of(member(block, "content"));
      break;
  }
  return last;
}

// ---------------------------------------------------------------------------------------------
// Encodings

std::string encode_turn(FakeApi api, const FakeTurn& t, const std::string& model) {
  switch (api) {
    case FakeApi::chat_completions: {
      ordered_json message = {{"role", "assistant"}, {"content", t.text.empty() ? ordered_json(nullptr) : ordered_json(t.text)}};
      if (!t.tool_calls.empty()) {
        ordered_json calls = ordered_json::array();
        for (std::size_t i = 0; i < t.tool_calls.size(); ++i)
          calls.push_back({{"id", call_id(t.tool_calls[i], i)},
                           {"type", "function"},
                           {"function", {{"name", t.tool_calls[i].name}, {"arguments", t.tool_calls[i].arguments}}}});
        message["tool_calls"] = calls;
      }
      return ordered_json{{"id", "chatcmpl-fake"},
                          {"object", "chat.completion"},
                          {"created", 0},
                          {"model", model},
                          {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", t.tool_calls.empty() ? "stop" : "tool_calls"}}}},
                          {"usage", chat_usage(t.usage)}}
          .dump();
    }
    case FakeApi::responses:
      return response_object(t, model, true).dump();
    case FakeApi::anthropic_messages: {
      ordered_json content = ordered_json::array();
      if (!t.text.empty()) content.push_back({{"type", "text"}, {"text", t.text}});
      for (std::size_t i = 0; i < t.tool_calls.size(); ++i)
        content.push_back({{"type", "tool_use"},
                           {"id", call_id(t.tool_calls[i], i)},
                           {"name", t.tool_calls[i].name},
                           {"input", arguments_object(t.tool_calls[i].arguments)}});
      return ordered_json{{"id", "msg_fake"},
                          {"type", "message"},
                          {"role", "assistant"},
                          {"model", model},
                          {"content", content},
                          {"stop_reason", t.tool_calls.empty() ? "end_turn" : "tool_use"},
                          {"stop_sequence", nullptr},
                          {"usage", anthropic_usage(t.usage, false)}}
          .dump();
    }
  }
  return "";
}

std::vector<std::string> encode_turn_events(FakeApi api, const FakeTurn& t, const std::string& model, bool include_usage) {
  std::vector<std::string> ev;
  switch (api) {
    case FakeApi::chat_completions: {
      const ordered_json base = {{"id", "chatcmpl-fake"}, {"object", "chat.completion.chunk"}, {"created", 0}, {"model", model}};
      auto chunk = [&](ordered_json delta, ordered_json finish = nullptr) {
        ordered_json c = base;
        c["choices"] = {{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish)}}};
        return sse(c);
      };
      ev.push_back(chunk({{"role", "assistant"}, {"content", ""}}));
      if (!t.text.empty()) {
        auto [a, b] = halves(t.text);
        ev.push_back(chunk({{"content", a}}));
        ev.push_back(chunk({{"content", b}}));
      }
      for (std::size_t i = 0; i < t.tool_calls.size(); ++i) {
        const auto& c = t.tool_calls[i];
        auto [a, b] = halves(c.arguments);
        ev.push_back(chunk({{"tool_calls", {{{"index", i}, {"id", call_id(c, i)}, {"type", "function"},
                                             {"function", {{"name", c.name}, {"arguments", a}}}}}}}));
        ev.push_back(chunk({{"tool_calls", {{{"index", i}, {"function", {{"arguments", b}}}}}}}));
      }
      ev.push_back(chunk(ordered_json::object(), t.tool_calls.empty() ? "stop" : "tool_calls"));
      if (include_usage) {
        ordered_json u = base;
        u["choices"] = ordered_json::array();
        u["usage"] = chat_usage(t.usage);
        ev.push_back(sse(u));
      }
      ev.push_back("data: [DONE]\n\n");
      break;
    }
    case FakeApi::responses: {
      int seq = 0;
      auto event = [&](const std::string& type, const ordered_json& data) {
        ordered_json d = {{"type", type}, {"sequence_number", seq++}};
        for (auto it = data.begin(); it != data.end(); ++it) d[it.key()] = it.value();
        ev.push_back(sse(type, d));
      };
      event("response.created", {{"response", response_object(t, model, false)}});
      ordered_json started = responses_items(t, false), done = responses_items(t, true);
      for (std::size_t k = 0; k < done.size(); ++k) {
        const ordered_json& item = done[k];
        const std::string id = item["id"];
        event("response.output_item.added", {{"output_index", k}, {"item", started[k]}});
        if (item["type"] == "message") {
          const ordered_json part = {{"type", "output_text"}, {"text", ""}, {"annotations", ordered_json::array()}};
          event("response.content_part.added", {{"item_id", id}, {"output_index", k}, {"content_index", 0}, {"part", part}});
          auto [a, b] = halves(t.text);
          for (const auto& piece : {a, b})
            event("response.output_text.delta", {{"item_id", id}, {"output_index", k}, {"content_index", 0}, {"delta", piece}});
          event("response.output_text.done", {{"item_id", id}, {"output_index", k}, {"content_index", 0}, {"text", t.text}});
          event("response.content_part.done",
                {{"item_id", id}, {"output_index", k}, {"content_index", 0}, {"part", item["content"][0]}});
        } else {
          const std::string args = item["arguments"];
          auto [a, b] = halves(args);
          for (const auto& piece : {a, b})
            event("response.function_call_arguments.delta", {{"item_id", id}, {"output_index", k}, {"delta", piece}});
          event("response.function_call_arguments.done", {{"item_id", id}, {"output_index", k}, {"arguments", args}});
        }
        event("response.output_item.done", {{"output_index", k}, {"item", item}});
      }
      event("response.completed", {{"response", response_object(t, model, true)}});
      break;
    }
    case FakeApi::anthropic_messages: {
      ev.push_back(sse("message_start", {{"type", "message_start"},
                                         {"message", {{"id", "msg_fake"},
                                                      {"type", "message"},
                                                      {"role", "assistant"},
                                                      {"model", model},
                                                      {"content", ordered_json::array()},
                                                      {"stop_reason", nullptr},
                                                      {"stop_sequence", nullptr},
                                                      {"usage", anthropic_usage(t.usage, true)}}}}));
      int index = 0;
      if (!t.text.empty()) {
        ev.push_back(sse("content_block_start",
                         {{"type", "content_block_start"}, {"index", index}, {"content_block", {{"type", "text"}, {"text", ""}}}}));
        auto [a, b] = halves(t.text);
        for (const auto& piece : {a, b})
          ev.push_back(sse("content_block_delta", {{"type", "content_block_delta"},
                                                   {"index", index},
                                                   {"delta", {{"type", "text_delta"}, {"text", piece}}}}));
        ev.push_back(sse("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
        ++index;
      }
      for (std::size_t i = 0; i < t.tool_calls.size(); ++i, ++index) {
        const auto& c = t.tool_calls[i];
        ev.push_back(sse("content_block_start", {{"type", "content_block_start"},
                                                 {"index", index},
                                                 {"content_block", {{"type", "tool_use"}, {"id", call_id(c, i)}, {"name", c.name},
                                                                    {"input", ordered_json::object()}}}}));
        auto [a, b] = halves(c.arguments);
        for (const auto& piece : {a, b})
          ev.push_back(sse("content_block_delta", {{"type", "content_block_delta"},
                                                   {"index", index},
                                                   {"delta", {{"type", "input_json_delta"}, {"partial_json", piece}}}}));
        ev.push_back(sse("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
      }
      ev.push_back(sse("message_delta", {{"type", "message_delta"},
                                         {"delta", {{"stop_reason", t.tool_calls.empty() ? "end_turn" : "tool_use"}, {"stop_sequence", nullptr}}},
                                         {"usage", {{"output_tokens", t.usage.completion}}}}));
      ev.push_back(sse("message_stop", {{"type", "message_stop"}}));
      break;
    }
  }
  return ev;
}

// ---------------------------------------------------------------------------------------------
// The server

FakeProvider::FakeProvider() {
  HttpServerOptions o;
  o.threads = 16;
  o.read_timeout_s = 5;
  o.max_body_bytes = 64 << 20;
  m_server = std::make_unique<HttpServer>(
      o, StreamingHttpHandler([this](const HttpRequest& r, HttpStreamWriter& out) { return handle(r, out); }));
  m_server->start();
}

FakeProvider::~FakeProvider() { m_server->stop(); }

void FakeProvider::push(Scripted s, int times) {
  std::lock_guard lock(m_mutex);
  for (int i = 0; i < times; ++i) m_script.push_back(s);
}

void FakeProvider::push_turn(FakeTurn turn) {
  std::lock_guard lock(m_mutex);
  m_turns.push_back(std::move(turn));
}

void FakeProvider::set_responder(FakeResponder responder) {
  std::lock_guard lock(m_mutex);
  m_responder = std::move(responder);
}

void FakeProvider::set_event_delay(double seconds) {
  std::lock_guard lock(m_mutex);
  m_event_delay_s = seconds;
}

std::vector<HttpRequest> FakeProvider::requests() const {
  std::lock_guard lock(m_mutex);
  return m_requests;
}

std::vector<FakeCall> FakeProvider::calls() const {
  std::lock_guard lock(m_mutex);
  return m_calls;
}

FakeUsage FakeProvider::usage_served() const {
  std::lock_guard lock(m_mutex);
  return m_served;
}

int FakeProvider::turns_served() const {
  std::lock_guard lock(m_mutex);
  return m_turns_served;
}

std::string FakeProvider::url() const { return "http://" + m_server->address(); }

std::optional<HttpResponse> FakeProvider::handle(const HttpRequest& r, HttpStreamWriter& out) {
  auto ends_with = [&](const std::string& suffix) {
    return r.path.size() >= suffix.size() && r.path.compare(r.path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  Scripted raw;
  bool have_raw = false;
  FakeCall call;
  FakeResponder responder;
  std::optional<FakeTurn> turn;
  double delay = 0;
  {
    std::lock_guard lock(m_mutex);
    m_requests.push_back(r);
    if (!m_script.empty()) {
      raw = m_script.front();
      m_script.pop_front();
      have_raw = true;
    } else {
      if (ends_with("/chat/completions")) call.api = FakeApi::chat_completions;
      else if (ends_with("/responses")) call.api = FakeApi::responses;
      else if (ends_with("/messages")) call.api = FakeApi::anthropic_messages;
      else return HttpResponse::json(404, R"({"error": {"message": "fake provider: no such path"}})");
      call.request = r;
      call.body = ordered_json::parse(r.body, nullptr, false);
      if (call.body.is_discarded() || !call.body.is_object())
        return HttpResponse::json(400, R"({"error": {"message": "fake provider: the body is not a JSON object"}})");
      call.stream = member(call.body, "stream") == true;
      m_calls.push_back(call);
      if (!m_turns.empty()) {
        turn = m_turns.front();
        m_turns.pop_front();
      }
      responder = m_responder;
      delay = m_event_delay_s;
    }
  }
  if (have_raw) {
    if (raw.delay_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(raw.delay_s));
    HttpResponse reply = HttpResponse::json(raw.status, raw.body);
    reply.headers = raw.headers;
    return reply;
  }
  if (!turn && responder) turn = responder(call);
  if (!turn) return HttpResponse::json(418, R"({"error": {"message": "fake provider: script exhausted"}})");
  {
    std::lock_guard lock(m_mutex);
    m_served += turn->usage;
    ++m_turns_served;
  }
  const std::string model = member(call.body, "model").is_string() ? call.body["model"].get<std::string>() : "fake-model";
  if (!call.stream) return HttpResponse::json(200, encode_turn(call.api, *turn, model));
  const ordered_json& so = member(call.body, "stream_options");
  const bool include_usage = call.api != FakeApi::chat_completions || member(so, "include_usage") == true;
  if (!out.begin(200, "text/event-stream", {})) return std::nullopt;
  for (const std::string& e : encode_turn_events(call.api, *turn, model, include_usage)) {
    if (!out.write(e)) break;
    if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
  }
  return std::nullopt;
}

}  // namespace ptxbench::fakes

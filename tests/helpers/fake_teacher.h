// A fake OpenAI-compatible teacher for the adaptation tests (reasoning and note synthesis): a real
// HTTP server on loopback that answers every chat completion with reply(user message, call number
// from 1) and keeps what it was asked.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/json_check.h"
#include "service/http_server.h"

namespace ptxbench::fakes {

class FakeTeacher {
 public:
  using Reply = std::function<std::string(const std::string& user, int call)>;
  explicit FakeTeacher(Reply reply)
      : m_reply(std::move(reply)), m_server(options(), [this](const HttpRequest& r) { return handle(r); }) {
    m_server.start();
  }
  /// A reply that does not depend on the call's number.
  explicit FakeTeacher(std::function<std::string(const std::string& user)> reply)
      : FakeTeacher(Reply([reply = std::move(reply)](const std::string& user, int) { return reply(user); })) {}
  [[nodiscard]] std::string url() const { return "http://" + m_server.address() + "/v1"; }
  [[nodiscard]] int calls() const { return m_calls.load(); }
  [[nodiscard]] std::vector<std::string> users() const {
    std::lock_guard lock(m_mutex);
    return m_users;
  }
  [[nodiscard]] ordered_json config() const {
    return {{"provider", "openai"}, {"base_url", url()}, {"model", "teacher-x"}, {"api_key_env", ""}, {"max_tokens", 4096}};
  }

 private:
  static HttpServerOptions options() {
    HttpServerOptions o;
    o.threads = 8;
    return o;
  }
  HttpResponse handle(const HttpRequest& r) {
    ordered_json body = ordered_json::parse(r.body);
    std::string user = body["messages"].back()["content"].get<std::string>();
    int call = ++m_calls;
    {
      std::lock_guard lock(m_mutex);
      m_users.push_back(user);
    }
    ordered_json out = {{"id", "fake-" + std::to_string(call)},
                        {"object", "chat.completion"},
                        {"model", "teacher-x"},
                        {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", m_reply(user, call)}}},
                                      {"finish_reason", "stop"}}}},
                        {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 50}, {"total_tokens", 150}}}};
    return HttpResponse::json(200, out.dump());
  }
  Reply m_reply;
  std::atomic<int> m_calls{0};
  mutable std::mutex m_mutex;
  std::vector<std::string> m_users;
  HttpServer m_server;  // last: stopped before the rest goes
};

}  // namespace ptxbench::fakes

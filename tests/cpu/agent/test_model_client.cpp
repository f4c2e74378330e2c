// Model clients against the scriptable fake provider (tests/helpers/fake_provider.h: our HttpServer
// on an ephemeral port, speaking both wire formats): request wire format, token accounting, the
// retry policy (retry-after, back-off, fail-fast statuses, spend limits, timeouts, malformed
// bodies), config validation.
// Sleeps are injected, so nothing here waits for a back-off.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "llm/chat.h"
#include "llm/model_client.h"
#include "llm/retry_policy.h"
#include "llm/wire_format.h"
#include "common/error.h"
#include "helpers/fake_provider.h"
#include "service/http_server.h"

using namespace ptxbench;
using fakes::FakeProvider;
using fakes::Scripted;

namespace {

constexpr const char* kKeyEnv = "PTXB_TEST_MODEL_KEY";
constexpr const char* kKey = "sk-test-0123456789";

/// The injected sleeper: records each wait instead of waiting.
struct SleepLog {
  std::mutex mutex;
  std::vector<double> waits;
  ClientHooks hooks(std::uint64_t seed = 42) {
    ClientHooks h;
    h.sleep = [this](double s) {
      std::lock_guard lock(mutex);
      waits.push_back(s);
    };
    h.seed = seed;
    return h;
  }
};

std::string openai_ok(const std::string& content = "ok", const std::string& finish = "stop",
                      ordered_json usage = {{"prompt_tokens", 10}, {"completion_tokens", 5}, {"total_tokens", 15}}) {
  ordered_json message = {{"role", "assistant"}, {"content", content}};
  if (content == "<null>") message["content"] = nullptr;
  return ordered_json{{"id", "chatcmpl-1"},
                      {"object", "chat.completion"},
                      {"model", "test-model"},
                      {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", finish}}}},
                      {"usage", usage}}
      .dump();
}

std::string anthropic_ok(const std::string& text = "ok", const std::string& stop = "end_turn") {
  return ordered_json{{"id", "msg_1"},
                      {"type", "message"},
                      {"role", "assistant"},
                      {"model", "claude-test"},
                      {"content", {{{"type", "text"}, {"text", text}}}},
                      {"stop_reason", stop},
                      {"usage", {{"input_tokens", 10}, {"output_tokens", 5}}}}
      .dump();
}

std::string openai_error(const std::string& message, const std::string& type, const std::string& code = "") {
  ordered_json e = {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}};
  if (!code.empty()) e["code"] = code;
  return ordered_json{{"error", e}}.dump();
}

std::string anthropic_error(const std::string& type, const std::string& message) {
  return ordered_json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}}.dump();
}

ChatRequest two_turns() {
  ChatRequest r;
  r.system = "You write PTX kernels.";
  r.messages = {{"user", "Write a GEMM."}, {"assistant", "```cuda\n// v1\n```"}, {"user", "It failed: fix it."}};
  return r;
}

ChatRequest one_turn() {
  ChatRequest r;
  r.messages = {{"user", "hi"}};
  return r;
}

struct ModelClientTest : ::testing::Test {
  FakeProvider fake;
  SleepLog sleeps;

  void SetUp() override { ::setenv(kKeyEnv, kKey, 1); }
  void TearDown() override { ::unsetenv(kKeyEnv); }

  ModelConfig openai_config(const ordered_json& overrides = ordered_json::object()) {
    ordered_json j = {{"provider", "openai"}, {"base_url", fake.url() + "/v1"}, {"model", "test-model"},
                      {"api_key_env", kKeyEnv}, {"max_tokens", 256},  {"timeout_s", 5},
                      {"backoff_base_s", 0.5},  {"backoff_cap_s", 4}};
    j.update(overrides);
    return model_config_from_json(j);
  }
  ModelConfig anthropic_config(const ordered_json& overrides = ordered_json::object()) {
    ordered_json j = {{"provider", "anthropic"}, {"base_url", fake.url()}, {"model", "claude-test"},
                      {"api_key_env", kKeyEnv},  {"max_tokens", 1024},   {"timeout_s", 5},
                      {"backoff_base_s", 0.5},   {"backoff_cap_s", 4}};
    j.update(overrides);
    return model_config_from_json(j);
  }
  std::unique_ptr<ModelClient> client(const ModelConfig& c) { return make_model_client(c, sleeps.hooks()); }

  /// Runs `fn`, expecting a ModelApiError, and returns a copy of it.
  template <typename Fn>
  ModelApiError expect_api_error(Fn&& fn) {
    try {
      fn();
    } catch (const ModelApiError& e) {
      return e;
    }
    ADD_FAILURE() << "expected a ModelApiError";
    return ModelApiError(Provider::openai, ModelApiError::Kind::http, -1, false, 0, "", "none thrown");
  }
};

int free_port() {
  HttpServer probe(HttpServerOptions{}, [](const HttpRequest&) { return HttpResponse::json(200, "{}"); });
  return probe.port();  // closed again when probe goes
}

std::string http_date(std::time_t t) {
  char buf[64];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Chat types

TEST(ModelClientChat, UsageAddsAndTypesRoundTripThroughJson) {
  Usage a{100, 50, 20, 64}, b{10, 5, 0, 8};
  EXPECT_EQ(a + b, (Usage{110, 55, 20, 72}));
  a += b;
  EXPECT_EQ(a.cached_tokens, 72);

  ChatRequest r = two_turns();
  r.max_tokens = 99;
  r.temperature = 0.5;
  r.extra = {{"seed", 3}};
  ChatRequest back = chat_request_from_json(to_json(r));
  EXPECT_EQ(back.system, r.system);
  EXPECT_EQ(back.messages, r.messages);
  EXPECT_EQ(back.max_tokens, 99);
  EXPECT_EQ(back.temperature, 0.5);
  EXPECT_FALSE(back.top_p);
  EXPECT_EQ(back.extra, r.extra);

  ChatResponse resp;
  resp.text = "answer";
  resp.reasoning = "thoughts";
  resp.reasoning_blocks = 1;
  resp.finish_reason = FinishReason::length;
  resp.raw_finish_reason = "max_tokens";
  resp.usage = {1, 2, 3, 4};
  resp.id = "msg_1";
  resp.latency_s = 1.5;
  resp.total_s = 2.5;
  resp.attempts = 2;
  ordered_json j = to_json(resp);
  EXPECT_EQ(j["finish_reason"], "length");
  EXPECT_EQ(to_json(chat_response_from_json(j)), j);

  j["finish_reason"] = "done";
  EXPECT_THROW((void)chat_response_from_json(j), InputError);
  try {
    (void)chat_request_from_json({{"messages", {{{"role", "system"}, {"content", "x"}}}}}, "turn.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("turn.json: messages[0].role"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)usage_from_json({{"prompt_tokens", 1}, {"completion_tokens", 1}, {"reasoning_tokens", -1},
                                      {"cached_tokens", 0}}),
               InputError);
}

// ---------------------------------------------------------------------------------------------
// Retry policy

TEST(ModelClientRetryPolicy, ReadsRetryAfterAsSecondsDatesAndMilliseconds) {
  using H = std::map<std::string, std::string>;
  EXPECT_EQ(retry_after_seconds(H{{"retry-after", "5"}}), 5.0);
  EXPECT_EQ(retry_after_seconds(H{{"retry-after", " 1.5 "}}), 1.5);
  EXPECT_EQ(retry_after_seconds(H{{"retry-after-ms", "250"}, {"retry-after", "9"}}), 0.25);
  EXPECT_EQ(retry_after_seconds(H{{"retry-after-ms", "soon"}, {"retry-after", "9"}}), 9.0);
  EXPECT_FALSE(retry_after_seconds(H{{"retry-after", "soon"}}));
  EXPECT_FALSE(retry_after_seconds(H{{"retry-after", "-3"}}));
  EXPECT_FALSE(retry_after_seconds(H{}));
  const std::time_t now = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example)
  EXPECT_EQ(retry_after_seconds(H{{"retry-after", "Sun, 06 Nov 1994 08:50:07 GMT"}}, now), 30.0);
  EXPECT_EQ(retry_after_seconds(H{{"retry-after", "Sunday, 06-Nov-94 08:49:47 GMT"}}, now), 10.0);  // RFC 850 form
  EXPECT_EQ(retry_after_seconds(H{{"retry-after", "Sun, 06 Nov 1994 08:00:00 GMT"}}, now), 0.0);    // past
}

TEST(ModelClientRetryPolicy, RetriesOnlyTransientStatusesWithCappedFullJitter) {
  for (long s : {408L, 409L, 429L, 500L, 502L, 503L, 504L, 529L}) EXPECT_TRUE(is_retryable_status(s)) << s;
  for (long s : {200L, 301L, 400L, 401L, 402L, 403L, 404L, 413L, 422L, 501L, 505L}) EXPECT_FALSE(is_retryable_status(s)) << s;

  RetryPolicy p;
  p.backoff_base_s = 1;
  p.backoff_cap_s = 10;
  p.retry_after_cap_s = 300;
  std::mt19937_64 rng(7);
  for (int retry = 0; retry < 12; ++retry) {
    double ceiling = std::min(10.0, std::ldexp(1.0, retry));
    double sum = 0, hi = 0;
    for (int i = 0; i < 2000; ++i) {
      double d = backoff_delay(p, retry, rng);
      ASSERT_GE(d, 0);
      ASSERT_LE(d, ceiling);
      sum += d;
      hi = std::max(hi, d);
    }
    EXPECT_NEAR(sum / 2000, ceiling / 2, ceiling * 0.05) << "full jitter is uniform on [0, ceiling]";
    EXPECT_GT(hi, ceiling * 0.95);
  }
  EXPECT_EQ(retry_delay(p, 0, 42.0, rng), 42.0) << "the provider's wait is taken as told";
  EXPECT_EQ(retry_delay(p, 0, 5000.0, rng), 300.0) << "but capped";
}

// ---------------------------------------------------------------------------------------------
// Config

TEST(ModelClientConfig, DefaultsAreResolvedAndRoundTrip) {
  ModelConfig o = model_config_from_json({{"provider", "openai"}, {"model", "gpt-x"}});
  EXPECT_EQ(o.base_url, "https://api.openai.com/v1");
  EXPECT_EQ(o.api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ(o.max_tokens_field, "max_completion_tokens") << "hosted OpenAI's reasoning models refuse max_tokens";
  EXPECT_EQ(o.timeout_s, 900);
  EXPECT_EQ(o.retry.max_retries, 8);
  EXPECT_EQ(model_config_from_json(o.to_json()).to_json(), o.to_json());

  ModelConfig v = model_config_from_json({{"provider", "openai"}, {"model", "Qwen/Qwen3-32B"}, {"api_key_env", ""},
                                          {"base_url", "http://127.0.0.1:8000/v1/"}, {"extra", {{"chat_template_kwargs", {{"enable_thinking", true}}}}}});
  EXPECT_EQ(v.base_url, "http://127.0.0.1:8000/v1");
  EXPECT_EQ(v.api_key_env, "");
  EXPECT_EQ(v.max_tokens_field, "max_tokens");
  EXPECT_EQ(model_config_from_json(v.to_json()).to_json(), v.to_json());

  ModelConfig a = model_config_from_json({{"provider", "anthropic"}, {"model", "claude-x"}, {"max_tokens", 32000},
                                          {"headers", {{"anthropic-beta", "interleaved-thinking-2025-05-14"}}}});
  EXPECT_EQ(a.base_url, "https://api.anthropic.com");
  EXPECT_EQ(a.api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_EQ(a.anthropic_version, "2023-06-01");
  EXPECT_TRUE(a.prompt_cache);
  EXPECT_EQ(model_config_from_json(a.to_json()).to_json(), a.to_json());
}

TEST(ModelClientConfig, RejectsBadFieldsNamingThem) {
  const ordered_json base = {{"provider", "openai"}, {"model", "m"}, {"base_url", "http://127.0.0.1:1/v1"}, {"api_key_env", ""}};
  struct Case {
    ordered_json patch;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {{{"provider", "gemini"}}, "provider: expected \"openai\""},
      {{{"colour", 1}}, "colour: unknown field"},
      {{{"model", ""}}, "model: must not be empty"},
      {{{"model", 3}}, "model: expected a string"},
      {{{"base_url", "ftp://x"}}, "base_url: must start with http"},
      {{{"base_url", "http://h/v1?x=1"}}, "base_url: must not contain a query"},
      {{{"api_key_env", "1BAD"}}, "api_key_env: '1BAD' is not"},
      {{{"api_key_env", ""}, {"base_url", "https://api.openai.com/v1"}}, "api_key_env: \"\" (no key) is for local servers"},
      {{{"max_tokens", 0}}, "max_tokens: must be in [1"},
      {{{"max_tokens", 1.5}}, "max_tokens: expected an integer"},
      {{{"max_tokens_field", "tokens"}}, "max_tokens_field: expected"},
      {{{"temperature", 3}}, "temperature: must be in [0, 2]"},
      {{{"top_p", 0}}, "top_p: must be in (0, 1]"},
      {{{"timeout_s", 0}}, "timeout_s: must be in (0"},
      {{{"max_retries", -1}}, "max_retries: must be in [0, 100]"},
      {{{"backoff_base_s", 5}, {"backoff_cap_s", 1}}, "backoff_cap_s: must be at least backoff_base_s"},
      {{{"prompt_cache", false}}, "prompt_cache: only for provider \"anthropic\""},
      {{{"anthropic_version", "2023-06-01"}}, "anthropic_version: only for provider"},
      {{{"headers", {{"Authorization", "Bearer sk-1"}}}}, "headers.Authorization: keys never go in the config"},
      {{{"headers", {{"Content-Type", "text/plain"}}}}, "headers.Content-Type: set by the client"},
      {{{"headers", {{"X-Ok", 1}}}}, "headers.X-Ok: expected a string"},
      {{{"headers", {{"X-Bad", "a\r\nb: c"}}}}, "headers.X-Bad: value contains a line break"},
      {{{"extra", {{"model", "other"}}}}, "extra.model: set by the client itself"},
      {{{"extra", {{"stream", true}}}}, "extra.stream: set by the client itself"},
      {{{"extra", 5}}, "extra: expected an object"},
  };
  for (const auto& c : cases) {
    ordered_json j = base;
    j.update(c.patch);
    try {
      (void)model_config_from_json(j, "run.json: model");
      ADD_FAILURE() << "accepted " << c.patch.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("run.json: model: " + c.fragment), std::string::npos)
          << c.patch.dump() << " -> " << e.what();
    }
  }
  try {
    (void)model_config_from_json({{"provider", "anthropic"}, {"model", "claude"}});
    ADD_FAILURE() << "anthropic without max_tokens accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("max_tokens: required for provider \"anthropic\""), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)model_config_from_json({{"provider", "anthropic"}, {"model", "c"}, {"max_tokens", 10}, {"temperature", 1.5}}),
               InputError)
      << "Anthropic's temperature is in [0, 1]";
}

TEST_F(ModelClientTest, MissingKeyIsAnErrorNamingTheVariable) {
  ::unsetenv("PTXB_TEST_NO_SUCH_KEY");
  ModelConfig c = openai_config({{"api_key_env", "PTXB_TEST_NO_SUCH_KEY"}});
  try {
    (void)make_model_client(c);
    FAIL() << "no error for a missing key";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("environment variable PTXB_TEST_NO_SUCH_KEY is not set"), std::string::npos) << e.what();
  }
  ::setenv("PTXB_TEST_NO_SUCH_KEY", "", 1);
  EXPECT_THROW((void)make_model_client(c), EnvironmentError) << "an empty key is a missing key";
  ::unsetenv("PTXB_TEST_NO_SUCH_KEY");

  // A local server without authentication: api_key_env "" sends no key at all.
  fake.push({200, openai_ok()});
  auto local = client(openai_config({{"api_key_env", ""}}));
  EXPECT_EQ(local->complete(one_turn()).text, "ok");
  EXPECT_EQ(fake.requests().at(0).headers.count("authorization"), 0u);
}

// ---------------------------------------------------------------------------------------------
// Wire formats and token accounting

TEST_F(ModelClientTest, OpenAISendsChatCompletionsAndCountsEveryKindOfToken) {
  fake.push({200, ordered_json{{"id", "chatcmpl-abc"},
                               {"object", "chat.completion"},
                               {"model", "test-model-0613"},
                               {"choices",
                                {{{"index", 0},
                                  {"message", {{"role", "assistant"}, {"content", "```cuda\n// v2\n```"}, {"reasoning_content", "Think."}}},
                                  {"finish_reason", "stop"}}}},
                               {"usage",
                                {{"prompt_tokens", 1200},
                                 {"completion_tokens", 800},
                                 {"total_tokens", 2000},
                                 {"prompt_tokens_details", {{"cached_tokens", 1024}}},
                                 {"completion_tokens_details", {{"reasoning_tokens", 500}}}}}}
                      .dump()});
  auto c = client(openai_config({{"temperature", 0.2}, {"extra", {{"seed", 7}}}}));
  ChatRequest req = two_turns();
  req.extra = {{"reasoning_effort", "high"}};
  ChatResponse r = c->complete(req);

  auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 1u);
  const HttpRequest& sent = requests[0];
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.path, "/v1/chat/completions");
  EXPECT_EQ(sent.headers.at("authorization"), std::string("Bearer ") + kKey);
  EXPECT_EQ(sent.headers.at("content-type"), "application/json");
  EXPECT_EQ(sent.headers.count("x-api-key"), 0u);
  ordered_json body = ordered_json::parse(sent.body);
  EXPECT_EQ(body["model"], "test-model");
  ASSERT_EQ(body["messages"].size(), 4u);
  EXPECT_EQ(body["messages"][0], (ordered_json{{"role", "system"}, {"content", "You write PTX kernels."}}))
      << "the system text is the first message";
  EXPECT_EQ(body["messages"][1]["role"], "user");
  EXPECT_EQ(body["messages"][2]["role"], "assistant");
  EXPECT_EQ(body["messages"][3], (ordered_json{{"role", "user"}, {"content", "It failed: fix it."}}));
  EXPECT_EQ(body["max_tokens"], 256);
  EXPECT_EQ(body.count("max_completion_tokens"), 0u);
  EXPECT_EQ(body["temperature"], 0.2);
  EXPECT_EQ(body.count("top_p"), 0u) << "unset sampling fields are left to the server";
  EXPECT_EQ(body["seed"], 7);
  EXPECT_EQ(body["reasoning_effort"], "high");
  EXPECT_EQ(body.count("system"), 0u);

  EXPECT_EQ(r.text, "```cuda\n// v2\n```");
  EXPECT_EQ(r.reasoning, "Think.");
  EXPECT_EQ(r.finish_reason, FinishReason::stop);
  EXPECT_EQ(r.raw_finish_reason, "stop");
  EXPECT_EQ(r.usage, (Usage{1200, 800, 500, 1024}));
  EXPECT_EQ(r.id, "chatcmpl-abc");
  EXPECT_EQ(r.model, "test-model-0613");
  EXPECT_EQ(r.attempts, 1);
  EXPECT_GT(r.latency_s, 0);
  EXPECT_GE(r.total_s, r.latency_s);
  EXPECT_TRUE(sleeps.waits.empty());

  // Per-request overrides, and max_completion_tokens for servers that want it.
  fake.push({200, openai_ok()});
  auto c2 = client(openai_config({{"max_tokens_field", "max_completion_tokens"}}));
  ChatRequest req2 = one_turn();
  req2.max_tokens = 64;
  req2.top_p = 0.9;
  req2.model = "other-model";
  (void)c2->complete(req2);
  ordered_json body2 = ordered_json::parse(fake.requests().at(1).body);
  EXPECT_EQ(body2["max_completion_tokens"], 64);
  EXPECT_EQ(body2.count("max_tokens"), 0u);
  EXPECT_EQ(body2["top_p"], 0.9);
  EXPECT_EQ(body2["model"], "other-model");
  EXPECT_EQ(body2["messages"].size(), 1u) << "no system message when there is no system text";
}

TEST_F(ModelClientTest, AnthropicSendsMessagesAndCountsCacheAndThinking) {
  fake.push({200, ordered_json{{"id", "msg_01"},
                               {"type", "message"},
                               {"role", "assistant"},
                               {"model", "claude-test-2"},
                               {"content",
                                {{{"type", "thinking"}, {"thinking", "First idea."}, {"signature", "sig"}},
                                 {{"type", "text"}, {"text", "Hello "}},
                                 {{"type", "redacted_thinking"}, {"data", "xyz"}},
                                 {{"type", "thinking"}, {"thinking", "Second idea."}, {"signature", "sig"}},
                                 {{"type", "text"}, {"text", "world"}}}},
                               {"stop_reason", "end_turn"},
                               {"stop_sequence", nullptr},
                               {"usage",
                                {{"input_tokens", 10},
                                 {"cache_creation_input_tokens", 2000},
                                 {"cache_read_input_tokens", 3000},
                                 {"output_tokens", 700}}}}
                      .dump()});
  auto c = client(anthropic_config({{"temperature", 1}, {"extra", {{"thinking", {{"type", "enabled"}, {"budget_tokens", 512}}}}}}));
  ChatResponse r = c->complete(two_turns());

  const HttpRequest sent = fake.requests().at(0);
  EXPECT_EQ(sent.path, "/v1/messages");
  EXPECT_EQ(sent.headers.at("x-api-key"), kKey);
  EXPECT_EQ(sent.headers.at("anthropic-version"), "2023-06-01");
  EXPECT_EQ(sent.headers.count("authorization"), 0u);
  ordered_json body = ordered_json::parse(sent.body);
  EXPECT_EQ(body["model"], "claude-test");
  EXPECT_EQ(body["max_tokens"], 1024);
  EXPECT_EQ(body["temperature"], 1);
  EXPECT_EQ(body["thinking"]["budget_tokens"], 512);
  ASSERT_TRUE(body["system"].is_array()) << "system is a top-level field (blocks, for the cache breakpoint)";
  EXPECT_EQ(body["system"][0]["text"], "You write PTX kernels.");
  EXPECT_EQ(body["system"][0]["cache_control"]["type"], "ephemeral");
  ASSERT_EQ(body["messages"].size(), 3u) << "no system message among the messages";
  for (const auto& m : body["messages"]) EXPECT_NE(m["role"], "system");
  EXPECT_EQ(body["messages"][0], (ordered_json{{"role", "user"}, {"content", "Write a GEMM."}}));
  EXPECT_EQ(body["messages"][2]["content"][0]["text"], "It failed: fix it.");
  EXPECT_EQ(body["messages"][2]["content"][0]["cache_control"]["type"], "ephemeral") << "the last user turn is cached";

  EXPECT_EQ(r.text, "Hello world") << "text = the text blocks joined";
  EXPECT_EQ(r.reasoning, "First idea.\n\nSecond idea.");
  EXPECT_EQ(r.reasoning_blocks, 3);
  EXPECT_EQ(r.finish_reason, FinishReason::stop);
  EXPECT_EQ(r.raw_finish_reason, "end_turn");
  EXPECT_EQ(r.usage.prompt_tokens, 5010) << "input + cache writes + cache reads";
  EXPECT_EQ(r.usage.cached_tokens, 3000);
  EXPECT_EQ(r.usage.completion_tokens, 700);
  EXPECT_EQ(r.usage.reasoning_tokens, 0) << "Anthropic does not report thinking tokens apart";
  EXPECT_EQ(r.id, "msg_01");
  EXPECT_EQ(r.model, "claude-test-2");

  // Without prompt caching: plain strings; and a config without a key header source.
  fake.push({200, anthropic_ok()});
  auto plain = client(anthropic_config({{"prompt_cache", false}, {"anthropic_version", "2099-01-01"}}));
  (void)plain->complete(two_turns());
  const HttpRequest sent2 = fake.requests().at(1);
  EXPECT_EQ(sent2.headers.at("anthropic-version"), "2099-01-01");
  ordered_json body2 = ordered_json::parse(sent2.body);
  EXPECT_EQ(body2["system"], "You write PTX kernels.");
  EXPECT_EQ(body2["messages"][2], (ordered_json{{"role", "user"}, {"content", "It failed: fix it."}}));
}

TEST_F(ModelClientTest, TruncatedOutputIsReturnedWithFinishReasonLength) {
  fake.push({200, openai_ok("<null>", "length",
                            {{"prompt_tokens", 10},
                             {"completion_tokens", 256},
                             {"prompt_tokens_details", nullptr},
                             {"completion_tokens_details", {{"reasoning_tokens", 256}}}})});
  ChatResponse o = client(openai_config())->complete(one_turn());
  EXPECT_EQ(o.finish_reason, FinishReason::length);
  EXPECT_EQ(o.text, "") << "all tokens went to reasoning: content is null";
  EXPECT_EQ(o.usage, (Usage{10, 256, 256, 0}));
  EXPECT_EQ(o.attempts, 1);

  fake.push({200, anthropic_ok("```cuda\n__global__ void k(", "max_tokens")});
  ChatResponse a = client(anthropic_config())->complete(one_turn());
  EXPECT_EQ(a.finish_reason, FinishReason::length);
  EXPECT_EQ(a.raw_finish_reason, "max_tokens");
  EXPECT_EQ(a.text, "```cuda\n__global__ void k(");

  fake.push({200, openai_ok("no", "content_filter")});
  EXPECT_EQ(client(openai_config())->complete(one_turn()).finish_reason, FinishReason::other);
  EXPECT_TRUE(sleeps.waits.empty());
}

TEST_F(ModelClientTest, BadRequestsFailBeforeSending) {
  auto c = client(openai_config());
  EXPECT_THROW((void)c->complete(ChatRequest{}), InputError);
  ChatRequest bad = one_turn();
  bad.messages.push_back({"system", "late system"});
  EXPECT_THROW((void)c->complete(bad), InputError);
  ChatRequest clash = one_turn();
  clash.extra = {{"messages", ordered_json::array()}};
  EXPECT_THROW((void)c->complete(clash), InputError);
  EXPECT_TRUE(fake.requests().empty());
}

// ---------------------------------------------------------------------------------------------
// Retries

TEST_F(ModelClientTest, RateLimitIsRetriedAfterTheToldDelay) {
  fake.push({429, openai_error("Rate limit reached for requests", "requests", "rate_limit_exceeded"), {{"Retry-After", "3"}}});
  fake.push({429, openai_error("Rate limit reached for tokens", "tokens", "rate_limit_exceeded"),
             {{"retry-after-ms", "1500"}, {"retry-after", "2"}}});
  fake.push({200, openai_ok("finally")});
  std::vector<std::string> retried;
  ClientHooks hooks = sleeps.hooks();
  hooks.on_retry = [&](const ModelApiError& e, double wait) {
    retried.push_back(std::string(e.what()) + " | " + std::to_string(wait));
    EXPECT_EQ(e.status(), 429);
    EXPECT_TRUE(e.retryable());
  };
  auto c = make_model_client(openai_config(), hooks);
  ChatResponse r = c->complete(one_turn());
  EXPECT_EQ(r.text, "finally");
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(sleeps.waits, (std::vector<double>{3.0, 1.5})) << "retry-after, then retry-after-ms over retry-after";
  ASSERT_EQ(retried.size(), 2u);
  EXPECT_NE(retried[0].find("HTTP 429"), std::string::npos) << retried[0];
  EXPECT_NE(retried[0].find("retrying in 3.00 s"), std::string::npos) << retried[0];
  EXPECT_EQ(fake.requests().size(), 3u);
  EXPECT_EQ(fake.requests()[2].body, fake.requests()[0].body) << "a retry sends the same request";

  // Anthropic: an HTTP-date retry-after, and a cap on what we take from it.
  fake.push({429, anthropic_error("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
             {{"retry-after", http_date(std::time(nullptr) + 30)}}});
  fake.push({429, anthropic_error("rate_limit_error", "slow down"), {{"retry-after", "100000"}}});
  fake.push({200, anthropic_ok()});
  sleeps.waits.clear();
  ChatResponse a = client(anthropic_config({{"retry_after_cap_s", 60}}))->complete(one_turn());
  EXPECT_EQ(a.attempts, 3);
  ASSERT_EQ(sleeps.waits.size(), 2u);
  EXPECT_NEAR(sleeps.waits[0], 30, 2);
  EXPECT_EQ(sleeps.waits[1], 60) << "retry_after_cap_s";
}

TEST_F(ModelClientTest, ServerErrorsAreRetriedWithJitteredBackoff) {
  fake.push({500, openai_error("The server had an error", "server_error")});
  fake.push({503, "<html>Service Unavailable</html>"});
  fake.push({200, openai_ok("after two")});
  ChatResponse r = client(openai_config())->complete(one_turn());
  EXPECT_EQ(r.text, "after two");
  EXPECT_EQ(r.attempts, 3);
  ASSERT_EQ(sleeps.waits.size(), 2u);
  EXPECT_LE(sleeps.waits[0], 0.5) << "first retry: U[0, base]";
  EXPECT_LE(sleeps.waits[1], 1.0) << "second retry: U[0, 2 base]";

  // Anthropic's 529 overloaded_error.
  sleeps.waits.clear();
  fake.push({529, anthropic_error("overloaded_error", "Overloaded")});
  fake.push({200, anthropic_ok("fine")});
  ChatResponse a = client(anthropic_config())->complete(one_turn());
  EXPECT_EQ(a.text, "fine");
  EXPECT_EQ(a.attempts, 2);
  EXPECT_EQ(sleeps.waits.size(), 1u);
}

TEST_F(ModelClientTest, GivesUpAfterMaxRetriesNamingProviderStatusAndMessage) {
  fake.push({503, anthropic_error("api_error", "Internal server error")}, 3);
  auto c = client(anthropic_config({{"max_retries", 2}}));
  ModelApiError e = expect_api_error([&] { (void)c->complete(one_turn()); });
  EXPECT_EQ(e.provider(), Provider::anthropic);
  EXPECT_EQ(e.kind(), ModelApiError::Kind::http);
  EXPECT_EQ(e.status(), 503);
  EXPECT_TRUE(e.retryable());
  EXPECT_EQ(e.attempts(), 3);
  EXPECT_EQ(e.provider_message(), "Internal server error");
  std::string what = e.what();
  EXPECT_EQ(what.rfind("anthropic: HTTP 503 (api_error): Internal server error", 0), 0u) << what;
  EXPECT_NE(what.find("gave up after 3 attempts"), std::string::npos) << what;
  EXPECT_EQ(fake.requests().size(), 3u);
  EXPECT_EQ(sleeps.waits.size(), 2u);
}

TEST_F(ModelClientTest, ClientErrorsFailFastWithoutRetry) {
  struct Case {
    int status;
    std::string body;
    std::string message;
  };
  const std::vector<Case> openai_cases = {
      {400, openai_error("max_tokens is too large: 999999", "invalid_request_error"), "max_tokens is too large"},
      {401, openai_error("Incorrect API key provided: sk-test", "invalid_request_error", "invalid_api_key"), "Incorrect API key"},
      {403, openai_error("Project does not have access to model", "invalid_request_error", "model_not_found"), "does not have access"},
      {404, R"({"object": "error", "message": "The model `nope` does not exist.", "type": "NotFoundError", "code": 404})",
       "The model `nope` does not exist."},  // vLLM's older top-level error shape
  };
  int sent = 0;
  for (const auto& k : openai_cases) {
    fake.push({k.status, k.body});
    auto c = client(openai_config());
    ModelApiError e = expect_api_error([&] { (void)c->complete(one_turn()); });
    ++sent;
    EXPECT_EQ(e.status(), k.status);
    EXPECT_FALSE(e.retryable());
    EXPECT_EQ(e.attempts(), 1);
    EXPECT_EQ(e.kind(), ModelApiError::Kind::http);
    EXPECT_EQ(e.provider(), Provider::openai);
    std::string what = e.what();
    EXPECT_EQ(what.rfind("openai: HTTP " + std::to_string(k.status), 0), 0u) << what;
    EXPECT_NE(what.find(k.message), std::string::npos) << what;
    EXPECT_NE(what.find("not retried"), std::string::npos) << what;
    EXPECT_EQ(fake.requests().size(), static_cast<std::size_t>(sent));
  }
  fake.push({401, anthropic_error("authentication_error", "invalid x-api-key")});
  ModelApiError a = expect_api_error([&] { (void)client(anthropic_config())->complete(one_turn()); });
  EXPECT_EQ(std::string(a.what()).rfind("anthropic: HTTP 401 (authentication_error): invalid x-api-key", 0), 0u) << a.what();
  EXPECT_FALSE(a.retryable());
  EXPECT_TRUE(sleeps.waits.empty());
}

TEST_F(ModelClientTest, SpendLimitIsNotRetried) {
  fake.push({429,
             openai_error("You exceeded your current quota, please check your plan and billing details.", "insufficient_quota",
                          "insufficient_quota"),
             {{"retry-after", "1"}}});
  ModelApiError o = expect_api_error([&] { (void)client(openai_config())->complete(one_turn()); });
  EXPECT_EQ(o.kind(), ModelApiError::Kind::spend_limit);
  EXPECT_EQ(o.status(), 429);
  EXPECT_FALSE(o.retryable());
  EXPECT_NE(std::string(o.what()).find("openai: spend limit reached: HTTP 429 (insufficient_quota): You exceeded your current quota"),
            std::string::npos)
      << o.what();

  fake.push({429, anthropic_error("rate_limit_error",
                                  "You have reached your specified API usage limits. You will regain access on 2026-01-01 at 00:00 UTC.")});
  ModelApiError a = expect_api_error([&] { (void)client(anthropic_config())->complete(one_turn()); });
  EXPECT_EQ(a.kind(), ModelApiError::Kind::spend_limit);
  EXPECT_FALSE(a.retryable());

  fake.push({400, anthropic_error("invalid_request_error",
                                  "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing.")});
  ModelApiError b = expect_api_error([&] { (void)client(anthropic_config())->complete(one_turn()); });
  EXPECT_EQ(b.kind(), ModelApiError::Kind::spend_limit);
  EXPECT_EQ(b.status(), 400);

  EXPECT_EQ(fake.requests().size(), 3u);
  EXPECT_TRUE(sleeps.waits.empty()) << "a spend limit is not waited out";
}

TEST_F(ModelClientTest, SlowResponseTimesOutAndIsRetried) {
  fake.push({200, openai_ok("too late"), {}, 1.0});
  fake.push({200, openai_ok("in time")});
  std::vector<ModelApiError::Kind> kinds;
  ClientHooks hooks = sleeps.hooks();
  hooks.on_retry = [&](const ModelApiError& e, double) { kinds.push_back(e.kind()); };
  auto c = make_model_client(openai_config({{"timeout_s", 0.25}}), hooks);
  auto t0 = std::chrono::steady_clock::now();
  ChatResponse r = c->complete(one_turn());
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.text, "in time");
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(kinds, (std::vector<ModelApiError::Kind>{ModelApiError::Kind::timeout}));
  EXPECT_LT(took, 0.9) << "the first attempt was cut at timeout_s, not waited out";
  EXPECT_EQ(sleeps.waits.size(), 1u);

  // Every attempt too slow: a timeout error after max_retries.
  fake.push({200, openai_ok(), {}, 0.6}, 2);
  auto slow = client(anthropic_config({{"timeout_s", 0.2}, {"max_retries", 1}}));
  ModelApiError e = expect_api_error([&] { (void)slow->complete(one_turn()); });
  EXPECT_EQ(e.kind(), ModelApiError::Kind::timeout);
  EXPECT_EQ(e.status(), 0);
  EXPECT_TRUE(e.retryable());
  EXPECT_EQ(e.attempts(), 2);
  EXPECT_NE(std::string(e.what()).find("within 0.2 s (timeout_s)"), std::string::npos) << e.what();
}

TEST_F(ModelClientTest, ConnectionRefusedIsRetriedThenReported) {
  ModelConfig c = openai_config({{"base_url", "http://127.0.0.1:" + std::to_string(free_port()) + "/v1"}, {"max_retries", 2}});
  ModelApiError e = expect_api_error([&] { (void)client(c)->complete(one_turn()); });
  EXPECT_EQ(e.kind(), ModelApiError::Kind::connection);
  EXPECT_EQ(e.status(), 0);
  EXPECT_TRUE(e.retryable());
  EXPECT_EQ(e.attempts(), 3);
  EXPECT_EQ(sleeps.waits.size(), 2u);
  EXPECT_NE(std::string(e.what()).find("openai: connection failed"), std::string::npos) << e.what();
}

TEST_F(ModelClientTest, MalformedBodiesAreRetriedTwiceThenFail) {
  fake.push({200, "{\"id\": \"chatcmpl-1\", \"choices\": [{\"mess"});
  fake.push({200, openai_ok("whole")});
  ChatResponse r = client(openai_config())->complete(one_turn());
  EXPECT_EQ(r.text, "whole");
  EXPECT_EQ(r.attempts, 2);

  fake.push({200, "not json at all"});
  fake.push({200, R"({"id": "x", "choices": []})"});
  fake.push({200, R"({"id": "x", "choices": [{"message": {"content": "no usage"}, "finish_reason": "stop"}]})"});
  fake.push({200, openai_ok("never reached")});
  ModelApiError e = expect_api_error([&] { (void)client(openai_config())->complete(one_turn()); });
  EXPECT_EQ(e.kind(), ModelApiError::Kind::malformed);
  EXPECT_EQ(e.status(), 200);
  EXPECT_FALSE(e.retryable());
  EXPECT_EQ(e.attempts(), 3) << "malformed_retries = 2";
  EXPECT_NE(e.provider_message().find("no usage"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("failed for good after 3 attempts"), std::string::npos) << e.what();
  EXPECT_EQ(fake.requests().size(), 5u);

  // An error object inside a 200 (some gateways) and a broken Anthropic body are malformed too.
  fake.push({200, anthropic_error("overloaded_error", "Overloaded")});
  fake.push({200, R"({"type": "message", "content": "text, not blocks", "usage": {"input_tokens": 1, "output_tokens": 1}})"});
  ModelApiError a = expect_api_error([&] { (void)client(anthropic_config({{"malformed_retries", 1}}))->complete(one_turn()); });
  EXPECT_EQ(a.kind(), ModelApiError::Kind::malformed);
  EXPECT_EQ(a.attempts(), 2);
}

TEST_F(ModelClientTest, OneClientServesManyThreads) {
  constexpr int kThreads = 8, kCalls = 4;
  fake.push({200, openai_ok("same")}, kThreads * kCalls);
  fake.push({500, openai_error("x", "server_error")});  // never reached
  auto c = client(openai_config());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i)
        if (c->complete(one_turn()).text == "same") ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kCalls);
  EXPECT_EQ(fake.requests().size(), static_cast<std::size_t>(kThreads * kCalls));
}

TEST(ModelClientWire, ProviderErrorsAreReadLeniently) {
  ProviderError o = parse_provider_error(R"({"error": {"message": "m", "type": "t", "code": "c"}})");
  EXPECT_EQ(o.message, "m");
  EXPECT_EQ(o.type, "t");
  EXPECT_EQ(o.code, "c");
  EXPECT_FALSE(o.spend_limit);
  ProviderError v = parse_provider_error(R"({"object": "error", "message": "bad", "type": "BadRequestError", "code": 400})");
  EXPECT_EQ(v.message, "bad");
  EXPECT_EQ(v.code, "400");
  ProviderError raw = parse_provider_error("<html>" + std::string(2000, 'x'));
  EXPECT_EQ(raw.message.size(), 503u) << "a non-JSON body is quoted, shortened";
  EXPECT_TRUE(parse_provider_error(R"({"type": "error", "error": {"type": "billing_error", "message": "x"}})").spend_limit);
  EXPECT_TRUE(parse_provider_error(R"({"error": {"message": "x", "type": "insufficient_quota", "code": null}})").spend_limit);
}

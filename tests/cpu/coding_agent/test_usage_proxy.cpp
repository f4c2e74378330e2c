// `ptxbench proxy` (coding_agent/usage_proxy.h) between a client and the scriptable fake provider:
// each wire format (chat completions, Responses, Anthropic Messages), streamed and whole, passes
// through unchanged but for the key, and its tokens land in the usage ledger under the trajectory
// of the URL; streams are forwarded while they arrive; the usage meter on its own; the ledger's
// hand-over of tokens to evaluation turns (the MCP session's usage hook), in-flight calls included.
#include <curl/curl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "llm/model_client.h"
#include "runs/run_store.h"
#include "common/sqlite_db.h"
#include "coding_agent/usage_ledger.h"
#include "coding_agent/usage_proxy.h"
#include "common/fs.h"
#include "helpers/fake_provider.h"

using namespace ptxbench;
using namespace ptxbench::coding_agent;
using fakes::FakeApi;
using fakes::FakeProvider;
using fakes::FakeToolCall;
using fakes::FakeTurn;
using fakes::FakeUsage;

namespace {

constexpr const char* kKeyEnv = "PTXB_TEST_UPSTREAM_KEY";
constexpr const char* kRealKey = "sk-real-upstream-key";

struct Reply {
  long status = 0;
  std::string body;
  double first_byte_s = -1;  ///< when the first body byte came, from the start
  double total_s = 0;
};

struct Sink {
  Reply* reply;
  std::chrono::steady_clock::time_point start;
};

std::size_t collect(char* data, std::size_t size, std::size_t n, void* p) {
  auto* s = static_cast<Sink*>(p);
  if (s->reply->first_byte_s < 0)
    s->reply->first_byte_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - s->start).count();
  s->reply->body.append(data, size * n);
  return size * n;
}

/// POSTs `body` as an agent's client would (with a dummy key), and reads the whole answer.
Reply post(const std::string& url, const std::string& body, const std::vector<std::string>& headers = {}) {
  Reply r;
  Sink sink{&r, std::chrono::steady_clock::now()};
  CURL* c = curl_easy_init();
  curl_slist* h = nullptr;
  h = curl_slist_append(h, "Content-Type: application/json");
  h = curl_slist_append(h, "Authorization: Bearer dummy-agent-key");
  h = curl_slist_append(h, "x-api-key: dummy-agent-key");
  for (const auto& line : headers) h = curl_slist_append(h, line.c_str());
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
  CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  r.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - sink.start).count();
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  EXPECT_EQ(rc, CURLE_OK) << curl_easy_strerror(rc);
  return r;
}

const char* path_of(FakeApi api) {
  switch (api) {
    case FakeApi::chat_completions: return "/chat/completions";
    case FakeApi::responses: return "/responses";
    case FakeApi::anthropic_messages: return "/v1/messages";
  }
  return "";
}

WireApi wire_of(FakeApi api) {
  switch (api) {
    case FakeApi::chat_completions: return WireApi::chat_completions;
    case FakeApi::responses: return WireApi::responses;
    case FakeApi::anthropic_messages: return WireApi::anthropic_messages;
  }
  return WireApi::other;
}

std::string request_body(FakeApi api, bool stream, bool include_usage = false) {
  ordered_json b = {{"model", "fake-model"}, {"stream", stream}};
  if (api == FakeApi::responses) b["input"] = "write a kernel";
  else b["messages"] = {{{"role", "user"}, {"content", "write a kernel"}}};
  if (api == FakeApi::anthropic_messages) b["max_tokens"] = 1024;
  if (include_usage) b["stream_options"] = {{"include_usage", true}};
  return b.dump();
}

FakeTurn tool_turn(FakeUsage usage) {
  FakeTurn t;
  t.text = "Submitting the kernel.";
  t.tool_calls = {{"", "evaluate", R"({"source": "__global__ void k() {}"})"}};
  t.usage = usage;
  return t;
}

struct UsageProxyTest : ::testing::Test {
  TempDir dir{"ptxbench-proxy"};
  FakeProvider fake;
  std::unique_ptr<UsageLedger> ledger;
  std::unique_ptr<UsageProxy> proxy;

  void SetUp() override {
    ::setenv(kKeyEnv, kRealKey, 1);
    ledger = std::make_unique<UsageLedger>((dir.path() / "runs.db").string());
    ProxyConfig c;
    c.upstream.openai_base_url = fake.url() + "/v1";
    c.upstream.openai_key_env = kKeyEnv;
    c.upstream.anthropic_base_url = fake.url();
    c.upstream.anthropic_key_env = kKeyEnv;
    proxy = std::make_unique<UsageProxy>(c, *ledger);
  }
  void TearDown() override {
    proxy.reset();
    ::unsetenv(kKeyEnv);
  }
  std::string url_for(FakeApi api, int64_t trajectory) const {
    return (api == FakeApi::anthropic_messages ? proxy->anthropic_base_url(trajectory) : proxy->openai_base_url(trajectory)) +
           path_of(api);
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// The meter alone

TEST(UsageMeter, ReadsEachFormatStreamedInAnyPiecesAndWhole) {
  const FakeTurn turn = tool_turn({1234, 321, 100, 1000});
  for (FakeApi api : {FakeApi::chat_completions, FakeApi::responses, FakeApi::anthropic_messages}) {
    SCOPED_TRACE(path_of(api));
    std::string stream;
    for (const auto& e : fakes::encode_turn_events(api, turn, "m-1")) stream += e;
    for (std::size_t piece : {std::size_t{1}, std::size_t{7}, stream.size()}) {
      UsageMeter meter(wire_of(api));
      for (std::size_t i = 0; i < stream.size(); i += piece) meter.feed_events(std::string_view(stream).substr(i, piece));
      meter.finish();
      EXPECT_TRUE(meter.usage().reported);
      EXPECT_EQ(meter.usage().prompt_tokens, 1234);
      EXPECT_EQ(meter.usage().completion_tokens, 321);
      EXPECT_EQ(meter.usage().cached_tokens, 1000);
      // Anthropic reports no reasoning count apart from the output tokens.
      EXPECT_EQ(meter.usage().reasoning_tokens, api == FakeApi::anthropic_messages ? 0 : 100);
      EXPECT_EQ(meter.model(), "m-1");
      EXPECT_GT(meter.events(), 3);
    }
    UsageMeter whole(wire_of(api));
    whole.read_body(fakes::encode_turn(api, turn, "m-2"));
    EXPECT_EQ(whole.usage().prompt_tokens, 1234);
    EXPECT_EQ(whole.usage().completion_tokens, 321);
    EXPECT_EQ(whole.usage().cached_tokens, 1000);
    EXPECT_EQ(whole.model(), "m-2");
  }
  UsageMeter none(WireApi::chat_completions);  // a stream that did not ask for usage carries none
  for (const auto& e : fakes::encode_turn_events(FakeApi::chat_completions, turn, "m", false)) none.feed_events(e);
  none.finish();
  EXPECT_FALSE(none.usage().reported);
  UsageMeter junk(WireApi::responses);
  junk.feed_events(": keep-alive\n\ndata: {not json\n\nevent: x\r\ndata: [DONE]\r\n\r\n");
  junk.read_body("<html>502</html>");
  junk.finish();
  EXPECT_FALSE(junk.usage().reported);
}

// ---------------------------------------------------------------------------------------------
// The proxy

TEST_F(UsageProxyTest, PassesEachFormatThroughStreamedAndWholeAndRecordsItsTokens) {
  int64_t trajectory = 40;
  for (FakeApi api : {FakeApi::chat_completions, FakeApi::responses, FakeApi::anthropic_messages}) {
    for (bool stream : {false, true}) {
      SCOPED_TRACE(std::string(path_of(api)) + (stream ? " streamed" : " whole"));
      ++trajectory;
      const FakeUsage usage{500 + trajectory, 50, api == FakeApi::anthropic_messages ? 0 : 7, 256};
      fake.push_turn(tool_turn(usage));
      Reply r = post(url_for(api, trajectory), request_body(api, stream));
      EXPECT_EQ(r.status, 200) << r.body;
      if (stream) {
        std::string expected;
        for (const auto& e : fakes::encode_turn_events(api, tool_turn(usage), "fake-model")) expected += e;
        EXPECT_EQ(r.body, expected) << "the stream passes through byte for byte";
      } else {
        EXPECT_EQ(r.body, fakes::encode_turn(api, tool_turn(usage), "fake-model"));
      }
      // The upstream got the real key, never the agent's dummy one.
      const HttpRequest sent = fake.requests().back();
      if (api == FakeApi::anthropic_messages) {
        EXPECT_EQ(sent.headers.at("x-api-key"), kRealKey);
        EXPECT_EQ(sent.headers.count("authorization"), 0u) << "the agent's other key header is dropped too";
        EXPECT_EQ(sent.path, "/v1/messages");
      } else {
        EXPECT_EQ(sent.headers.at("authorization"), std::string("Bearer ") + kRealKey);
        EXPECT_EQ(sent.headers.count("x-api-key"), 0u);
        EXPECT_EQ(sent.path, std::string("/v1") + path_of(api));
      }
      auto calls = ledger->calls(trajectory);
      ASSERT_EQ(calls.size(), 1u);
      const ModelCall& c = calls[0];
      EXPECT_EQ(c.api, wire_of(api));
      EXPECT_EQ(c.stream, stream);
      EXPECT_EQ(c.status, 200);
      EXPECT_EQ(c.model, "fake-model");
      EXPECT_TRUE(c.usage.reported);
      EXPECT_EQ(c.usage.prompt_tokens, usage.prompt);
      EXPECT_EQ(c.usage.completion_tokens, usage.completion);
      EXPECT_EQ(c.usage.reasoning_tokens, usage.reasoning);
      EXPECT_EQ(c.usage.cached_tokens, usage.cached);
      EXPECT_FALSE(c.in_flight());
      EXPECT_TRUE(c.error.empty()) << c.error;
    }
  }
}

TEST_F(UsageProxyTest, MakesStreamedChatCompletionsReportUsageAndKeepsWhatTheAgentAskedFor) {
  fake.push_turn(tool_turn({10, 2, 0, 0}));
  Reply r = post(url_for(FakeApi::chat_completions, 3), request_body(FakeApi::chat_completions, true));
  ordered_json sent = ordered_json::parse(fake.requests().back().body);
  EXPECT_EQ(sent["stream_options"]["include_usage"], true) << "injected";
  EXPECT_NE(r.body.find("\"usage\""), std::string::npos);
  EXPECT_EQ(ledger->calls(3).at(0).usage.prompt_tokens, 10);

  fake.push_turn(tool_turn({11, 3, 0, 0}));
  std::string asked = request_body(FakeApi::chat_completions, true, true);
  (void)post(url_for(FakeApi::chat_completions, 3), asked);
  EXPECT_EQ(fake.requests().back().body, asked) << "a body that asks already is sent as it came";
  EXPECT_EQ(ledger->calls(3).at(1).usage.prompt_tokens, 11);
}

TEST_F(UsageProxyTest, ForwardsAStreamWhileItArrives) {
  fake.set_event_delay(0.15);  // ~10 events: the whole answer takes over a second
  fake.push_turn(tool_turn({10, 2, 0, 0}));
  Reply r = post(url_for(FakeApi::responses, 5), request_body(FakeApi::responses, true));
  EXPECT_EQ(r.status, 200);
  EXPECT_GT(r.total_s, 1.0);
  EXPECT_LT(r.first_byte_s, 0.6) << "the first event reached the client before the answer was complete";
  EXPECT_EQ(ledger->calls(5).at(0).usage.prompt_tokens, 10);
}

TEST_F(UsageProxyTest, OurModelClientWorksThroughItAndErrorsPassThroughInTheCallersFormat) {
  fake.push_turn(tool_turn({77, 9, 0, 0}));
  ordered_json cj = {{"provider", "openai"}, {"base_url", proxy->openai_base_url(8)}, {"model", "fake-model"},
                     {"api_key_env", ""},    {"max_tokens", 64},                    {"max_retries", 0}};
  auto client = make_model_client(model_config_from_json(cj));
  ChatRequest req;
  req.messages = {{"user", "hi"}};
  ChatResponse answer = client->complete(req);
  EXPECT_EQ(answer.usage.prompt_tokens, 77);
  EXPECT_EQ(ledger->calls(8).at(0).usage.prompt_tokens, 77);

  // The provider's own error comes back as it was sent, status included, and is recorded.
  fake.push({429, R"({"error": {"message": "slow down", "type": "rate_limit"}})", {{"Retry-After", "3"}}});
  Reply limited = post(url_for(FakeApi::chat_completions, 8), request_body(FakeApi::chat_completions, true));
  EXPECT_EQ(limited.status, 429);
  EXPECT_NE(limited.body.find("slow down"), std::string::npos);
  auto calls = ledger->calls(8);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].status, 429);
  EXPECT_FALSE(calls[1].usage.reported);

  // No route, and an upstream that is not there: errors in the format the caller reads.
  Reply lost = post(proxy->url() + "/somewhere", "{}");
  EXPECT_EQ(lost.status, 404);
  EXPECT_NE(lost.body.find("no route"), std::string::npos);

  UsageLedger other((dir.path() / "other.db").string());
  ProxyConfig dead;
  dead.upstream.anthropic_base_url = "http://127.0.0.1:9";  // discard port: nothing listens
  UsageProxy nowhere(dead, other);
  Reply broken = post(nowhere.anthropic_base_url(2) + "/v1/messages", request_body(FakeApi::anthropic_messages, false));
  EXPECT_EQ(broken.status, 502);
  ordered_json e = ordered_json::parse(broken.body);
  EXPECT_EQ(e["type"], "error");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("failed"), std::string::npos);
  EXPECT_FALSE(other.calls(2).at(0).error.empty());
  Reply no_openai = post(nowhere.openai_base_url(2) + "/responses", request_body(FakeApi::responses, false));
  EXPECT_EQ(no_openai.status, 502);
  EXPECT_NE(no_openai.body.find("no OpenAI upstream"), std::string::npos);
}

TEST_F(UsageProxyTest, RefusesToStartWithoutTheKeyItShouldAdd) {
  ::unsetenv(kKeyEnv);
  ProxyConfig c;
  c.upstream.openai_base_url = fake.url() + "/v1";
  c.upstream.openai_key_env = kKeyEnv;
  EXPECT_THROW(UsageProxy(c, *ledger), EnvironmentError);
  EXPECT_THROW((void)upstream_config_from_json({{"openai_base_url", "ftp://x"}}), InputError);
  EXPECT_THROW((void)upstream_config_from_json({{"openai_url", "http://x"}}), InputError);
  EXPECT_THROW((void)upstream_config_from_json(ordered_json::object()), InputError);
  EXPECT_EQ(upstream_config_from_json({{"openai_base_url", "http://127.0.0.1:8000/v1/"}}).openai_base_url,
            "http://127.0.0.1:8000/v1");
}

// ---------------------------------------------------------------------------------------------
// From the ledger to the turns

TEST(UsageLedgerTurns, EachEvaluationTakesTheCallsSinceThePreviousOneAndWaitsForOneInFlight) {
  TempDir dir("ptxbench-ledger");
  const std::string store = (dir.path() / "runs.db").string();
  UsageLedger ledger(store);
  EXPECT_NO_THROW(RunStore(store, RunStore::Open::existing)) << "a ledger opened first leaves a run store";
  {
    SqliteDb other((dir.path() / "other.db").string());
    other.exec("CREATE TABLE t (x INTEGER)");
  }
  EXPECT_THROW(UsageLedger((dir.path() / "other.db").string()), StoreError) << "another kind of database";
  CallUsage u{100, 10, 2, 50, true};
  ledger.finish_call(ledger.begin_call(7, WireApi::responses, "m", true), 200, "m-served", u);
  ledger.finish_call(ledger.begin_call(7, WireApi::responses, "m", true), 200, "", u);
  ledger.finish_call(ledger.begin_call(8, WireApi::responses, "m", true), 200, "", u);  // another trajectory

  std::optional<ModelUsage> first = ledger.take(7, 1, 0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->prompt_tokens, 200);
  EXPECT_EQ(first->completion_tokens, 20);
  EXPECT_EQ(first->reasoning_tokens, 4);
  EXPECT_EQ(first->cached_tokens, 100);
  EXPECT_EQ(first->attempts, 2) << "attempts: the model calls of the turn";
  EXPECT_EQ(first->provider, "agent:responses");
  EXPECT_EQ(first->model, "m");
  EXPECT_FALSE(ledger.take(7, 2, 0)) << "nothing new since";

  // A call still streaming when the evaluation comes: waited for, then taken by that turn.
  const int64_t late = ledger.begin_call(7, WireApi::chat_completions, "m", true);
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    UsageLedger writer(store);  // another connection, as the proxy's process would have
    writer.finish_call(late, 200, "", CallUsage{5, 1, 0, 0, true});
  });
  std::optional<ModelUsage> second = ledger.take(7, 2, 5.0);
  finisher.join();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->prompt_tokens, 5);
  for (const ModelCall& c : ledger.calls(7)) EXPECT_TRUE(c.turn.has_value());

  // What no turn took: the agent's words after its last evaluation.
  ledger.finish_call(ledger.begin_call(7, WireApi::chat_completions, "m", false), 200, "", CallUsage{9, 9, 0, 0, true});
  UsageLedger::Unattributed rest = ledger.unattributed(7);
  EXPECT_EQ(rest.calls, 1);
  EXPECT_EQ(rest.usage.prompt_tokens, 9);

  // The MCP session's hook: the ledger's sum, or what zero_usage records when there is none.
  mcp::UsageHook hook = ledger_usage_hook(store, 0);
  ModelUsage from_ledger = hook({8, 1, "codex 1.0"});
  EXPECT_EQ(from_ledger.prompt_tokens, 100);
  ModelUsage none = hook({9, 1, "codex 1.0"});
  EXPECT_EQ(none.prompt_tokens, 0);
  EXPECT_EQ(none.provider, "mcp");
  EXPECT_EQ(none.model, "codex 1.0");
}

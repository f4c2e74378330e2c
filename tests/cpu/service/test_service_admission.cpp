// What the service admits: a quota per client (429) and a bound on the queue (503), both with
// Retry-After, idempotent resends never counted twice, the client and peer stored with each task,
// every submission (accepted or refused) in the log, and a client that waits out the back-pressure.
// The API runs in-process over real HTTP with no workers, so queued tasks stay queued.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "common/fs.h"
#include "common/sha256.h"
#include "definitions/catalog.h"
#include "service/http_server.h"
#include "service/service_api.h"
#include "service/service_client.h"
#include "service/service_log.h"
#include "service/service_metrics.h"
#include "service/sqlite_task_queue.h"

#include <spdlog/sinks/ostream_sink.h>  // after service_log.h, which selects spdlog's fmt

using namespace ptxbench;

namespace {

Verdict verdict_of(Status status) {
  Verdict v = infra_verdict("");
  v.status = status;
  return v;
}

/// Captures what the default logger says during one test.
class LogCapture {
 public:
  LogCapture() : m_previous(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(m_out));
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(m_previous); }
  [[nodiscard]] std::vector<ordered_json> submissions() const {
    std::vector<ordered_json> out;
    std::istringstream lines(m_out.str());
    for (std::string line; std::getline(lines, line);)
      if (auto at = line.find("submission {"); at != std::string::npos) out.push_back(ordered_json::parse(line.substr(at + 11)));
    return out;
  }

 private:
  std::ostringstream m_out;
  std::shared_ptr<spdlog::logger> m_previous;
};

struct ServiceAdmission : ::testing::Test {
  TempDir dir;
  LogCapture log;
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  std::string db = (dir.path() / "queue.db").string();
  std::unique_ptr<ServiceApi> api;
  std::unique_ptr<HttpServer> server;

  void start(AdmissionLimits limits) {
    ServiceApiOptions o;
    o.admission = limits;
    api = std::make_unique<ServiceApi>(catalog, QueueConfig{db}, o, [] { return ordered_json::array(); });
    HttpServerOptions http;
    http.port = 0;
    http.threads = 4;
    server = std::make_unique<HttpServer>(http, [this](const HttpRequest& r) { return api->handle(r); });
    server->start();
  }
  [[nodiscard]] std::string url() const { return "http://" + server->address(); }
  [[nodiscard]] ServiceClient client(const std::string& name, double busy_wait_s = 600) const {
    ServiceClientOptions o;
    o.client_name = name;
    o.busy_wait_s = busy_wait_s;
    return ServiceClient(url(), o);
  }
  void TearDown() override {
    if (server) server->stop();
  }
};

std::string body(const std::string& source) {
  return ordered_json{{"definition", "gemm_n7168_k5120"}, {"source", source}}.dump();
}

std::string id_of(const HttpResult& r) { return ordered_json::parse(r.body).value("id", ""); }

}  // namespace

TEST_F(ServiceAdmission, AClientOverItsQuotaGets429AndAFullQueue503) {
  start({/*max_queued=*/3, /*client_quota=*/2});
  ServiceClient alice = client("alice"), bob = client("bob");
  HttpResult a1 = alice.request("POST", "/v1/evaluations", body("// a1"), 10, {"Idempotency-Key: a1"});
  HttpResult a2 = alice.request("POST", "/v1/evaluations", body("// a2"));
  ASSERT_EQ(a1.status, 202) << a1.body;
  ASSERT_EQ(a2.status, 202) << a2.body;
  HttpResult a3 = alice.request("POST", "/v1/evaluations", body("// a3"));
  EXPECT_EQ(a3.status, 429) << a3.body;
  EXPECT_EQ(a3.headers["retry-after"], std::to_string(kRetryAfterS));
  EXPECT_NE(a3.body.find("client 'alice' has 2 evaluations queued or running, its quota is 2"), std::string::npos) << a3.body;
  // A resend under a known key is the same task: answered, not refused, not counted again.
  HttpResult again = alice.request("POST", "/v1/evaluations", body("// a1"), 10, {"Idempotency-Key: a1"});
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(id_of(again), id_of(a1));

  HttpResult b1 = bob.request("POST", "/v1/evaluations", body("// b1"));
  EXPECT_EQ(b1.status, 202) << "bob has his own quota: " << b1.body;
  HttpResult b2 = bob.request("POST", "/v1/evaluations", body("// b2"));
  EXPECT_EQ(b2.status, 503) << b2.body;
  EXPECT_EQ(b2.headers["retry-after"], std::to_string(kRetryAfterS));
  EXPECT_NE(b2.body.find("the queue is full (3 evaluations waiting, the bound is 3)"), std::string::npos) << b2.body;

  // A running task still counts against its client; a finished one does not. Nothing refused
  // was stored.
  SqliteTaskQueue q(db);
  EXPECT_EQ(q.state_counts()["queued"], 3);
  auto running = q.claim("w", 60);
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->task.id, id_of(a1));
  EXPECT_EQ(alice.request("POST", "/v1/evaluations", body("// a3")).status, 429);
  ASSERT_TRUE(q.complete(*running, verdict_of(Status::PASSED)));
  HttpResult a3_later = alice.request("POST", "/v1/evaluations", body("// a3"));
  EXPECT_EQ(a3_later.status, 202) << a3_later.body;

  QueueCounters c = q.counters();
  EXPECT_EQ(c.submissions["accepted"], 4);
  EXPECT_EQ(c.submissions["existing"], 1);
  EXPECT_EQ(c.submissions["over_quota"], 2);
  EXPECT_EQ(c.submissions["queue_full"], 1);
  std::string metrics = render_metrics(q, ordered_json::array());
  EXPECT_NE(metrics.find("ptxbench_submissions_total{outcome=\"over_quota\"} 2\n"), std::string::npos) << metrics;
}

TEST_F(ServiceAdmission, EachTaskRemembersItsClientAndEverySubmissionIsLogged) {
  start({0, 0});
  HttpResult named = client("ci-runner.7").request("POST", "/v1/evaluations", body("// named"));
  HttpResult anonymous = ServiceClient(url()).request("POST", "/v1/evaluations", body("// anonymous"));
  HttpResult bad_name = client("has space").request("POST", "/v1/evaluations", body("// x"));
  HttpResult bad_request = client("ci-runner.7").request("POST", "/v1/evaluations", R"({"definition": "gemm_nope", "source": "x"})");
  ASSERT_EQ(named.status, 202);
  ASSERT_EQ(anonymous.status, 202);
  EXPECT_EQ(bad_name.status, 400);
  EXPECT_NE(bad_name.body.find("X-Ptxbench-Client must be 1 to 64 characters"), std::string::npos) << bad_name.body;
  EXPECT_EQ(bad_request.status, 400);

  SqliteTaskQueue q(db);
  auto t = q.get(id_of(named));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->client, "ci-runner.7");
  EXPECT_EQ(t->peer.rfind("127.0.0.1:", 0), 0u) << t->peer;
  auto u = q.get(id_of(anonymous));
  EXPECT_EQ(u->client, "127.0.0.1") << "without a name, the client is its host (not host:port, which changes per connection)";
  EXPECT_EQ(ordered_json::parse(ServiceClient(url()).request("GET", "/v1/evaluations/" + t->id).body)["client"], "ci-runner.7");

  std::vector<ordered_json> lines = log.submissions();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["outcome"], "accepted");
  EXPECT_EQ(lines[0]["status"], 202);
  EXPECT_EQ(lines[0]["client"], "ci-runner.7");
  EXPECT_EQ(lines[0]["peer"], t->peer);
  EXPECT_EQ(lines[0]["task"], t->id);
  EXPECT_EQ(lines[0]["definition"], "gemm_n7168_k5120");
  EXPECT_EQ(lines[0]["source_sha256"], sha256_hex("// named"));
  EXPECT_EQ(lines[1]["client"], "127.0.0.1");
  EXPECT_EQ(lines[2]["outcome"], "invalid");
  EXPECT_EQ(lines[2]["status"], 400);
  EXPECT_FALSE(lines[2].contains("task"));
  EXPECT_EQ(lines[3]["outcome"], "invalid");
  EXPECT_NE(lines[3]["reason"].get<std::string>().find("unknown definition"), std::string::npos) << lines[3].dump();
}

// The client treats 429/503 as back-pressure: it waits as told and resends, up to its patience.
TEST_F(ServiceAdmission, TheClientWaitsOutItsQuota) {
  start({0, 1});
  ServiceClient alice = client("alice");
  std::string first = alice.submit_body(ordered_json::parse(body("// first")));
  EXPECT_THROW(client("alice", 0.2).submit_body(ordered_json::parse(body("// impatient"))), ServiceBusy);
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    SqliteTaskQueue q(db);
    auto c = q.claim("w", 60);
    ASSERT_TRUE(c.has_value());
    q.complete(*c, verdict_of(Status::PASSED));
  });
  auto t0 = std::chrono::steady_clock::now();
  std::string second = alice.submit_body(ordered_json::parse(body("// second")), "second-key");
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  finisher.join();
  EXPECT_NE(second, first);
  EXPECT_GE(waited, 0.3);
  SqliteTaskQueue q(db);
  EXPECT_EQ(q.get(second)->client, "alice");
  EXPECT_EQ(q.counters().submissions["accepted"], 2) << "the resend after the wait is one task";
}

// A service failing on its side while a client waits for a verdict (a 5xx to GET, as during a
// restart behind a proxy) is the environment's failure, exit 3 in the CLI; a 404 stays an error of
// the request's own (the evaluation is unknown there).
TEST(ServiceClientErrors, AFailingServiceWhileWaitingIsTheEnvironments) {
  HttpServerOptions http;
  HttpServer server(http, [](const HttpRequest& r) {
    HttpResponse resp;
    resp.status = r.path == "/v1/evaluations/gone" ? 404 : 502;
    resp.body = R"({"error": "upstream down"})";
    return resp;
  });
  server.start();
  ServiceClient client("http://127.0.0.1:" + std::to_string(server.port()));
  try {
    (void)client.wait_done("abc", 5);
    FAIL() << "a 502 gave a verdict";
  } catch (const ServiceUnreachable& e) {
    EXPECT_NE(std::string(e.what()).find("502"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("upstream down"), std::string::npos) << e.what();
  }
  try {
    (void)client.get("gone");
    FAIL() << "a 404 gave a task";
  } catch (const EnvironmentError& e) {
    FAIL() << "a 404 was taken for the environment's failure: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("404"), std::string::npos) << e.what();
  }
}

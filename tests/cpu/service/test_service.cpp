// The evaluation service end to end on the CPU: a real `ptxbench serve` process with fake GPU
// workers (no GPU needed), spoken to over HTTP — request validation, scheduling over several
// workers, a kill -9 of the service mid-load, crashing workers and infrastructure errors.
#include <gtest/gtest.h>
#include <signal.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <set>
#include <thread>

#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "definitions/catalog.h"
#include "service/instance.h"
#include "service/local_service.h"
#include "service/service_client.h"
#include "suite/suite_load.h"
#include "verdict/status.h"

using namespace ptxbench;

namespace {

fs::path ptxbench_binary() { return executable_dir() / "ptxbench"; }

// A `ptxbench serve --fake-gpus N` on an ephemeral port, killed with its group on destruction.
class ServiceProcess {
 public:
  ServiceProcess(const fs::path& db, int gpus, double lease_s = 3, const std::vector<std::string>& extra = {},
                 const std::string& listen = "127.0.0.1:0") {
    std::vector<std::string> args = {"--fake-gpus", std::to_string(gpus), "--lease", std::to_string(lease_s)};
    args.insert(args.end(), extra.begin(), extra.end());
    m_service = std::make_unique<LocalService>(ptxbench_binary(), db, args, listen,
                                               std::vector<std::string>{std::string("PTXBENCH_HOME=") + PTXBENCH_SOURCE_DIR}, 15);
  }
  /// kill -9 of the service process alone, as a crash would do.
  void crash() { m_service->crash(); }
  [[nodiscard]] const std::string& url() const { return m_service->url(); }
  /// The log of the service and its workers so far.
  [[nodiscard]] std::string log() const { return m_service->log(); }

 private:
  std::unique_ptr<LocalService> m_service;
};

/// Whether the service's log shows `fragment` within `timeout_s`: a line is written just after
/// the event it tells of, and the test reads the log through a pipe.
bool log_shows(const ServiceProcess& service, const std::string& fragment, double timeout_s = 10) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (service.log().find(fragment) != std::string::npos) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

ordered_json submission(const std::string& source) {
  return {{"definition", "gemm_n7168_k5120"}, {"source", source}};
}

// A loopback port that was free a moment ago (a restarted service must come back on the same one).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

LoadCase fake_case(const std::string& name, const std::string& source, const std::string& expected) {
  LoadCase c;
  c.definition = "gemm_n7168_k5120";
  c.c.name = name;
  c.c.source = source;
  c.c.expect.status = status_from_name(expected);
  return c;
}

struct ServiceTest : ::testing::Test {
  TempDir dir;
  fs::path db() const { return dir.path() / "queue.db"; }
};

}  // namespace

TEST_F(ServiceTest, ValidatesRequestsWithClearErrors) {
  ServiceProcess service(db(), 1);
  ServiceClient client(service.url());
  auto expect = [&](const std::string& method, const std::string& path, const std::string& body, long status,
                    const std::string& fragment) {
    HttpResult r = client.request(method, path, body);
    EXPECT_EQ(r.status, status) << method << " " << path << ": " << r.body;
    EXPECT_NE(r.body.find(fragment), std::string::npos) << r.body;
  };
  expect("POST", "/v1/evaluations", "{not json", 400, "malformed JSON");
  expect("POST", "/v1/evaluations", R"({"definition": "gemm_nope", "source": "x"})", 400, "unknown definition");
  expect("POST", "/v1/evaluations", R"({"definition": "gemm_n7168_k5120", "source": "x", "colour": 1})", 400, "colour: unknown field");
  expect("POST", "/v1/evaluations", R"({"definition": "gemm_n7168_k5120", "source": ""})", 400, "empty source");
  expect("POST", "/v1/evaluations", R"({"definition": "gemm_n7168_k5120", "workload": "M=1", "source": "x"})", 400, "workload");
  expect("POST", "/v1/evaluations", R"({"definition": "gemm_n7168_k5120", "source": "x", "options": {"trials": 0}})", 400,
         "options.trials");
  expect("POST", "/v1/evaluations", submission(std::string(1100000, 'x')).dump(), 413, "limit is");
  expect("GET", "/v1/evaluations", "", 405, "POST");
  expect("GET", "/v1/evaluations/0123456789abcdef0123456789abcdef", "", 404, "no evaluation");
  expect("GET", "/v1/evaluations/not-hex!", "", 400, "malformed evaluation id");
  expect("GET", "/v1/evaluations/0123456789abcdef0123456789abcdef?wait=soon", "", 400, "wait must be");
  expect("GET", "/v2/things", "", 404, "no such endpoint");
  HttpResult defs = client.request("GET", "/v1/definitions");
  EXPECT_EQ(defs.status, 200);
  // Every catalog definition, the generalization ones included (docs/definitions.md).
  EXPECT_EQ(ordered_json::parse(defs.body).size(), Catalog::load(PTXBENCH_SOURCE_DIR).definitions().size());
  EXPECT_NE(defs.body.find("\"mha_bwd_d128_causal\""), std::string::npos);
  HttpResult health = client.request("GET", "/v1/health");
  EXPECT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(ordered_json::parse(health.body)["gpus"][0]["state"], "running");
  HttpResult metrics = client.request("GET", "/metrics");
  EXPECT_NE(metrics.body.find("ptxbench_queue_tasks{state=\"queued\"}"), std::string::npos);
  EXPECT_NE(metrics.body.find("ptxbench_worker_up{device=\"0\",worker=\"gpu0\"} 1"), std::string::npos) << metrics.body;
  EXPECT_THROW(client.submit_body({{"definition", "gemm_n7168_k5120"}}), InputError);
}

TEST_F(ServiceTest, SpreadsWorkOverEveryWorkerAndFinishesEachTaskOnce) {
  ServiceProcess service(db(), 3);
  ServiceClient client(service.url());
  std::vector<std::string> ids;
  for (int i = 0; i < 24; ++i) ids.push_back(client.submit_body(submission("// PTXB_FAKE_SECONDS=0.1 task " + std::to_string(i))));
  std::set<std::string> workers;
  for (const auto& id : ids) {
    ordered_json t = client.wait_done(id, 60).task;
    EXPECT_EQ(t["status"], "PASSED");
    EXPECT_EQ(t["attempts"], 1);
    EXPECT_EQ(t["verdict"]["service"]["task"], id);
    // queued, then claimed, then finished after its 0.1 s of fake work
    EXPECT_GE(t["started_at"].get<double>(), t["created_at"].get<double>());
    EXPECT_GE(t["finished_at"].get<double>() - t["started_at"].get<double>(), 0.1);
    workers.insert(t["worker"].get<std::string>());
  }
  EXPECT_EQ(workers.size(), 3u) << "all three workers should have taken tasks";
  ordered_json incorrect = client.wait_done(client.submit_body(submission("// PTXB_FAKE_STATUS=INCORRECT_NUMERICAL")), 30).task;
  EXPECT_EQ(incorrect["status"], "INCORRECT_NUMERICAL");
  EXPECT_EQ(incorrect["attempts"], 1) << "a candidate's failure is a verdict, not a retry";
}

TEST_F(ServiceTest, AcceptedTasksSurviveAKillOfTheService) {
  std::vector<std::string> ids;
  {
    ServiceProcess service(db(), 2);
    ServiceClient client(service.url());
    for (int i = 0; i < 12; ++i) ids.push_back(client.submit_body(submission("// PTXB_FAKE_SECONDS=0.4 #" + std::to_string(i))));
    std::this_thread::sleep_for(std::chrono::milliseconds(600));  // some done, some running, most queued
    service.crash();
  }
  ServiceProcess again(db(), 2);
  ServiceClient client(again.url());
  int rerun = 0;
  for (const auto& id : ids) {
    ordered_json t = client.wait_done(id, 60).task;
    EXPECT_EQ(t["status"], "PASSED") << t.dump();
    if (t["attempts"].get<int>() > 1) ++rerun;
  }
  EXPECT_LE(rerun, 2) << "only the tasks running at the kill may run again";
  // The counters live in the queue: the restarted service counts the first one's verdicts too.
  std::string metrics = client.request("GET", "/metrics").body;
  EXPECT_NE(metrics.find("ptxbench_evaluations_total{status=\"PASSED\"} 12\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("ptxbench_evaluation_seconds_count 12\n"), std::string::npos) << metrics;
  if (rerun > 0) {
    EXPECT_TRUE(log_shows(again, "re-queued")) << "the restart's re-queues are logged: " << again.log();
  }
}

TEST_F(ServiceTest, CrashingWorkersAreRestartedAndAPoisonTaskIsGivenUp) {
  ServiceProcess service(db(), 2);
  ServiceClient client(service.url());
  std::string poison = client.submit_body(submission("// PTXB_FAKE_CRASH"));
  std::string infra = client.submit_body(submission("// PTXB_FAKE_STATUS=INFRA_ERROR"));
  std::vector<std::string> good;
  for (int i = 0; i < 6; ++i) good.push_back(client.submit_body(submission("// fine " + std::to_string(i))));
  for (const auto& id : good) EXPECT_EQ(client.wait_done(id, 60).task["status"], "PASSED");
  ordered_json p = client.wait_done(poison, 60).task;
  EXPECT_EQ(p["status"], "INFRA_ERROR");
  EXPECT_EQ(p["attempts"], 3);
  EXPECT_NE(p["verdict"]["message"].get<std::string>().find("gave up"), std::string::npos);
  ordered_json i = client.wait_done(infra, 60).task;
  EXPECT_EQ(i["status"], "INFRA_ERROR");
  EXPECT_EQ(i["attempts"], 3);
  ordered_json health = ordered_json::parse(client.request("GET", "/v1/health").body);
  int restarts = 0;
  for (const auto& g : health["gpus"]) restarts += g["restarts"].get<int>();
  EXPECT_GE(restarts, 4) << health.dump();
  // Serve and its workers log to one stream: the crashes, restarts and re-queues are all there.
  EXPECT_TRUE(log_shows(service, "Z warning [serve] worker gpu")) << service.log();
  EXPECT_TRUE(log_shows(service, "task(s) taken back (re-queued, or given up after 3 attempts); restart in")) << service.log();
  EXPECT_TRUE(log_shows(service, "Z info [serve] worker gpu")) << service.log();
  EXPECT_TRUE(log_shows(service, " restarted (pid ")) << service.log();
  EXPECT_TRUE(log_shows(service, "task " + infra + " attempt 1/3: INFRA_ERROR")) << service.log();
  EXPECT_TRUE(log_shows(service, "task " + infra + " attempt 3/3: INFRA_ERROR")) << service.log();
  EXPECT_TRUE(log_shows(service, "given up; worker gpu")) << service.log();
  EXPECT_TRUE(log_shows(service, "Z info [gpu0] GPU 0 healthy")) << "the workers' lines reach serve's stderr: " << service.log();
  EXPECT_TRUE(log_shows(service, R"(submission {"outcome":"accepted","status":202)")) << service.log();
}

// With a check worker, a candidate that fails its compile stage gets its verdict while the only
// GPU worker is busy; one that passes it goes on to the GPU worker, its attempts counted there.
TEST_F(ServiceTest, ACompileStageVerdictNeverWaitsForABusyGpuWorker) {
  ServiceProcess service(db(), 1, 3, {"--check-workers", "1"});
  ServiceClient client(service.url());
  const std::string slow = client.submit_body(submission("// PTXB_FAKE_SECONDS=4 slow"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the GPU worker (or the check worker's pass) has it
  const auto submitted = std::chrono::steady_clock::now();
  const std::string broken = client.submit_body(submission("// PTXB_FAKE_STATUS=COMPILE_ERROR"));
  const std::string banned = client.submit_body(submission("// PTXB_FAKE_STATUS=BANNED_API"));
  const std::string fine = client.submit_body(submission("// PTXB_FAKE_SECONDS=0.05 fine"));
  ordered_json b = client.wait_done(broken, 30).task;
  ordered_json n = client.wait_done(banned, 30).task;
  const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - submitted).count();
  EXPECT_EQ(b["status"], "COMPILE_ERROR");
  EXPECT_EQ(n["status"], "BANNED_API");
  EXPECT_EQ(b["worker"], "check0");
  EXPECT_EQ(b["verdict"]["checked_by"], "check worker");
  EXPECT_LT(waited_s, 3.0) << "the compile-stage verdicts came while the GPU worker had 4 s of work";
  EXPECT_EQ(client.get(slow)["state"], "running") << "the slow task still holds the GPU worker";
  ordered_json f = client.wait_done(fine, 30).task;
  EXPECT_EQ(f["status"], "PASSED");
  EXPECT_EQ(f["worker"], "gpu0");
  EXPECT_EQ(f["lane"], "gpu");
  EXPECT_EQ(f["attempts"], 1);
  EXPECT_EQ(f["note"], "compile stage passed");
  ordered_json health = ordered_json::parse(client.request("GET", "/v1/health").body);
  ASSERT_EQ(health["check_workers"].size(), 1u) << health.dump();
  EXPECT_EQ(health["check_workers"][0]["state"], "running");
  EXPECT_EQ(health["gpus"].size(), 1u) << "check workers are not GPUs: " << health.dump();
}

TEST_F(ServiceTest, EvalCommandWorksThroughTheService) {
  ServiceProcess service(db(), 2);
  write_file_atomic(dir.path() / "good.cu", "// PTXB_FAKE_SECONDS=0.05\n");
  write_file_atomic(dir.path() / "bad.cu", "// PTXB_FAKE_STATUS=COMPILE_ERROR\n");
  ProcessSpec spec;
  spec.argv = {ptxbench_binary().string(), "eval", "gemm_n7168_k5120", (dir.path() / "good.cu").string(),
               (dir.path() / "bad.cu").string(), "--service", service.url(), "--json"};
  spec.env_overrides = {std::string("PTXBENCH_HOME=") + PTXBENCH_SOURCE_DIR};
  ProcessResult r = run_process(spec, 60);
  ASSERT_TRUE(r.status.success()) << r.err.text;
  std::vector<std::string> statuses;
  std::istringstream lines(r.out.text);
  for (std::string line; std::getline(lines, line);) statuses.push_back(ordered_json::parse(line)["status"]);
  EXPECT_EQ(statuses, (std::vector<std::string>{"PASSED", "COMPILE_ERROR"}));
}

TEST_F(ServiceTest, AnUnhealthyGpuAfterAKillRequeuesTheTaskAndASickGpuIsExcluded) {
  ::setenv("PTXBENCH_FAKE_SICK_DEVICES", "1", 1);  // inherited by the service and its workers
  ServiceProcess service(db(), 2);
  ::unsetenv("PTXBENCH_FAKE_SICK_DEVICES");
  ServiceClient client(service.url());
  // A TIMEOUT on a healthy GPU is the candidate's verdict; one that breaks the GPU is re-run.
  ordered_json plain = client.wait_done(client.submit_body(submission("// PTXB_FAKE_STATUS=TIMEOUT")), 60).task;
  EXPECT_EQ(plain["status"], "TIMEOUT");
  EXPECT_EQ(plain["attempts"], 1);
  ordered_json broke = client.wait_done(client.submit_body(submission("// PTXB_FAKE_STATUS=TIMEOUT PTXB_FAKE_BREAKS_GPU")), 90).task;
  EXPECT_EQ(broke["status"], "INFRA_ERROR") << broke.dump();
  EXPECT_EQ(broke["attempts"], 3);
  EXPECT_NE(broke["verdict"]["message"].get<std::string>().find("GPU unhealthy after this evaluation"), std::string::npos);
  // Device 1 fails every health check: it never takes work and ends up excluded.
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(client.submit_body(submission("// ok " + std::to_string(i))));
  for (const auto& id : ids) EXPECT_EQ(client.wait_done(id, 60).task["worker"], "gpu0");
  ordered_json gpus;
  for (int i = 0; i < 150; ++i) {
    gpus = ordered_json::parse(client.request("GET", "/v1/health").body)["gpus"];
    if (gpus[1]["state"] == "excluded") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(gpus[1]["state"], "excluded") << gpus.dump();
  EXPECT_TRUE(log_shows(service, "GPU 1 excluded after 5 failures")) << service.log();
  EXPECT_TRUE(log_shows(service, "Z error [gpu1] GPU 1 unhealthy: ")) << service.log();
  EXPECT_TRUE(log_shows(service, "Z error [gpu0] task " + broke["id"].get<std::string>() +
                                     " attempt 1/3: GPU 0 unhealthy after its TIMEOUT verdict; re-queued"))
      << service.log();
  EXPECT_EQ(gpus[1]["last_check"]["state"], "unhealthy");
  EXPECT_EQ(gpus[0]["last_check"]["state"], "healthy");
  EXPECT_EQ(gpus[0]["last_check"]["detail"]["calibration_us"], 100.0);
}

// --log-level reaches serve and its workers; an unknown level is refused with the choices.
TEST_F(ServiceTest, TheLogLevelGoesToTheWorkersAndAnUnknownOneIsRefused) {
  ProcessSpec spec;
  spec.argv = {ptxbench_binary().string(), "serve", "--fake-gpus", "1", "--db", db().string(), "--log-level", "loud"};
  ProcessResult bad = run_process(spec, 30);
  EXPECT_FALSE(bad.status.success());
  EXPECT_NE(bad.err.text.find("loud"), std::string::npos) << bad.err.text;
  EXPECT_NE(bad.err.text.find("trace"), std::string::npos) << "the choices are named: " << bad.err.text;

  std::string id;
  {
    ServiceProcess verbose(db(), 1, 3, {"--log-level", "debug"});
    ServiceClient client(verbose.url());
    id = client.submit_body(submission("// PTXB_FAKE_SECONDS=0.01 verbose"));
    EXPECT_EQ(client.wait_done(id, 30).task["status"], "PASSED");
    EXPECT_TRUE(log_shows(verbose, "Z debug [gpu0] task " + id + " done: PASSED")) << verbose.log();
  }
  ServiceProcess quiet(db(), 1, 3, {"--log-level", "warn"});
  ServiceClient client(quiet.url());
  EXPECT_EQ(client.wait_done(client.submit_body(submission("// PTXB_FAKE_SECONDS=0.01 quiet")), 30).task["status"], "PASSED");
  EXPECT_EQ(quiet.log().find("Z info "), std::string::npos) << quiet.log();
  EXPECT_EQ(quiet.log().find("Z debug "), std::string::npos) << quiet.log();
}

TEST_F(ServiceTest, ResentSubmissionsWithAnIdempotencyKeyMakeNoTwin) {
  ServiceProcess service(db(), 1);
  ServiceClient client(service.url());
  std::string body = submission("// PTXB_FAKE_SECONDS=0.05 keyed").dump();
  HttpResult first = client.request("POST", "/v1/evaluations", body, 10, {"Idempotency-Key: run7-turn3"});
  HttpResult again = client.request("POST", "/v1/evaluations", body, 10, {"Idempotency-Key: run7-turn3"});
  EXPECT_EQ(first.status, 202) << first.body;
  EXPECT_EQ(again.status, 200) << again.body;
  std::string id = ordered_json::parse(first.body)["id"];
  EXPECT_EQ(ordered_json::parse(again.body)["id"], id);
  EXPECT_EQ(client.submit_body(ordered_json::parse(body), "run7-turn3"), id);
  HttpResult other = client.request("POST", "/v1/evaluations", submission("// another").dump(), 10, {"Idempotency-Key: run7-turn3"});
  EXPECT_EQ(other.status, 409) << other.body;
  EXPECT_NE(other.body.find("different request"), std::string::npos);
  HttpResult bad = client.request("POST", "/v1/evaluations", body, 10, {"Idempotency-Key: no spaces allowed"});
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(client.submit_body(ordered_json::parse(body)), id) << "no key: a new task";
  EXPECT_EQ(client.wait_done(id, 30).task["attempts"], 1);
}

TEST_F(ServiceTest, WorkersSharingAGpuOverlapUntimedWorkButNeverATimedStage) {
  ServiceProcess service(db(), 1, 3, {"--workers-per-gpu", "3"});
  ServiceClient client(service.url());
  std::vector<std::string> ids;
  for (int i = 0; i < 18; ++i) ids.push_back(client.submit_body(submission("// PTXB_FAKE_SECONDS=0.3 #" + std::to_string(i))));
  struct Interval {
    double from, to;
    bool exclusive;
    int task;
  };
  std::vector<Interval> holds;
  std::set<std::string> workers;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ordered_json t = client.wait_done(ids[i], 60).task;
    ASSERT_EQ(t["status"], "PASSED") << t.dump();
    workers.insert(t["worker"].get<std::string>());
    const auto& h = t["verdict"]["gpu_lock_holds"];
    holds.push_back({h["shared"][0], h["shared"][1], false, static_cast<int>(i)});
    holds.push_back({h["exclusive"][0], h["exclusive"][1], true, static_cast<int>(i)});
  }
  EXPECT_EQ(workers, (std::set<std::string>{"gpu0.0", "gpu0.1", "gpu0.2"}));
  int overlapping_shared = 0;
  for (const auto& a : holds)
    for (const auto& b : holds) {
      if (a.task >= b.task) continue;
      bool overlap = a.from < b.to && b.from < a.to;
      if (overlap && (a.exclusive || b.exclusive))
        ADD_FAILURE() << "task " << a.task << (a.exclusive ? " timing" : " untimed") << " overlaps task " << b.task
                      << (b.exclusive ? " timing" : " untimed");
      if (overlap && !a.exclusive && !b.exclusive) ++overlapping_shared;
    }
  EXPECT_GT(overlapping_shared, 0) << "untimed stages of different workers should run at the same time";
  ordered_json health = ordered_json::parse(client.request("GET", "/v1/health").body);
  EXPECT_EQ(health["gpus"].size(), 3u);
  // /metrics: one series per worker, none repeated (Prometheus rejects a repeated series).
  std::istringstream metrics(client.request("GET", "/metrics").body);
  std::set<std::string> series;
  int worker_series = 0;
  for (std::string line; std::getline(metrics, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::string name_and_labels = line.substr(0, line.rfind(' '));
    EXPECT_TRUE(series.insert(name_and_labels).second) << "repeated series: " << name_and_labels;
    if (name_and_labels.rfind("ptxbench_worker_up{", 0) == 0) ++worker_series;
  }
  EXPECT_EQ(worker_series, 3);
}

TEST_F(ServiceTest, LoadDriverFindsAWrongVerdict) {
  ServiceProcess service(db(), 2);
  std::vector<LoadCase> cases = {fake_case("good", "// PTXB_FAKE_SECONDS=0.02", "PASSED"),
                                 fake_case("mislabelled", "// PTXB_FAKE_STATUS=TIMEOUT", "PASSED")};
  LoadOptions o;
  o.service = service.url();
  o.count = 6;
  o.clients = 3;
  LoadReport r = run_load(cases, o);
  ordered_json s = r.summary();
  EXPECT_FALSE(r.all_as_expected());
  EXPECT_EQ(s["as_expected"], 3);
  EXPECT_EQ(s["not_as_expected"].size(), 3u);
  EXPECT_EQ(s["not_as_expected"][0]["problem"], "status TIMEOUT, expected PASSED");
  EXPECT_EQ(s["by_status"]["PASSED"]["count"], 3);
  EXPECT_EQ(s["by_status"]["TIMEOUT"]["count"], 3);
}

// A service that stays unreachable past the outage allowance (it went away in the middle of a load)
// is the environment's failure, exit 3 in the CLI, never the load's own bug (exit 1).
TEST_F(ServiceTest, LoadDriverReportsAServiceGoneBeyondItsOutageAsTheEnvironments) {
  int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(probe, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(probe);  // nothing listens on this port now
  LoadOptions o;
  o.service = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  o.count = 2;
  o.clients = 1;
  o.outage_s = 0.5;
  auto started = std::chrono::steady_clock::now();
  try {
    (void)run_load({fake_case("good", "// PTXB_FAKE_SECONDS=0.01", "PASSED")}, o);
    FAIL() << "a load against no service finished";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("submission 0"), std::string::npos) << e.what();
  }
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 0.5)
      << "the client gave up before its outage allowance";
}

// What the agent and the MCP trajectories do with a task: a task the service no longer knows is
// "forgotten" (then they submit again), a known one is not; a done task's verdict document is its
// verdict, or a bare one of its status when it came without one.
TEST_F(ServiceTest, AClientTellsAForgottenTaskAndReadsAVerdictDocument) {
  ServiceProcess service(db(), 1);
  ServiceClient client(service.url());
  EvalRequest request;
  request.definition = "gemm_n7168_k5120";
  request.source = "// PTXB_FAKE_SECONDS=0.01";
  request.trials = 2;
  std::string id = client.submit(request);
  FinishedEvaluation done = client.wait_done(id, 30);
  EXPECT_FALSE(client.forgot(id));
  EXPECT_TRUE(client.forgot("0123456789abcdef0123456789abcdef"));
  EXPECT_EQ(done.id, id);
  EXPECT_EQ(done.status, Status::PASSED);
  ASSERT_TRUE(done.verdict) << done.problem;
  EXPECT_EQ(done.verdict->to_json(), done.task["verdict"]) << "the verdict reads and writes back the same";
  EXPECT_EQ(done.verdict_or_bare().status, Status::PASSED);
  FinishedEvaluation bare = read_finished_task({{"state", "done"}, {"status", "TIMEOUT"}});
  EXPECT_EQ(bare.status, Status::TIMEOUT);
  EXPECT_FALSE(bare.verdict);
  EXPECT_NE(bare.verdict_or_bare().message.find("returned no verdict"), std::string::npos);
  EXPECT_EQ(read_finished_task({{"state", "done"}}).status, Status::INFRA_ERROR);
  // A verdict this build cannot read is ours, not the kernel's: INFRA_ERROR, saying why.
  FinishedEvaluation newer = read_finished_task(
      {{"state", "done"}, {"status", "PASSED"}, {"verdict", {{"schema", "ptxbench.verdict"}, {"schema_version", 99}, {"status", "PASSED"}}}});
  EXPECT_EQ(newer.status, Status::INFRA_ERROR);
  EXPECT_FALSE(newer.verdict);
  EXPECT_NE(newer.verdict_or_bare().message.find("unreadable"), std::string::npos) << newer.problem;
}

// `suite load` sends a Triton case's language with its source (a CUDA case names none), and the
// service's backend evaluates it as Triton.
TEST_F(ServiceTest, LoadSendsEachCasesLanguage) {
  ServiceProcess service(db(), 1);
  LoadCase triton = fake_case("triton_case", "# PTXB_FAKE_SECONDS=0.02\ndef run(A, B, C):\n    pass\n", "PASSED");
  triton.c.language = CandidateLanguage::triton;
  std::vector<LoadCase> cases = {triton, fake_case("cuda_case", "// PTXB_FAKE_SECONDS=0.02", "PASSED")};
  LoadOptions o;
  o.service = service.url();
  o.count = 4;
  o.clients = 2;
  LoadReport r = run_load(cases, o);
  ASSERT_TRUE(r.all_as_expected()) << r.summary().dump(2);
  ServiceClient client(service.url());
  int seen = 0;
  for (const auto& rec : r.records) {
    ordered_json task = ordered_json::parse(client.request("GET", "/v1/evaluations/" + rec.id).body);
    const std::string message = task["verdict"]["message"].get<std::string>();
    const std::string language = rec.case_name == "triton_case" ? "triton" : "cuda";
    EXPECT_NE(message.find("fake evaluation of a " + language + " candidate"), std::string::npos) << rec.case_name << ": " << message;
    ++seen;
  }
  EXPECT_EQ(seen, 4);
}

TEST_F(ServiceTest, LoadAcrossAKillAndRestartOfTheServiceLosesAndDuplicatesNothing) {
  std::string listen = "127.0.0.1:" + std::to_string(free_port());
  auto service = std::make_unique<ServiceProcess>(db(), 2, 3, std::vector<std::string>{}, listen);
  std::vector<LoadCase> cases = {fake_case("pass", "// PTXB_FAKE_SECONDS=0.15", "PASSED"),
                                 fake_case("wrong", "// PTXB_FAKE_SECONDS=0.1 PTXB_FAKE_STATUS=INCORRECT_NUMERICAL", "INCORRECT_NUMERICAL"),
                                 fake_case("hang", "// PTXB_FAKE_SECONDS=0.2 PTXB_FAKE_STATUS=TIMEOUT", "TIMEOUT"),
                                 fake_case("compile", "// PTXB_FAKE_SECONDS=0.01 PTXB_FAKE_STATUS=COMPILE_ERROR", "COMPILE_ERROR")};
  LoadOptions o;
  o.service = service->url();
  o.count = 48;
  o.clients = 8;
  o.outage_s = 60;
  std::atomic<int> done{0};
  LoadReport report;
  std::thread load([&] { report = run_load(cases, o, [&](const LoadRecord&, int n) { done = n; }); });
  while (done < 12) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  service->crash();
  service.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // clients meet a closed port meanwhile
  service = std::make_unique<ServiceProcess>(db(), 2, 3, std::vector<std::string>{}, listen);
  load.join();
  ordered_json s = report.summary();
  EXPECT_TRUE(report.all_as_expected()) << s.dump(2);
  EXPECT_EQ(s["lost"], 0);
  EXPECT_EQ(s["distinct_task_ids"], 48);
  EXPECT_GT(s["resent_by_client"].get<int>() + s["rerun_by_service"].get<int>(), 0) << "the restart should have been felt";
  ordered_json metrics_done = ServiceClient(service->url()).get(report.records.back().id);
  EXPECT_EQ(metrics_done["state"], "done");
}

// Issue 8 on the CPU: two fake GPUs with two workers each; GPU 1's workers are killed with
// SIGKILL mid-load. GPU 0 goes on, the killed workers' tasks are re-queued and re-run on GPU 0
// (GPU 1's workers come back within a second, but a task that failed there goes elsewhere first),
// and every submission gets its verdict exactly once.
TEST_F(ServiceTest, LoadSurvivesTheLossOfOneGpusWorkers) {
  ServiceProcess service(db(), 2, 3, {"--workers-per-gpu", "2"});
  std::vector<LoadCase> cases = {fake_case("pass", "// PTXB_FAKE_SECONDS=0.3", "PASSED"),
                                 fake_case("wrong", "// PTXB_FAKE_SECONDS=0.2 PTXB_FAKE_STATUS=INCORRECT_NUMERICAL",
                                           "INCORRECT_NUMERICAL")};
  LoadOptions o;
  o.service = service.url();
  o.count = 40;
  o.clients = 8;
  std::atomic<int> done{0};
  LoadReport report;
  std::thread load([&] { report = run_load(cases, o, [&](const LoadRecord&, int n) { done = n; }); });
  while (done < 8) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ServiceClient client(service.url());
  ordered_json health = ordered_json::parse(client.request("GET", "/v1/health").body);
  int killed = 0;
  for (const auto& g : health["gpus"])
    if (g.value("device", -1) == 1 && g.value("pid", 0) > 0) killed += ::kill(g["pid"].get<int>(), SIGKILL) == 0;
  EXPECT_EQ(killed, 2);
  load.join();
  ordered_json s = report.summary();
  EXPECT_TRUE(report.all_as_expected()) << s.dump(2);
  EXPECT_EQ(s["lost"], 0);
  EXPECT_EQ(s["distinct_task_ids"], 40);
  EXPECT_GE(s["rerun_by_service"].get<int>(), 1) << "the killed workers were busy: their tasks must be re-run";
  int by_gpu0 = 0, total = 0;
  for (const auto& [worker, n] : s["finished_by_worker"].items()) {
    total += n.get<int>();
    if (worker.rfind("gpu0.", 0) == 0) by_gpu0 += n.get<int>();
  }
  EXPECT_EQ(total, 40);
  EXPECT_GT(by_gpu0, 0);
  for (const auto& [worker, n] : s["reruns_finished_by_worker"].items())
    EXPECT_EQ(worker.rfind("gpu0.", 0), 0u) << "a task taken from a killed GPU 1 worker is re-run on GPU 0: " << s.dump(2);
  health = ordered_json::parse(client.request("GET", "/v1/health").body);
  int restarts = 0;
  for (const auto& g : health["gpus"])
    if (g.value("device", -1) == 1) restarts += g.value("restarts", 0);
  EXPECT_EQ(restarts, 2) << health.dump(2);
}

// The steady-state rate leaves out the first and last tenth of the verdicts (cache warm-up, drain).
TEST(LoadSummary, SteadyRateLeavesOutTheWarmUpAndTheDrain) {
  LoadReport r;
  for (int i = 0; i < 20; ++i) {
    LoadRecord rec;
    rec.index = i;
    rec.id = "t" + std::to_string(i);
    rec.worker = i % 2 ? "gpu1.0" : "gpu0.0";
    rec.submitted_at = 0;
    // two slow verdicts at each end, one per second in between
    rec.done_at = i < 2 ? 10.0 * (i + 1) : (i >= 18 ? 100.0 + 10.0 * i : 20.0 + i);
    rec.case_name = "k";
    rec.status = i % 5 ? "PASSED" : "TIMEOUT";
    if (i % 4 == 0) rec.retried_alone = {"sanitize"};  // a shared-GPU time-out tried again alone
    r.records.push_back(rec);
  }
  r.wall_s = 300;
  ordered_json s = r.summary();
  EXPECT_DOUBLE_EQ(s["steady_evaluations_per_minute"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(s["evaluations_per_minute"].get<double>(), 4.0);
  EXPECT_EQ(s["finished_by_worker"]["gpu0.0"], 10);
  EXPECT_EQ(s["finished_by_worker"]["gpu1.0"], 10);
  // i = 0, 4, 8, 12, 16 were retried alone; of those only i = 0 ended TIMEOUT
  EXPECT_EQ(s["timeouts_retried_alone"]["k"]["TIMEOUT"], 1);
  EXPECT_EQ(s["timeouts_retried_alone"]["k"]["PASSED"], 4);
}

// One service per queue: a second `serve` on the same database is refused with a clear error (it
// would sweep the first one's runners); once the first is killed, the queue is free again.
TEST_F(ServiceTest, ASecondServiceOnTheSameQueueIsRefused) {
  ServiceProcess first(db(), 1);
  try {
    ServiceProcess second(db(), 1);
    ADD_FAILURE() << "a second service started on the same queue";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("another service is running on the queue"), std::string::npos) << e.what();
  }
  first.crash();
  ServiceProcess after(db(), 1);
  ServiceClient client(after.url());
  EXPECT_EQ(client.wait_done(client.submit_body(submission("// PTXB_FAKE_SECONDS=0.01")), 30).task["status"], "PASSED");
}

// A restarted service first kills what its killed predecessor left running in its scratch root
// (a runner under a dead compute-sanitizer, still holding the GPU) and empties that root; other
// services' roots are left alone.
TEST(ServiceLeftovers, ARestartKillsItsPredecessorsRunnersAndNothingElse) {
  TempDir home("ptxbench-leftovers");
  fs::path mine = service_scratch_root((home.path() / "a" / "service.db").string());
  fs::path other = service_scratch_root((home.path() / "b" / "service.db").string());
  EXPECT_NE(mine, other);
  EXPECT_EQ(mine, service_scratch_root((home.path() / "a" / "." / "service.db").string()));
  auto start_in = [](const fs::path& dir) {
    fs::create_directories(dir);
    pid_t pid = fork();
    if (pid == 0) {
      if (chdir(dir.c_str()) != 0) _exit(2);
      execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
      _exit(3);
    }
    return pid;
  };
  pid_t left_behind = start_in(mine / "ptxbench-eval-1");
  pid_t someone_else = start_in(other / "ptxbench-eval-1");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Leftovers l = clear_leftovers(mine);
  EXPECT_EQ(l.processes_killed, 1);
  EXPECT_EQ(l.folders_removed, 1);
  int status = 0;
  ASSERT_EQ(waitpid(left_behind, &status, 0), left_behind);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(fs::exists(mine) && fs::is_empty(mine));
  EXPECT_EQ(waitpid(someone_else, &status, WNOHANG), 0) << "another service's runner was killed";
  ::kill(someone_else, SIGKILL);
  waitpid(someone_else, &status, 0);
  fs::remove_all(mine);
  fs::remove_all(other);
}

// A case whose speedup wobbles by more than 10% across the load is flagged: on the H200 a runner
// left behind by a killed service made a SIMT kernel 3.2x slower on one GPU, every verdict still
// "as expected".
TEST(LoadSummary, SpeedupsThatWobbleAreFlagged) {
  LoadReport r;
  auto add = [&r](const std::string& name, double speedup) {
    LoadRecord rec;
    rec.case_name = name;
    rec.status = "PASSED";
    rec.speedup = speedup;
    rec.index = static_cast<int>(r.records.size());
    r.records.push_back(rec);
  };
  for (double s : {0.757, 0.750, 0.770}) add("wgmma_tma_gemm", s);
  for (double s : {0.0490, 0.0499, 0.0153}) add("simt_tiled_gemm", s);
  add("failed", 0.0);  // no speedup: not judged
  EXPECT_EQ(r.unstable_speedups(), std::vector<std::string>{"simt_tiled_gemm"});
  ordered_json s = r.summary();
  EXPECT_EQ(s["unstable_speedups"], ordered_json::array({"simt_tiled_gemm"}));
  r.records[5].speedup = 0.0495;
  EXPECT_TRUE(r.unstable_speedups().empty());
}

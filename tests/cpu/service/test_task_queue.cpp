// The durable queue's contract, run against both backends (SQLite on one host, Redis Streams
// across hosts: a real loopback redis-server): FIFO claims, completion at most once per claim,
// verdicts stored as they were given, lease expiry, re-queue with an attempt limit, the avoid
// window (with the host registry's health records), concurrent claimers over separate
// connections, retention, counters; the host registry's own contract. Then what only SQLite has:
// migrations and a restarted service's recovery of running tasks.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <mutex>
#include <set>
#include <thread>

#include "common/fs.h"
#include "common/sqlite_db.h"
#include "helpers/redis_server.h"
#include "service/redis_host_registry.h"
#include "service/redis_task_queue.h"
#include "service/service_api.h"
#include "service/service_metrics.h"
#include "service/sqlite_host_registry.h"
#include "service/sqlite_task_queue.h"

using namespace ptxbench;

namespace {
ordered_json request(int n) { return {{"definition", "gemm_n7168_k5120"}, {"n", n}}; }

// A verdict of `status` (the fields the queue cares about).
Verdict verdict_of(Status status, std::string message = "") {
  Verdict v = infra_verdict(std::move(message));
  v.status = status;
  return v;
}

struct SqliteBackend {
  TempDir dir;
  static bool available() { return true; }
  std::string path() const { return (dir.path() / "queue.db").string(); }
  std::unique_ptr<TaskQueue> open() { return std::make_unique<SqliteTaskQueue>(path()); }
  std::unique_ptr<HostRegistry> open_registry() { return std::make_unique<SqliteHostRegistry>(path(), "test"); }
};

// One redis-server for the whole test program; each test its own key prefix (its own queue).
struct RedisBackend {
  static bool available() { return !fakes::RedisServer::executable().empty(); }
  static fakes::RedisServer& server() {
    static TempDir dir{"ptxbench-redis-contract"};
    static fakes::RedisServer s(dir.path() / "redis");
    return s;
  }
  std::string prefix = "t" + new_task_id().substr(0, 12);
  QueueConfig config() const {
    QueueConfig c;
    c.location = fmt::format("redis://{}@127.0.0.1:{}?prefix={}", server().user(), server().port(), prefix);
    c.password_file = server().password_file().string();
    c.host = "test";
    return c;
  }
  std::unique_ptr<TaskQueue> open() { return std::make_unique<RedisTaskQueue>(config()); }
  std::unique_ptr<HostRegistry> open_registry() { return std::make_unique<RedisHostRegistry>(config()); }
};

template <class Backend>
struct QueueContract : ::testing::Test {
  Backend backend;
  void SetUp() override {
    if (!Backend::available()) GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs the Debian package)";
  }
  std::unique_ptr<TaskQueue> open() { return backend.open(); }
  std::unique_ptr<HostRegistry> open_registry() { return backend.open_registry(); }
};
struct BackendNames {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, SqliteBackend> ? "Sqlite" : "Redis";
  }
};
using Backends = ::testing::Types<SqliteBackend, RedisBackend>;
TYPED_TEST_SUITE(QueueContract, Backends, BackendNames);

struct QueueTest : ::testing::Test {
  TempDir dir;
  std::string path() const { return (dir.path() / "queue.db").string(); }
};
}  // namespace

TYPED_TEST(QueueContract, ClaimsInOrderAndCompletesOnce) {
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  EXPECT_FALSE(q.claim("w", 60).has_value());
  std::string a = q.enqueue(request(1)), b = q.enqueue(request(2));
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  auto c1 = q.claim("w0", 60);
  ASSERT_TRUE(c1.has_value());
  EXPECT_EQ(c1->task.id, a);
  EXPECT_EQ(c1->task.request["n"], 1);
  EXPECT_EQ(c1->token, 1);
  EXPECT_EQ(q.state_counts()["running"], 1);
  EXPECT_TRUE(q.complete(*c1, verdict_of(Status::PASSED)));
  EXPECT_FALSE(q.complete(*c1, verdict_of(Status::PASSED))) << "a second completion must be refused";
  auto done = q.get(a);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->state, TaskState::done);
  EXPECT_EQ(done->status, Status::PASSED);
  ASSERT_TRUE(done->verdict.has_value());
  EXPECT_EQ(done->verdict->status, Status::PASSED);
  EXPECT_EQ(q.claim("w0", 60)->task.id, b);
  EXPECT_EQ(q.status_counts()["PASSED"], 1);
  EXPECT_FALSE(q.get("nope").has_value());
}

// The check lane: a check worker takes only check-lane tasks; one whose compile stage fails is
// finished there, one that passes moves to the gpu lane with its attempts counted afresh; a GPU
// worker takes its own lane first and then the check lane, so no task waits on a lane nobody
// serves.
TYPED_TEST(QueueContract, CheckLaneTasksFinishThereOrPassOnToTheGpuLane) {
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  const std::string gpu_task = q.enqueue(request(1));
  const std::string passes = q.enqueue(request(2), TaskLane::check);
  const std::string fails = q.enqueue(request(3), TaskLane::check);
  const std::string unchecked = q.enqueue(request(4), TaskLane::check);
  EXPECT_EQ(q.get(passes)->lane, TaskLane::check);

  auto checking = q.claim("check0", 60, -1, 0, TaskLane::check);
  ASSERT_TRUE(checking.has_value());
  EXPECT_EQ(checking->task.id, passes) << "the check worker skips the gpu lane";
  auto failing = q.claim("check1", 60, -1, 0, TaskLane::check);
  ASSERT_TRUE(failing.has_value());
  EXPECT_EQ(failing->task.id, fails);
  EXPECT_FALSE(q.pass_on(Claim{checking->task, "check1", checking->token, -1})) << "only its own claim passes a task on";

  Verdict compile_error = verdict_of(Status::COMPILE_ERROR, "error: identifier \"x\" is undefined");
  ASSERT_TRUE(q.complete(*failing, compile_error));
  EXPECT_EQ(q.get(fails)->status, Status::COMPILE_ERROR);

  auto on_gpu = q.claim("gpu0", 60, 0);
  ASSERT_TRUE(on_gpu.has_value());
  EXPECT_EQ(on_gpu->task.id, gpu_task);
  EXPECT_FALSE(q.pass_on(*on_gpu)) << "a gpu-lane task is not passed on";
  auto idle_gpu = q.claim("gpu1", 60, 1);
  ASSERT_TRUE(idle_gpu.has_value());
  EXPECT_EQ(idle_gpu->task.id, unchecked) << "an idle GPU worker takes a check-lane task";

  ASSERT_TRUE(q.pass_on(*checking));
  EXPECT_FALSE(q.pass_on(*checking)) << "a claim passes its task on once";
  auto passed = q.get(passes);
  EXPECT_EQ(passed->state, TaskState::queued);
  EXPECT_EQ(passed->lane, TaskLane::gpu);
  EXPECT_EQ(passed->attempts, 0);
  EXPECT_FALSE(q.claim("check0", 60, -1, 0, TaskLane::check).has_value());
  auto evaluated = q.claim("gpu0.1", 60, 0);
  ASSERT_TRUE(evaluated.has_value());
  EXPECT_EQ(evaluated->task.id, passes);
  EXPECT_EQ(evaluated->token, 1) << "the check worker's claim is not one of the GPU's attempts";
  EXPECT_TRUE(q.complete(*evaluated, verdict_of(Status::PASSED)));
  EXPECT_EQ(q.state_counts()["running"], 2);
  EXPECT_EQ(q.status_counts()["COMPILE_ERROR"], 1);
}

// A check worker that dies hands its task back to the check lane.
TYPED_TEST(QueueContract, ALostCheckWorkersTaskGoesBackToTheCheckLane) {
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  const std::string id = q.enqueue(request(1), TaskLane::check);
  ASSERT_TRUE(q.claim("check0", 60, -1, 0, TaskLane::check).has_value());
  EXPECT_EQ(q.recover_worker("check0", "worker check0 killed", 3), 1);
  auto t = q.get(id);
  EXPECT_EQ(t->state, TaskState::queued);
  EXPECT_EQ(t->lane, TaskLane::check);
  auto again = q.claim("check1", 60, -1, 0, TaskLane::check);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->task.id, id);
}

// The queue keeps the verdict as the worker gave it: read back, and as GET /v1/evaluations/{id}
// sends it, it is the same document (keys of other layers included).
TYPED_TEST(QueueContract, AVerdictIsStoredAsItWasGiven) {
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  std::string id = q.enqueue(request(1));
  auto c = q.claim("w", 60);
  ASSERT_TRUE(c.has_value());
  Verdict v = verdict_of(Status::INCORRECT_NUMERICAL, "3 of 8 elements differ");
  v.definition = "gemm_n7168_k5120";
  v.arch = "sm_90a";
  v.speedup = 1.25;
  v.seed = 42;
  v.extra["service"] = {{"task", id}, {"worker", c->worker}, {"attempt", c->token}};
  ASSERT_TRUE(q.complete(*c, v));
  auto t = q.get(id);
  ASSERT_TRUE(t.has_value() && t->verdict.has_value());
  EXPECT_EQ(t->verdict->to_json(), v.to_json());
  EXPECT_EQ(t->verdict->extra["service"]["attempt"], 1);
  ordered_json sent = task_json(*t);
  EXPECT_EQ(sent["status"], "INCORRECT_NUMERICAL");
  EXPECT_EQ(sent["verdict"], v.to_json());
  EXPECT_EQ(task_json(*q.get(q.enqueue(request(2)))).count("verdict"), 0u) << "a queued task has no verdict yet";
}

// A task whose workers keep dying is finished with the shared INFRA_ERROR verdict, saying why.
TYPED_TEST(QueueContract, ATaskThatKeepsKillingWorkersEndsWithAnInfraVerdict) {
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  std::string id = q.enqueue(request(1));
  ASSERT_TRUE(q.claim("gpu0", 60).has_value());
  EXPECT_EQ(q.recover_worker("gpu0", "worker gpu0 killed", 1), 1);
  auto t = q.get(id);
  ASSERT_TRUE(t.has_value() && t->verdict.has_value());
  EXPECT_EQ(t->state, TaskState::done);
  EXPECT_EQ(t->status, Status::INFRA_ERROR);
  EXPECT_EQ(t->note, "worker gpu0 killed");
  EXPECT_EQ(t->verdict->to_json(), infra_verdict("worker gpu0 killed; gave up after 1 attempts").to_json());
}

TYPED_TEST(QueueContract, ExpiredLeaseGoesBackAndTheStaleClaimCannotComplete) {
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  std::string id = q.enqueue(request(1));
  auto first = q.claim("w0", 0.01);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(q.recover_expired(), 1);
  EXPECT_EQ(q.get(id)->state, TaskState::queued);
  EXPECT_NE(q.get(id)->note.find("lease"), std::string::npos);
  auto second = q.claim("w1", 60);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->token, 2);
  EXPECT_FALSE(q.heartbeat(*first, 60));
  EXPECT_FALSE(q.complete(*first, verdict_of(Status::PASSED)));
  EXPECT_TRUE(q.heartbeat(*second, 60));
  EXPECT_TRUE(q.complete(*second, verdict_of(Status::INCORRECT_NUMERICAL)));
  EXPECT_EQ(q.get(id)->status, Status::INCORRECT_NUMERICAL);
}

TYPED_TEST(QueueContract, InfraFailuresRequeueUntilTheAttemptLimit) {
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  std::string id = q.enqueue(request(1));
  for (int attempt = 1; attempt <= 2; ++attempt) {
    auto c = q.claim("w", 60);
    ASSERT_TRUE(c.has_value());
    EXPECT_TRUE(q.requeue(*c, "GPU unhealthy", 3, verdict_of(Status::INFRA_ERROR)));
    EXPECT_EQ(q.get(id)->state, TaskState::queued);
    EXPECT_EQ(q.get(id)->note, "GPU unhealthy");
  }
  auto last = q.claim("w", 60);
  EXPECT_TRUE(q.requeue(*last, "GPU unhealthy", 3, infra_verdict("gave up after 3 attempts")));
  auto t = q.get(id);
  EXPECT_EQ(t->state, TaskState::done);
  EXPECT_EQ(t->status, Status::INFRA_ERROR);
  EXPECT_EQ(t->verdict->message, "gave up after 3 attempts");
  EXPECT_EQ(t->attempts, 3);
}

TYPED_TEST(QueueContract, ConcurrentClaimersNeverShareATask) {
  {
    auto q_owner = this->open();
    TaskQueue& q = *q_owner;
    for (int i = 0; i < 200; ++i) q.enqueue(request(i));
  }
  std::mutex m;
  std::multiset<std::string> claimed;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      auto q_owner = this->open();
      TaskQueue& q = *q_owner;  // its own connection, as a worker process has
      while (auto c = q.claim("w" + std::to_string(w), 60)) {
        std::lock_guard<std::mutex> lock(m);
        claimed.insert(c->task.id);
        EXPECT_TRUE(q.complete(*c, verdict_of(Status::PASSED)));
      }
    });
  for (auto& t : workers) t.join();
  EXPECT_EQ(claimed.size(), 200u);
  EXPECT_EQ(std::set<std::string>(claimed.begin(), claimed.end()).size(), 200u);
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  EXPECT_EQ(q.state_counts()["done"], 200);
}

TYPED_TEST(QueueContract, FinishedTasksExpire) {
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  std::string done = q.enqueue(request(1)), waiting = q.enqueue(request(2));
  q.complete(*q.claim("w", 60), verdict_of(Status::PASSED));
  EXPECT_EQ(q.expire_finished(3600), 0);
  EXPECT_EQ(q.expire_finished(-1), 1);
  EXPECT_FALSE(q.get(done).has_value());
  EXPECT_TRUE(q.get(waiting).has_value());
}

// Multi-GPU: a task taken back from a failure on GPU 1 (its worker died) goes to GPU 0 first;
// GPU 1 may take it again once the window has passed (a host whose other GPUs are gone).
TYPED_TEST(QueueContract, ATaskThatFailedOnAGpuGoesToAnotherGpuFirst) {
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  auto registry = this->open_registry();  // the claim's avoid window reads the registry's records
  registry->record_health(0, "healthy", ordered_json::object());
  registry->record_health(1, "healthy", ordered_json::object());
  std::string a = q.enqueue(request(1));
  std::string b = q.enqueue(request(2));
  auto on1 = q.claim("gpu1.0", 60, 1, 30);
  ASSERT_TRUE(on1.has_value());
  EXPECT_EQ(on1->task.id, a);
  EXPECT_EQ(q.recover_worker("gpu1.0", "worker gpu1.0 killed", 3), 1);
  auto next_on1 = q.claim("gpu1.1", 60, 1, 30);
  ASSERT_TRUE(next_on1.has_value());
  EXPECT_EQ(next_on1->task.id, b) << "GPU 1 skips the task that failed there";
  EXPECT_FALSE(q.claim("gpu1.2", 60, 1, 30).has_value()) << "only the avoided task is left";
  auto on0 = q.claim("gpu0.0", 60, 0, 30);
  ASSERT_TRUE(on0.has_value());
  EXPECT_EQ(on0->task.id, a);
  EXPECT_EQ(on0->token, 2);

  // An infrastructure error re-queues the same way; with no window GPU 1 may take it back at once.
  EXPECT_TRUE(q.requeue(*on0, "GPU 0 unhealthy", 3, verdict_of(Status::INFRA_ERROR)));
  EXPECT_FALSE(q.claim("gpu0.1", 60, 0, 30).has_value());
  auto back = q.claim("gpu0.1", 60, 0, 0);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->task.id, a);
  // Lost leases too.
  auto stale = q.claim("gpu0.2", 0.01, 0, 30);
  EXPECT_FALSE(stale.has_value()) << "nothing else is queued";
  EXPECT_TRUE(q.complete(*back, verdict_of(Status::PASSED)));
  std::string c = q.enqueue(request(3));
  auto lost = q.claim("gpu0.2", 0.01, 0, 30);
  ASSERT_TRUE(lost.has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(q.recover_expired(), 1);
  EXPECT_FALSE(q.claim("gpu0.3", 60, 0, 30).has_value());
  auto elsewhere = q.claim("gpu1.3", 60, 1, 30);
  ASSERT_TRUE(elsewhere.has_value());
  EXPECT_EQ(elsewhere->task.id, c);

  // With no other healthy GPU there is nowhere else to go: no wait.
  EXPECT_TRUE(q.requeue(*elsewhere, "GPU 1 unhealthy", 3, verdict_of(Status::INFRA_ERROR)));
  EXPECT_FALSE(q.claim("gpu1.4", 60, 1, 30).has_value());
  registry->record_health(0, "unhealthy", ordered_json::object());
  auto only = q.claim("gpu1.4", 60, 1, 30);
  ASSERT_TRUE(only.has_value());
  EXPECT_EQ(only->task.id, c);
}

// The counters behind /metrics only grow: expiring finished tasks (retention) and reopening the
// queue (a service restart) leave them as they were.
TYPED_TEST(QueueContract, CountersSurviveRetentionAndRestarts) {
  {
    auto q_owner = this->open();
    TaskQueue& q = *q_owner;
    for (int i = 0; i < 4; ++i) q.enqueue(request(i));
    ASSERT_TRUE(q.complete(*q.claim("w", 60), verdict_of(Status::PASSED)));
    ASSERT_TRUE(q.complete(*q.claim("w", 60), verdict_of(Status::INCORRECT_NUMERICAL)));
    auto infra = q.claim("w", 60);
    EXPECT_TRUE(q.requeue(*infra, "GPU unhealthy", 3, verdict_of(Status::INFRA_ERROR)));
    ASSERT_TRUE(q.claim("gpu0", 60).has_value());
    EXPECT_EQ(q.recover_worker("gpu0", "worker gpu0 killed", 1), 1) << "given up: its one attempt was used";
    EXPECT_EQ(q.recover_all_running("restart"), 0);
    EXPECT_EQ(q.expire_finished(-1), 3);
    EXPECT_EQ(q.state_counts()["done"], 0);
  }
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  QueueCounters c = q.counters();
  EXPECT_EQ(c.evaluations["PASSED"], 1);
  EXPECT_EQ(c.evaluations["INCORRECT_NUMERICAL"], 1);
  EXPECT_EQ(c.evaluations["INFRA_ERROR"], 1);
  EXPECT_EQ(c.requeues["infra_error"], 1);
  int64_t counted = 0;
  for (int64_t n : c.seconds_buckets) counted += n;
  EXPECT_EQ(counted, 3);
  auto stale = q.claim("w", 60);
  ASSERT_TRUE(stale.has_value());
  EXPECT_TRUE(q.complete(*stale, verdict_of(Status::PASSED)));
  EXPECT_FALSE(q.complete(*stale, verdict_of(Status::PASSED))) << "a refused completion";
  EXPECT_EQ(q.counters().evaluations["PASSED"], 2) << "counted once";
  std::string m = render_metrics(q, ordered_json::array());
  EXPECT_NE(m.find("ptxbench_evaluations_total{status=\"PASSED\"} 2\n"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxbench_evaluations_total{status=\"INFRA_ERROR\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxbench_evaluation_seconds_bucket{le=\"+Inf\"} 4\nptxbench_evaluation_seconds_sum "), std::string::npos) << m;
  EXPECT_NE(m.find("ptxbench_evaluation_seconds_count 4\n"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxbench_requeues_total{cause=\"infra_error\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxbench_build_info{version=\"" + build_version() + "\",commit=\""), std::string::npos) << m;
  EXPECT_NE(build_commit(), "") << m;
}

// The host registry, on both backends: the latest health check per device of this host, read by
// another connection too; calibrations; clearing this host's records.
template <class Backend>
struct RegistryContract : QueueContract<Backend> {};
TYPED_TEST_SUITE(RegistryContract, Backends, BackendNames);

TYPED_TEST(RegistryContract, KeepsTheLatestHealthCheckAndTheCalibrations) {
  auto r = this->open_registry();
  EXPECT_TRUE(r->health_records().empty());
  double before = TaskQueue::now();
  r->record_health(0, "healthy", {{"canary_us", 10.0}});
  r->record_health(1, "healthy", ordered_json::object());
  r->record_health(1, "unhealthy", {{"problem", "hw_slowdown"}});
  auto other = this->open_registry();  // its own connection, as a worker process has
  auto h = other->health_records();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].state, "healthy");
  EXPECT_EQ(h[0].detail["canary_us"], 10.0);
  EXPECT_GE(h[0].updated_at, before);
  EXPECT_EQ(h[1].state, "unhealthy") << "the latest check replaces the one before";
  EXPECT_EQ(h[1].to_json(),
            (ordered_json{{"state", "unhealthy"}, {"detail", {{"problem", "hw_slowdown"}}}, {"updated_at", h[1].updated_at}}));

  EXPECT_FALSE(r->calibration("H200 0000:01:00.0").has_value());
  r->set_calibration("H200 0000:01:00.0", 812.5);
  EXPECT_EQ(other->calibration("H200 0000:01:00.0"), 812.5);
  other->set_calibration("H200 0000:01:00.0", 800.25);
  EXPECT_EQ(r->calibration("H200 0000:01:00.0"), 800.25);

  other->clear_health();
  EXPECT_TRUE(r->health_records().empty());
  EXPECT_EQ(r->calibration("H200 0000:01:00.0"), 800.25) << "calibrations outlive a restart of the service";
}

TEST(TaskQueueNames, StatesAndAdmissionsReadBack) {
  for (TaskState s : {TaskState::queued, TaskState::running, TaskState::done}) EXPECT_EQ(parse_task_state(to_string(s)), s);
  EXPECT_EQ(to_string(TaskState::running), "running");
  EXPECT_EQ(parse_task_state("finished long ago"), TaskState::done) << "anything but queued/running is done";
  EXPECT_EQ(to_string(Admission::over_quota), "over_quota");
  EXPECT_EQ(to_string(Admission::queue_full), "queue_full");
  EXPECT_EQ(to_string(Admission::existing), "existing");
  QueueConfig bad;
  bad.location = "http://queue.example";
  EXPECT_THROW(open_host_registry(bad), InputError);
  EXPECT_THROW(open_task_queue(bad), InputError);
}

// SQLite only.

TEST_F(QueueTest, OneHostsWorkersAreItsGpusHealthRecords) {
  SqliteHostRegistry r(path(), "box1");
  r.record_health(1, "unhealthy", {{"problem", "canary 40% slow"}});
  auto w = r.worker_records();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].host, "box1");
  EXPECT_EQ(w[0].worker, "gpu1");
  EXPECT_EQ(w[0].device, 1);
  EXPECT_EQ(w[0].state, "unhealthy");
  EXPECT_EQ(w[0].detail["problem"], "canary 40% slow");
}

TEST_F(QueueTest, SurvivesReopeningAndRecoversRunningTasks) {
  std::string id;
  {
    SqliteTaskQueue q(path());
    id = q.enqueue(request(7));
    ASSERT_TRUE(q.claim("w", 3600).has_value());
  }
  SqliteTaskQueue again(path());
  EXPECT_EQ(again.get(id)->state, TaskState::running);
  EXPECT_EQ(again.recover_all_running("service restarted"), 1);
  auto c = again.claim("w2", 60);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->task.request["n"], 7);
  EXPECT_EQ(c->task.note, "service restarted");
}

// A queue written by an earlier schema (version 2, before the per-device columns) opens, keeps
// its tasks and gains the per-device columns.
TEST_F(QueueTest, AVersionTwoQueueIsMigrated) {
  {
    SqliteDb db(path());
    db.exec(R"(CREATE TABLE tasks (
      id TEXT PRIMARY KEY, state TEXT NOT NULL, request TEXT NOT NULL, verdict TEXT, status TEXT NOT NULL DEFAULT '',
      attempts INTEGER NOT NULL DEFAULT 0, worker TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '',
      created_at REAL NOT NULL, started_at REAL NOT NULL DEFAULT 0, finished_at REAL NOT NULL DEFAULT 0,
      lease_until REAL NOT NULL DEFAULT 0, seq INTEGER NOT NULL, client_key TEXT))");
    db.exec(R"(INSERT INTO tasks (id, state, request, created_at, seq) VALUES ('old', 'queued', '{"n": 7}', 1.0, 1))");
    db.exec("PRAGMA user_version = 2");
  }
  SqliteTaskQueue q(path());
  auto c = q.claim("gpu1.0", 60, 1, 30);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->task.id, "old");
  EXPECT_EQ(c->task.request["n"], 7);
  EXPECT_EQ(q.recover_worker("gpu1.0", "killed", 3), 1);
  SqliteTaskQueue reopened(path());
  EXPECT_EQ(reopened.get("old")->state, TaskState::queued);
}

// A queue of schema 3 (before the client fields and the counters) opens as schema 5: its tasks
// keep their place and gain empty client fields and the gpu lane, new tasks store who submitted
// them, and the counters start from the finished tasks it held.
TEST_F(QueueTest, AVersionThreeQueueIsMigrated) {
  {
    SqliteDb db(path());
    db.exec(R"(CREATE TABLE tasks (
      id TEXT PRIMARY KEY, state TEXT NOT NULL, request TEXT NOT NULL, verdict TEXT, status TEXT NOT NULL DEFAULT '',
      attempts INTEGER NOT NULL DEFAULT 0, worker TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '',
      created_at REAL NOT NULL, started_at REAL NOT NULL DEFAULT 0, finished_at REAL NOT NULL DEFAULT 0,
      lease_until REAL NOT NULL DEFAULT 0, seq INTEGER NOT NULL, client_key TEXT,
      device INTEGER NOT NULL DEFAULT -1, avoid_device INTEGER, requeued_at REAL NOT NULL DEFAULT 0))");
    db.exec("CREATE INDEX tasks_by_state ON tasks(state, seq)");
    db.exec("CREATE UNIQUE INDEX tasks_by_client_key ON tasks(client_key) WHERE client_key IS NOT NULL");
    db.exec("CREATE TABLE gpu_health (device INTEGER PRIMARY KEY, state TEXT NOT NULL, detail TEXT NOT NULL, updated_at REAL NOT NULL)");
    db.exec("CREATE TABLE calibration (key TEXT PRIMARY KEY, canary_us REAL NOT NULL, created_at REAL NOT NULL)");
    db.exec(R"(INSERT INTO tasks (id, state, request, created_at, seq, client_key) VALUES ('waiting', 'queued', '{"n": 7}', 1.0, 1, 'k7'))");
    db.exec(R"(INSERT INTO tasks (id, state, request, verdict, status, attempts, created_at, started_at, finished_at, seq)
               VALUES ('finished', 'done', '{"n": 8}', '{"status": "PASSED"}', 'PASSED', 1, 1.0, 2.0, 5.0, 2))");
    db.exec("INSERT INTO calibration VALUES ('H200 0000:01:00.0', 812.5, 1.0)");
    db.exec("PRAGMA user_version = 3");
  }
  SqliteTaskQueue q(path());
  {
    SqliteDb raw(path());
    auto v = raw.prepare("PRAGMA user_version");
    ASSERT_TRUE(v.step());
    EXPECT_EQ(v.integer(0), 5);
  }
  EXPECT_EQ(SqliteHostRegistry(path()).calibration("H200 0000:01:00.0"), 812.5) << "the registry reads the queue's file";
  auto old = q.get("waiting");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->client, "");
  EXPECT_EQ(old->peer, "");
  EXPECT_EQ(old->lane, TaskLane::gpu);
  EXPECT_FALSE(q.claim("check0", 60, -1, 0, TaskLane::check).has_value()) << "a task of before the lanes waits for a GPU worker";
  EXPECT_EQ(q.enqueue_once(ordered_json{{"n", 7}}, "k7").id, "waiting") << "idempotency keys still hold";
  QueueCounters c = q.counters();
  EXPECT_EQ(c.evaluations["PASSED"], 1) << "seeded from the finished task";
  EXPECT_DOUBLE_EQ(c.seconds_sum, 3.0);
  EXPECT_EQ(c.seconds_buckets[4], 1) << "3 s falls in the (2, 5] bucket";

  Enqueued fresh = q.enqueue_once(request(9), "", Submitter{"alice", "10.0.0.5:41234"});
  ASSERT_TRUE(fresh.created());
  auto t = q.get(fresh.id);
  EXPECT_EQ(t->client, "alice");
  EXPECT_EQ(t->peer, "10.0.0.5:41234");
  auto first = q.claim("w", 60);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->task.id, "waiting") << "the migrated task keeps its place";
  SqliteTaskQueue reopened(path());
  EXPECT_EQ(reopened.counters().evaluations["PASSED"], 1) << "reopening does not seed again";
}


// The durable queue's contract, run against both backends (SQLite on one host, Redis Streams
// across hosts: a real loopback redis-server): FIFO claims, completion at most once per claim,
// lease expiry, re-queue with an attempt limit, the avoid window, concurrent claimers over separate
// connections, retention, counters. Then what only SQLite has: migrations and a restarted
// service's recovery of running tasks.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <mutex>
#include <set>
#include <thread>

#include "common/fs.h"
#include "common/sqlite_db.h"
#include "helpers/redis_server.h"
#include "service/redis_task_queue.h"
#include "service/service_metrics.h"
#include "service/sqlite_task_queue.h"

using namespace ptxbench;

namespace {
ordered_json request(int n) { return {{"definition", "gemm_n7168_k5120"}, {"n", n}}; }

struct SqliteBackend {
  TempDir dir;
  static bool available() { return true; }
  std::unique_ptr<TaskQueue> open() { return std::make_unique<SqliteTaskQueue>((dir.path() / "queue.db").string(), "test"); }
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
  std::unique_ptr<TaskQueue> open() {
    QueueConfig c;
    c.location = fmt::format("redis://{}@127.0.0.1:{}?prefix={}", server().user(), server().port(), prefix);
    c.password_file = server().password_file().string();
    c.host = "test";
    return std::make_unique<RedisTaskQueue>(c);
  }
};

template <class Backend>
struct QueueContract : ::testing::Test {
  Backend backend;
  void SetUp() override {
    if (!Backend::available()) GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs the Debian package)";
  }
  std::unique_ptr<TaskQueue> open() { return backend.open(); }
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
  EXPECT_TRUE(q.complete(*c1, {{"status", "PASSED"}}));
  EXPECT_FALSE(q.complete(*c1, {{"status", "PASSED"}})) << "a second completion must be refused";
  auto done = q.get(a);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->state, TaskState::done);
  EXPECT_EQ(done->status, "PASSED");
  EXPECT_EQ((*done->verdict)["status"], "PASSED");
  EXPECT_EQ(q.claim("w0", 60)->task.id, b);
  EXPECT_EQ(q.status_counts()["PASSED"], 1);
  EXPECT_FALSE(q.get("nope").has_value());
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
  EXPECT_FALSE(q.complete(*first, {{"status", "PASSED"}}));
  EXPECT_TRUE(q.heartbeat(*second, 60));
  EXPECT_TRUE(q.complete(*second, {{"status", "INCORRECT_NUMERICAL"}}));
  EXPECT_EQ(q.get(id)->status, "INCORRECT_NUMERICAL");
}

TYPED_TEST(QueueContract, InfraFailuresRequeueUntilTheAttemptLimit) {
  auto q_owner = this->open();
  TaskQueue& q = *q_owner;
  std::string id = q.enqueue(request(1));
  for (int attempt = 1; attempt <= 2; ++attempt) {
    auto c = q.claim("w", 60);
    ASSERT_TRUE(c.has_value());
    EXPECT_TRUE(q.requeue(*c, "GPU unhealthy", 3, {{"status", "INFRA_ERROR"}}));
    EXPECT_EQ(q.get(id)->state, TaskState::queued);
    EXPECT_EQ(q.get(id)->note, "GPU unhealthy");
  }
  auto last = q.claim("w", 60);
  EXPECT_TRUE(q.requeue(*last, "GPU unhealthy", 3, {{"message", "gave up after 3 attempts"}}));
  auto t = q.get(id);
  EXPECT_EQ(t->state, TaskState::done);
  EXPECT_EQ(t->status, "INFRA_ERROR");
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
        EXPECT_TRUE(q.complete(*c, {{"status", "PASSED"}}));
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
  q.complete(*q.claim("w", 60), {{"status", "PASSED"}});
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
  q.record_health(0, "healthy", ordered_json::object());
  q.record_health(1, "healthy", ordered_json::object());
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
  EXPECT_TRUE(q.requeue(*on0, "GPU 0 unhealthy", 3, {{"status", "INFRA_ERROR"}}));
  EXPECT_FALSE(q.claim("gpu0.1", 60, 0, 30).has_value());
  auto back = q.claim("gpu0.1", 60, 0, 0);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->task.id, a);
  // Lost leases too.
  auto stale = q.claim("gpu0.2", 0.01, 0, 30);
  EXPECT_FALSE(stale.has_value()) << "nothing else is queued";
  EXPECT_TRUE(q.complete(*back, {{"status", "PASSED"}}));
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
  EXPECT_TRUE(q.requeue(*elsewhere, "GPU 1 unhealthy", 3, {{"status", "INFRA_ERROR"}}));
  EXPECT_FALSE(q.claim("gpu1.4", 60, 1, 30).has_value());
  q.record_health(0, "unhealthy", ordered_json::object());
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
    ASSERT_TRUE(q.complete(*q.claim("w", 60), {{"status", "PASSED"}}));
    ASSERT_TRUE(q.complete(*q.claim("w", 60), {{"status", "INCORRECT_NUMERICAL"}}));
    auto infra = q.claim("w", 60);
    EXPECT_TRUE(q.requeue(*infra, "GPU unhealthy", 3, {{"status", "INFRA_ERROR"}}));
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
  EXPECT_TRUE(q.complete(*stale, {{"status", "PASSED"}}));
  EXPECT_FALSE(q.complete(*stale, {{"status", "PASSED"}})) << "a refused completion";
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

// SQLite only.

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

// A queue of schema 3 (before the client fields and the counters) opens as schema 4: its tasks
// keep their place and gain empty client fields, new tasks store who submitted them, and the
// counters start from the finished tasks it held.
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
    EXPECT_EQ(v.integer(0), 4);
  }
  EXPECT_EQ(q.calibration("H200 0000:01:00.0"), 812.5);
  auto old = q.get("waiting");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->client, "");
  EXPECT_EQ(old->peer, "");
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


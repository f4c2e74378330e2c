// The durable queue: FIFO claims, completion at most once per claim, lease expiry, re-queue with an
// attempt limit, persistence across reopening, and concurrent claimers over separate connections.
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>

#include "common/fs.h"
#include "service/task_queue.h"

using namespace ptxbench;

namespace {
struct QueueTest : ::testing::Test {
  TempDir dir;
  std::string path() const { return (dir.path() / "queue.db").string(); }
};
ordered_json request(int n) { return {{"definition", "gemm_n7168_k5120"}, {"n", n}}; }
}  // namespace

TEST_F(QueueTest, ClaimsInOrderAndCompletesOnce) {
  TaskQueue q(path());
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

TEST_F(QueueTest, ExpiredLeaseGoesBackAndTheStaleClaimCannotComplete) {
  TaskQueue q(path());
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

TEST_F(QueueTest, InfraFailuresRequeueUntilTheAttemptLimit) {
  TaskQueue q(path());
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

TEST_F(QueueTest, SurvivesReopeningAndRecoversRunningTasks) {
  std::string id;
  {
    TaskQueue q(path());
    id = q.enqueue(request(7));
    ASSERT_TRUE(q.claim("w", 3600).has_value());
  }
  TaskQueue again(path());
  EXPECT_EQ(again.get(id)->state, TaskState::running);
  EXPECT_EQ(again.recover_all_running("service restarted"), 1);
  auto c = again.claim("w2", 60);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->task.request["n"], 7);
  EXPECT_EQ(c->task.note, "service restarted");
}

TEST_F(QueueTest, ConcurrentClaimersNeverShareATask) {
  {
    TaskQueue q(path());
    for (int i = 0; i < 200; ++i) q.enqueue(request(i));
  }
  std::mutex m;
  std::multiset<std::string> claimed;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      TaskQueue q(path());  // its own connection, as a worker process has
      while (auto c = q.claim("w" + std::to_string(w), 60)) {
        std::lock_guard<std::mutex> lock(m);
        claimed.insert(c->task.id);
        EXPECT_TRUE(q.complete(*c, {{"status", "PASSED"}}));
      }
    });
  for (auto& t : workers) t.join();
  EXPECT_EQ(claimed.size(), 200u);
  EXPECT_EQ(std::set<std::string>(claimed.begin(), claimed.end()).size(), 200u);
  TaskQueue q(path());
  EXPECT_EQ(q.state_counts()["done"], 200);
}

TEST_F(QueueTest, FinishedTasksExpire) {
  TaskQueue q(path());
  std::string done = q.enqueue(request(1)), waiting = q.enqueue(request(2));
  q.complete(*q.claim("w", 60), {{"status", "PASSED"}});
  EXPECT_EQ(q.expire_finished(3600), 0);
  EXPECT_EQ(q.expire_finished(-1), 1);
  EXPECT_FALSE(q.get(done).has_value());
  EXPECT_TRUE(q.get(waiting).has_value());
}

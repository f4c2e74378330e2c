// The Redis client and the Streams primitives of the multi-host queue (issue 23), against a real
// redis-server started for each test (loopback, AOF, an ACL user): reply types and errors, refused
// credentials, a dead server, consumer groups, reclaiming a dead consumer's entries; then the task
// queue over Redis across two "hosts": at-most-once completion, heartbeats, every host's workers,
// and a crash of Redis that loses no task, idempotency key nor claim.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <set>
#include <thread>

#include "common/fd.h"
#include "common/fs.h"
#include "helpers/redis_server.h"
#include "service/redis_client.h"
#include "service/redis_host_registry.h"
#include "service/redis_stream_queue.h"
#include "service/redis_task_queue.h"

using namespace ptxbench;
using fakes::RedisServer;
using Type = RedisReply::Type;

namespace {

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

struct RedisTest : ::testing::Test {
  TempDir dir{"ptxbench-redis"};
  std::unique_ptr<RedisServer> server;
  void SetUp() override {
    if (RedisServer::executable().empty())
      GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs the Debian package redis-server)";
    server = std::make_unique<RedisServer>(dir.path() / "redis");
  }
  RedisClient client() { return RedisClient(server->client_options()); }
};

// A verdict of `status` (the fields the queue cares about).
Verdict verdict_of(Status status, std::string message = "") {
  Verdict v = infra_verdict(std::move(message));
  v.status = status;
  return v;
}

std::set<std::string> ids(const std::vector<StreamEntry>& entries) {
  std::set<std::string> out;
  for (const auto& e : entries) out.insert(e.id);
  return out;
}

}  // namespace

TEST(RedisUrl, Parses) {
  RedisOptions o = parse_redis_url("redis://worker:s3cret@queue.example:6380/2");
  EXPECT_EQ(o.user, "worker");
  EXPECT_EQ(o.password, "s3cret");
  EXPECT_EQ(o.host, "queue.example");
  EXPECT_EQ(o.port, 6380);
  EXPECT_EQ(o.db, 2);
  o = parse_redis_url("redis://[::1]:7000");
  EXPECT_EQ(o.host, "::1");
  EXPECT_EQ(o.port, 7000);
  o = parse_redis_url("redis://10.0.0.5");
  EXPECT_EQ(o.port, 6379);
  EXPECT_TRUE(o.user.empty());
  EXPECT_THROW(parse_redis_url("http://x"), InputError);
  EXPECT_THROW(parse_redis_url("redis://x:port"), InputError);
}

TEST(RedisClientDead, NoServerIsAClearConnectionError) {
  RedisOptions o;
  o.port = 1;  // privileged, nobody listens on it in a test environment
  o.connect_timeout_s = 1;
  try {
    RedisClient c(o);
    FAIL() << "connected to port 1";
  } catch (const RedisConnectionError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot connect to 127.0.0.1:1"), std::string::npos) << e.what();
  }
}

TEST(RedisClientDead, AServerGoneMidCommandIsAnErrorNotSigpipe) {
  // hiredis writes with write(2). SIGPIPE keeps its default action (terminate) here, so a write to
  // a connection the server has closed would end the test binary if the client let it through.
  auto previous = std::signal(SIGPIPE, SIG_DFL);
  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener.get(), 4), 0);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  // A "server" that takes the first byte of a command, hangs up, and discards what already came.
  std::thread server([&] {
    Fd c(::accept(listener.get(), nullptr, nullptr));
    static char buf[1 << 16];
    if (::recv(c.get(), buf, 1, 0) != 1) return;
    ::shutdown(c.get(), SHUT_WR);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    while (::recv(c.get(), buf, sizeof buf, MSG_DONTWAIT) > 0) {
    }
  });
  RedisOptions o;  // no password, database 0: connecting sends nothing
  o.port = ntohs(addr.sin_port);
  RedisClient c(o);
  EXPECT_THROW(c.command({"SET", "k", std::string(8 << 20, 'x')}), RedisConnectionError);
  EXPECT_FALSE(c.connected());
  server.join();
  std::signal(SIGPIPE, previous);
}

TEST_F(RedisTest, RepliesOfEveryType) {
  RedisClient c = client();
  RedisReply r = c.command({"SET", "k", "v"});
  EXPECT_EQ(r.type, Type::status);
  EXPECT_EQ(r.as_string(), "OK");
  EXPECT_TRUE(c.command({"GET", "missing"}).is_nil());
  r = c.command({"GET", "k"});
  EXPECT_EQ(r.type, Type::bulk);
  EXPECT_EQ(r.as_string(), "v");
  r = c.command({"INCRBY", "n", "41"});
  EXPECT_EQ(r.type, Type::integer);
  EXPECT_EQ(c.command({"INCR", "n"}).as_integer(), 42);
  // Binary-safe and empty bulk strings; a reply larger than one socket read.
  std::string binary("a\r\nb\0c", 6), big(3 << 20, 'x');
  c.command({"SET", "bin", binary});
  c.command({"SET", "empty", ""});
  c.command({"SET", "big", big});
  EXPECT_EQ(c.command({"GET", "bin"}).as_string(), binary);
  EXPECT_EQ(c.command({"GET", "empty"}).type, Type::bulk);
  EXPECT_EQ(c.command({"GET", "big"}).as_string().size(), big.size());
  c.command({"RPUSH", "list", "a", "b", "c"});
  r = c.command({"LRANGE", "list", "0", "-1"});
  ASSERT_EQ(r.type, Type::array);
  ASSERT_EQ(r.as_array().size(), 3u);
  EXPECT_EQ(r.as_array()[2].as_string(), "c");
  EXPECT_TRUE(c.command({"LRANGE", "nolist", "0", "-1"}).as_array().empty());
  // A nested error stays an element; a nested nil too.
  r = c.command({"EVAL", "return {1, 'two', redis.error_reply('BOOM nested'), {3}}", "0"});
  ASSERT_EQ(r.as_array().size(), 4u);
  EXPECT_EQ(r.as_array()[0].as_integer(), 1);
  EXPECT_EQ(r.as_array()[1].as_string(), "two");
  EXPECT_EQ(r.as_array()[2].type, Type::error);
  EXPECT_EQ(r.as_array()[2].text, "BOOM nested");
  EXPECT_EQ(r.as_array()[3].as_array()[0].as_integer(), 3);
  EXPECT_THROW((void)r.as_integer(), RedisConnectionError);
}

TEST_F(RedisTest, Resp3IsRefusedAndRepliesStayResp2) {
  RedisClient c = client();
  // hiredis 0.14 reads RESP2 only: switching the connection to RESP3 is refused before sending.
  EXPECT_THROW(c.command({"HELLO", "3"}), InputError);
  EXPECT_THROW(c.command({"hello", "3", "AUTH", "u", "p"}), InputError);
  EXPECT_TRUE(c.connected());
  RedisReply hello = c.command({"HELLO", "2"});  // RESP2: a flat array of key, value, ...
  ASSERT_EQ(hello.type, Type::array);
  EXPECT_EQ(hello.as_array()[0].as_string(), "server");
  EXPECT_TRUE(c.command({"GET", "missing"}).is_nil());
  c.command({"HSET", "h", "f", "v"});
  RedisReply map = c.command({"HGETALL", "h"});
  ASSERT_EQ(map.as_array().size(), 2u);
  EXPECT_EQ(map.as_array()[1].as_string(), "v");
  c.command({"SADD", "set", "m"});
  EXPECT_EQ(c.command({"SMEMBERS", "set"}).as_array().at(0).as_string(), "m");
  // A script's RESP3 values reach a RESP2 client converted by the server.
  EXPECT_EQ(c.command({"EVAL", "redis.setresp(3); return {double=1.5}", "0"}).as_string(), "1.5");
  EXPECT_EQ(c.command({"EVAL", "redis.setresp(3); return true", "0"}).as_integer(), 1);
  EXPECT_THROW(c.command({"INCR", "h"}), RedisError);
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");
}

TEST_F(RedisTest, ErrorReplyIsTypedAndTheConnectionStaysUsable) {
  RedisClient c = client();
  c.command({"SET", "k", "not a number"});
  try {
    c.command({"INCR", "k"});
    FAIL() << "INCR of text succeeded";
  } catch (const RedisError& e) {
    EXPECT_EQ(e.code(), "ERR");
    EXPECT_NE(e.server_message().find("not an integer"), std::string::npos) << e.what();
  }
  try {
    c.command({"NOSUCHCOMMAND"});
    FAIL();
  } catch (const RedisError& e) {
    EXPECT_NE(e.server_message().find("unknown command"), std::string::npos) << e.what();
  }
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");
}

TEST_F(RedisTest, ATimedOutCommandClosesTheConnectionAndTheNextReconnects) {
  RedisClient c = client();
  c.command({"SET", "k", "v"});
  auto start = std::chrono::steady_clock::now();
  try {
    c.command({"BLPOP", "nolist", "5"}, 0.3);  // blocks 5 s on the server; we wait 0.3 s
    FAIL() << "BLPOP returned before its timeout";
  } catch (const RedisConnectionError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  EXPECT_FALSE(c.connected()) << "a late reply must not answer the next command";
  EXPECT_EQ(c.command({"GET", "k"}).as_string(), "v");  // reconnected and authenticated again
  EXPECT_TRUE(c.connected());
  // A connection the server dropped while idle is replaced before the next command.
  RedisClient admin = client();
  std::string id = std::to_string(c.command({"CLIENT", "ID"}).as_integer());
  EXPECT_EQ(admin.command({"CLIENT", "KILL", "ID", id}).as_integer(), 1);
  sleep_ms(50);
  EXPECT_EQ(c.command({"GET", "k"}).as_string(), "v");
  EXPECT_NE(std::to_string(c.command({"CLIENT", "ID"}).as_integer()), id);
}

TEST_F(RedisTest, AuthIsRequiredAndAWrongPasswordRefused) {
  RedisOptions wrong = server->client_options();
  wrong.password = "wrong";
  try {
    RedisClient c(wrong);
    FAIL() << "a wrong password was accepted";
  } catch (const RedisError& e) {
    EXPECT_EQ(e.code(), "WRONGPASS") << e.what();
  }
  RedisOptions anonymous = server->client_options();
  anonymous.user.clear();
  anonymous.password.clear();
  RedisClient c(anonymous);  // connecting needs no credentials; the first command does
  try {
    c.command({"PING"});
    FAIL() << "PING was answered without AUTH";
  } catch (const RedisError& e) {
    EXPECT_EQ(e.code(), "NOAUTH") << e.what();
  }
}

TEST_F(RedisTest, TwoConsumersOfAGroupGetDistinctEntries) {
  RedisClient ca = client(), cb = client();
  RedisStreamQueue qa(ca, "tasks", "sm90"), qb(cb, "tasks", "sm90");
  // Added before the group exists: still delivered (the group starts at 0).
  std::set<std::string> added = {qa.add({{"task", "t0"}})};
  EXPECT_TRUE(qa.ensure_group());
  EXPECT_FALSE(qb.ensure_group()) << "BUSYGROUP is not an error";
  for (int i = 1; i < 10; ++i) added.insert(qa.add({{"task", "t" + std::to_string(i)}, {"request", "{}"}}));
  auto a = qa.read_group("hostA-gpu0", 4, 0);
  auto b = qb.read_group("hostB-gpu0", 100, 100);
  EXPECT_EQ(a.size(), 4u);
  EXPECT_EQ(b.size(), 6u);
  std::set<std::string> seen = ids(a);
  for (const auto& e : b) EXPECT_TRUE(seen.insert(e.id).second) << e.id << " delivered twice";
  EXPECT_EQ(seen, added);
  EXPECT_EQ(a[0].field("task"), "t0");
  EXPECT_EQ(b[0].field("request"), "{}");
  EXPECT_FALSE(b[0].field("nope").has_value());
  // Nothing new: a blocking read times out with no entries.
  EXPECT_TRUE(qa.read_group("hostA-gpu0", 1, 50).empty());
  PendingSummary p = qa.pending();
  EXPECT_EQ(p.count, 10);
  EXPECT_EQ(p.consumers["hostA-gpu0"], 4);
  EXPECT_EQ(p.consumers["hostB-gpu0"], 6);
  EXPECT_EQ(qa.ack({a[0].id, a[1].id}), 2);
  EXPECT_EQ(qa.ack({a[0].id}), 0) << "acknowledged twice";
  EXPECT_EQ(qa.pending().count, 8);
}

TEST_F(RedisTest, AnUnackedEntryOfADeadConsumerIsReclaimedAfterItsIdleTime) {
  RedisClient c = client();
  RedisStreamQueue q(c, "tasks", "sm90");
  q.ensure_group();
  std::string id = q.add({{"task", "t1"}});
  {
    RedisClient dying = client();
    RedisStreamQueue qd(dying, "tasks", "sm90");
    ASSERT_EQ(qd.read_group("hostA-gpu0", 1, 0).size(), 1u);
  }  // the consumer is gone without acknowledging
  AutoClaimed early = q.claim_stale("hostB-gpu1", 300, 10);
  EXPECT_TRUE(early.entries.empty()) << "reclaimed before its idle time";
  sleep_ms(350);
  AutoClaimed late = q.claim_stale("hostB-gpu1", 300, 10);
  ASSERT_EQ(late.entries.size(), 1u);
  EXPECT_EQ(late.entries[0].id, id);
  EXPECT_EQ(late.entries[0].field("task"), "t1");
  EXPECT_EQ(late.next_cursor, "0-0");
  auto pending = q.pending_entries(10);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].consumer, "hostB-gpu1");
  EXPECT_EQ(pending[0].deliveries, 2) << "the re-run counts as a second attempt";
  EXPECT_LT(pending[0].idle_ms, 300);
  EXPECT_TRUE(q.pending_entries(10, "hostA-gpu0").empty());
}

// The task queue over Redis (redis_task_queue.h): two hosts' queues on one Redis, as two workers
// on two machines see it.
QueueConfig host_queue(const RedisServer& server, const std::string& host) {
  QueueConfig c;
  c.location = "redis://" + server.user() + "@127.0.0.1:" + std::to_string(server.port());
  c.password_file = server.password_file().string();
  c.host = host;
  return c;
}

TEST_F(RedisTest, TheClaimMakesAStaleCompleterLose) {
  RedisTaskQueue qa(host_queue(*server, "hostA")), qb(host_queue(*server, "hostB"));
  std::string id = qa.enqueue({{"definition", "gemm_n7168_k5120"}, {"n", 1}});
  auto a = qa.claim("gpu0", 0.2, 0);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->worker, "hostA/gpu0");
  EXPECT_FALSE(qb.claim("gpu0", 5, 0).has_value()) << "held by hostA";
  // A stalls past its lease; B takes the task over.
  sleep_ms(250);
  auto b = qb.claim("gpu0", 5, 0);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->task.id, id);
  EXPECT_EQ(b->token, 2);
  EXPECT_NE(qb.get(id)->note.find("lease expired"), std::string::npos);
  EXPECT_FALSE(qa.heartbeat(*a, 5)) << "a lost claim must not be renewable";
  EXPECT_FALSE(qa.complete(*a, verdict_of(Status::PASSED, "by A"))) << "the stale completer must lose";
  EXPECT_TRUE(qb.complete(*b, verdict_of(Status::PASSED, "by B")));
  EXPECT_FALSE(qb.complete(*b, verdict_of(Status::PASSED, "by B again"))) << "completed twice";
  EXPECT_EQ(qa.get(id)->verdict->message, "by B");
  RedisClient c = client();
  RedisStreamQueue stream(c, "ptxbench:tasks:sm_90a", "sm_90a");
  EXPECT_EQ(stream.pending().count, 0) << "completion acknowledges the entry";
  EXPECT_TRUE(stream.range().empty()) << "and deletes it: the stream stays short";
  EXPECT_TRUE(c.command({"EXISTS", "ptxbench:claim:" + id}).as_integer() == 0) << "completion deletes the claim";
  EXPECT_EQ(qa.counters().evaluations["PASSED"], 1);
  EXPECT_EQ(qa.counters().requeues["lease_expired"], 1);
}

// A worker's poll while many tasks run elsewhere: the pending entries are tried in one script
// call (EVALSHA), not one call per entry; and a Redis that forgot its scripts (restarted) gets them
// loaded again.
int64_t command_calls(RedisClient& c, const std::string& command) {
  std::string info = c.command({"INFO", "commandstats"}).as_string();
  auto at = info.find("cmdstat_" + command + ":calls=");
  if (at == std::string::npos) return 0;
  return std::stoll(info.substr(at + command.size() + 15));
}

TEST_F(RedisTest, APollTriesEveryPendingEntryInOneCall) {
  RedisTaskQueue qa(host_queue(*server, "hostA")), qb(host_queue(*server, "hostB"));
  std::vector<Claim> running;
  for (int i = 0; i < 40; ++i) qa.enqueue({{"definition", "gemm_n7168_k5120"}, {"n", i}});
  for (int i = 0; i < 40; ++i) {
    auto c = qa.claim("gpu" + std::to_string(i), 30, i);
    ASSERT_TRUE(c.has_value()) << i;
    running.push_back(*c);
  }
  ASSERT_TRUE(qa.requeue(running[17], "infrastructure error", 3, verdict_of(Status::INFRA_ERROR, "gave up")));  // handed back
  RedisClient c = client();
  c.command({"CONFIG", "RESETSTAT"});
  auto b = qb.claim("gpu0", 30, 0);
  ASSERT_TRUE(b.has_value()) << "the handed-back task among the held ones";
  EXPECT_EQ(b->task.id, running[17].task.id);
  EXPECT_EQ(command_calls(c, "evalsha"), 1) << c.command({"INFO", "commandstats"}).as_string();
  EXPECT_EQ(command_calls(c, "eval"), 0);
  c.command({"CONFIG", "RESETSTAT"});
  EXPECT_FALSE(qb.claim("gpu1", 30, 1).has_value()) << "every other task is held";
  EXPECT_EQ(command_calls(c, "evalsha"), 1);
  c.command({"SCRIPT", "FLUSH"});  // as after a restart without the scripts
  EXPECT_TRUE(qb.complete(*b, verdict_of(Status::PASSED, "by B")));
  EXPECT_EQ(qb.get(b->task.id)->state, TaskState::done);
}

TEST_F(RedisTest, HeartbeatsKeepATaskFromBeingTakenOver) {
  RedisTaskQueue qa(host_queue(*server, "hostA")), qb(host_queue(*server, "hostB"));
  qa.enqueue({{"definition", "gemm_n7168_k5120"}});
  auto a = qa.claim("gpu0", 0.3, 0);
  ASSERT_TRUE(a.has_value());
  for (int i = 0; i < 4; ++i) {  // 600 ms in all: twice the lease
    sleep_ms(150);
    ASSERT_TRUE(qa.heartbeat(*a, 0.3)) << "renewal " << i;
    EXPECT_FALSE(qb.claim("gpu0", 5, 0).has_value()) << "a renewed task was taken over";
  }
  Claim forged = *a;
  forged.token = 2;
  EXPECT_FALSE(qa.heartbeat(forged, 60)) << "renewed with an attempt that is not the claim's";
  forged = *a;
  forged.worker = "hostB/gpu0";
  EXPECT_FALSE(qa.heartbeat(forged, 60)) << "renewed by another worker";
  RedisClient c = client();
  auto pending = RedisStreamQueue(c, "ptxbench:tasks:sm_90a", "sm_90a").pending_entries(1);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].consumer, "hostA/gpu0");
}

TEST_F(RedisTest, WorkersOfEveryHostAreListedAndASilentOneIsGone) {
  QueueConfig config = host_queue(*server, "hostA");
  config.gone_after_s = 0.3;
  RedisTaskQueue qa(config), qb(host_queue(*server, "hostB"));
  RedisHostRegistry ra(config), rb(host_queue(*server, "hostB"));
  ra.record_health(0, "healthy", {{"canary_us", 10.0}});
  rb.record_health(1, "unhealthy", ordered_json::object());
  EXPECT_FALSE(qa.claim("gpu0", 5, 0).has_value());
  EXPECT_FALSE(qb.claim("gpu1", 5, 1).has_value());
  auto listed = ra.worker_records();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].worker, "hostA/gpu0");
  EXPECT_EQ(listed[0].state, "healthy");
  EXPECT_EQ(listed[1].host, "hostB");
  EXPECT_EQ(listed[1].device, 1);
  EXPECT_EQ(listed[1].state, "unhealthy");
  EXPECT_EQ(listed[0].detail["canary_us"], 10.0);
  EXPECT_EQ(ra.health_records().size(), 1u) << "health_records() is this host's";
  sleep_ms(1100);  // beats are written at most once a second
  EXPECT_FALSE(qb.claim("gpu1", 5, 1).has_value());
  listed = ra.worker_records();
  EXPECT_EQ(listed[0].state, "gone") << "hostA/gpu0 has been silent for longer than 0.3 s";
  EXPECT_EQ(listed[1].state, "unhealthy");
  ra.clear_health();
  EXPECT_TRUE(ra.health_records().empty());
  EXPECT_EQ(rb.health_records().size(), 1u) << "clear_health forgets only its own host's records";
}

TEST_F(RedisTest, ACrashOfRedisWithAofLosesNoTaskNorClaim) {
  RedisTaskQueue qa(host_queue(*server, "hostA"));
  std::vector<std::string> ids;
  for (int i = 0; i < 50; ++i) ids.push_back(qa.enqueue_once({{"n", i}}, "key-" + std::to_string(i)).id);
  std::vector<Claim> claims;
  for (int i = 0; i < 20; ++i) claims.push_back(*qa.claim("gpu0", 60, 0));
  ASSERT_TRUE(qa.complete(claims[0], verdict_of(Status::PASSED)));
  ASSERT_TRUE(qa.complete(claims[1], verdict_of(Status::COMPILE_ERROR)));

  server->kill();  // kill -9: only what appendfsync wrote survives
  EXPECT_THROW(qa.state_counts(), RedisConnectionError) << "a dead server must be a connection error";
  server->start();  // same folder and port: the AOF is loaded

  // The same queue object reconnects (and re-authenticates) on its next command.
  EXPECT_EQ(qa.state_counts(), (std::map<std::string, int64_t>{{"queued", 30}, {"running", 18}, {"done", 2}}));
  EXPECT_EQ(qa.enqueue_once({{"n", 7}}, "key-7").admission, Admission::existing) << "the idempotency keys survived";
  RedisTaskQueue qb(host_queue(*server, "hostB"));
  auto next = qb.claim("gpu0", 60, 0);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->task.id, ids[20]) << "the group's position survived: the next task is the 21st";
  // So did the claims: still current, each completes once.
  EXPECT_TRUE(qa.heartbeat(claims[2], 60));
  EXPECT_TRUE(qa.complete(claims[2], verdict_of(Status::PASSED)));
  EXPECT_FALSE(qb.complete(claims[2], verdict_of(Status::PASSED)));

  server->stop();  // a graceful restart as well
  server->start();
  EXPECT_EQ(qa.state_counts(), (std::map<std::string, int64_t>{{"queued", 29}, {"running", 18}, {"done", 3}}));
  EXPECT_EQ(qa.get(ids[2])->status, Status::PASSED);
  EXPECT_EQ(qa.counters().evaluations["PASSED"], 2);
}

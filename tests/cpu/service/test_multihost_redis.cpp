// Issue 23's fault run on the CPU: the service across several "hosts" that share one Redis queue.
// A front `ptxbench serve --queue redis://... --gpus 0` takes the HTTP API; three hosts of three
// fake-GPU `ptxbench worker` processes each take the work. 500 submissions from 8 clients; mid-load
// one host's workers are killed with SIGKILL, later Redis itself (SIGKILL, then restarted on its AOF).
// Nothing may be lost or twinned, every verdict must be the expected one, and the tasks taken from
// the killed host must finish on the others. Black-box: the CLI and the HTTP API only.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/json_check.h"
#include "helpers/fake_hosts.h"
#include "helpers/redis_server.h"
#include "service/service_client.h"

using namespace ptxbench;
using fakes::FakeHost;
using fakes::FrontService;
using fakes::RedisServer;

namespace {

constexpr int kSubmissions = 500;
constexpr int kClients = 8;
constexpr int kLanesPerClient = 2;  // each client keeps two submissions in flight: the hosts have a backlog
constexpr int kWorkersPerHost = 3;
constexpr double kLeaseS = 3;       // short, so the killed host's tasks are reclaimed within seconds
constexpr double kAvoidWindowS = 30;
constexpr int kKillHostAt = 100;    // verdicts seen before the host is killed
constexpr int kKillRedisAt = 300;   // ... and before Redis is
constexpr double kRedisDownS = 4;     // longer than the lease: every claim expires meanwhile
constexpr double kLoadDeadlineS = 150;  // the whole load; on this machine it takes ~20-40 s
const std::vector<std::string> kHosts = {"hostA", "hostB", "hostC"};
const std::string kKilledHost = "hostC";

double now_s() { return epoch_seconds(); }
void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

/// Polls `done` every 50 ms until it holds or `timeout_s` passes.
bool wait_until(const std::function<bool()>& done, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    sleep_s(0.05);
  }
}

// The verdicts are varied on purpose: a PASSED verdict must carry its own speedup, and a wrong one
// must not turn into another (e.g. a re-run that lost its status).
struct Case {
  std::string name, markers, status;
  std::optional<double> speedup;
};
const std::vector<Case> kCases = {
    {"fast_pass", "PTXB_FAKE_SECONDS=0.02 PTXB_FAKE_SPEEDUP=1.25", "PASSED", 1.25},
    {"slow_pass", "PTXB_FAKE_SECONDS=0.1 PTXB_FAKE_SPEEDUP=0.8", "PASSED", 0.8},
    {"numerics", "PTXB_FAKE_SECONDS=0.06 PTXB_FAKE_STATUS=INCORRECT_NUMERICAL", "INCORRECT_NUMERICAL", std::nullopt},
    {"compile", "PTXB_FAKE_SECONDS=0.02 PTXB_FAKE_STATUS=COMPILE_ERROR", "COMPILE_ERROR", std::nullopt},
};

std::string submission_body(const Case& c, const std::string& tag) {
  return ordered_json{{"definition", "gemm_n7168_k5120"}, {"source", "// " + c.markers + " " + tag + "\n"}}.dump();
}

bool is_json_error(const std::string& body) {
  try {
    ordered_json j = ordered_json::parse(body);
    return j.is_object() && j.contains("error") && j["error"].is_string() && !j["error"].get<std::string>().empty();
  } catch (const std::exception&) {
    return false;
  }
}

/// One submission: its idempotency key, the task it got, and the task as last read once done.
struct Submission {
  const Case* c = nullptr;
  std::string key, id;
  ordered_json task;     ///< the finished task (state done), or null
  int answered_503 = 0;  ///< submit tries answered 503 (Redis down)
  int answered_200 = 0;  ///< 200: a resend that found its task (the first try got in after all)
  int unreachable = 0;   ///< tries that found no service at all
  std::string failure;   ///< why there is no verdict
};

/// The load: kClients clients, kLanesPerClient lanes each, every lane submits (same key on every
/// try), then polls to the verdict, then takes the next submission.
struct Load {
  std::string url, run_tag;
  std::vector<Submission> subs = std::vector<Submission>(kSubmissions);
  std::atomic<int> next{0}, finished{0}, verdicts{0};
  std::atomic<bool> stop{false};
  double deadline = 0;  ///< epoch seconds
  std::mutex mutex;
  std::map<int, std::string> in_flight;  ///< submission -> task, accepted and not yet done
  std::vector<std::string> odd_503_bodies;
  std::map<std::string, int> answers;  ///< "POST 503", "GET 500", ...: every answer but 200/202, for the summary
  void count(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    ++answers[what];
  }

  void lane(int client) {
    ServiceClient http(url);
    const std::string client_header = "X-Ptxbench-Client: client-" + std::to_string(client);
    for (int i = next++; i < kSubmissions && !stop; i = next++) {
      Submission& s = subs[static_cast<std::size_t>(i)];
      const std::string body = submission_body(*s.c, run_tag + " #" + std::to_string(i));
      const std::vector<std::string> headers = {"Idempotency-Key: " + s.key, client_header};
      while (s.id.empty() && s.failure.empty()) {
        if (stop) return;
        if (now_s() > deadline) {
          s.failure = "not accepted before the load's deadline (" + std::to_string(s.answered_503) + " answers 503, " +
                      std::to_string(s.unreachable) + " unreachable)";
          break;
        }
        HttpResult r;
        try {
          r = http.request("POST", "/v1/evaluations", body, 10, headers);
        } catch (const Error&) {
          ++s.unreachable;
          count("POST unreachable");
          sleep_s(0.1);
          continue;
        }
        if (r.status != 202) count("POST " + std::to_string(r.status));
        if (r.status == 202 || r.status == 200) {
          s.id = ordered_json::parse(r.body).at("id").get<std::string>();
          if (r.status == 200) ++s.answered_200;
          std::lock_guard<std::mutex> lock(mutex);
          in_flight[i] = s.id;
        } else if (r.status == 503 || r.status == 429) {
          if (r.status == 503) ++s.answered_503;
          if (!is_json_error(r.body)) {
            std::lock_guard<std::mutex> lock(mutex);
            odd_503_bodies.push_back(std::to_string(r.status) + " " + r.body.substr(0, 200));
          }
          sleep_s(0.2);  // the contract: retry with the same key
        } else {
          s.failure = "submission answered " + std::to_string(r.status) + ": " + r.body.substr(0, 300);
        }
      }
      while (!s.id.empty() && s.task.is_null() && s.failure.empty()) {
        if (stop) return;
        if (now_s() > deadline) {
          s.failure = "task " + s.id + " has no verdict before the load's deadline";
          break;
        }
        HttpResult r;
        try {
          r = http.request("GET", "/v1/evaluations/" + s.id + "?wait=2", "", 15, {client_header});
        } catch (const Error&) {
          count("GET unreachable");
          sleep_s(0.1);
          continue;
        }
        if (r.status != 200) {  // 503 or 5xx while Redis is down: poll again
          count("GET " + std::to_string(r.status));
          sleep_s(0.2);
          continue;
        }
        ordered_json t = ordered_json::parse(r.body, nullptr, false);
        if (t.is_object() && t.value("state", "") == "done") s.task = t;
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        in_flight.erase(i);
      }
      if (!s.task.is_null()) ++verdicts;
      ++finished;
    }
  }

  std::map<int, std::string> snapshot_in_flight() {
    std::lock_guard<std::mutex> lock(mutex);
    return in_flight;
  }
};

/// Stops and joins the lanes however the test ends (an ASSERT returns early).
struct Lanes {
  Load& load;
  std::vector<std::thread> threads;
  explicit Lanes(Load& l) : load(l) {
    for (int c = 0; c < kClients; ++c)
      for (int k = 0; k < kLanesPerClient; ++k) threads.emplace_back([this, c] { load.lane(c); });
  }
  void join() {
    for (auto& t : threads)
      if (t.joinable()) t.join();
  }
  ~Lanes() {
    load.stop = true;
    join();
  }
};

/// GET that never throws: status 0 when the service cannot be reached.
HttpResult get(const ServiceClient& http, const std::string& path, double timeout_s = 10) {
  try {
    return http.request("GET", path, "", timeout_s);
  } catch (const Error& e) {
    return {0, e.what(), {}};
  }
}

/// `/v1/health`'s workers as {worker name -> entry}; empty when unreadable.
std::map<std::string, ordered_json> health_workers(const ServiceClient& http, std::string* raw = nullptr) {
  HttpResult r = get(http, "/v1/health");
  if (raw) *raw = std::to_string(r.status) + " " + r.body.substr(0, 3000);
  std::map<std::string, ordered_json> out;
  ordered_json j = ordered_json::parse(r.body, nullptr, false);
  if (!j.is_object() || !j.contains("workers") || !j["workers"].is_array()) return out;
  for (const auto& w : j["workers"])
    if (w.is_object() && w.contains("worker") && w["worker"].is_string()) out[w["worker"].get<std::string>()] = w;
  return out;
}

std::string worker_name(const std::string& host, int device) { return host + "/gpu" + std::to_string(device); }

/// Whether every worker of `hosts` is in `state` in `/v1/health`.
bool workers_in_state(const std::map<std::string, ordered_json>& workers, const std::vector<std::string>& hosts,
                      const std::string& state) {
  for (const auto& h : hosts)
    for (int d = 0; d < kWorkersPerHost; ++d) {
      auto it = workers.find(worker_name(h, d));
      if (it == workers.end() || it->second.value("state", "") != state) return false;
    }
  return true;
}

/// `ptxbench_evaluations_total{status="X"} N` of the metrics text, by status.
std::map<std::string, long> evaluations_by_status(const std::string& metrics) {
  std::map<std::string, long> out;
  std::istringstream lines(metrics);
  const std::string prefix = "ptxbench_evaluations_total{status=\"";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    auto end = line.find('"', prefix.size());
    auto space = line.rfind(' ');
    if (end == std::string::npos || space == std::string::npos) continue;
    long n = std::stol(line.substr(space + 1));
    if (n != 0) out[line.substr(prefix.size(), end - prefix.size())] = n;  // a status never seen may be listed at 0
  }
  return out;
}

struct MultiHostRedisTest : ::testing::Test {
  TempDir dir{"ptxbench-multihost"};
  std::unique_ptr<RedisServer> redis;
  void SetUp() override {
    if (RedisServer::executable().empty())
      GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs the Debian package redis-server)";
    if (!fs::exists(fakes::ptxbench_under_test()))
      GTEST_SKIP() << fakes::ptxbench_under_test() << " does not exist (set $PTXBENCH_BIN to the ptxbench under test)";
    redis = std::make_unique<RedisServer>(dir.path() / "redis", "always");
  }
};

}  // namespace

TEST_F(MultiHostRedisTest, LoadSurvivesALostHostAndARedisCrashWithNothingLostOrTwinned) {
  const std::string run_tag = "mh" + std::to_string(static_cast<long long>(now_s() * 1000));
  const auto queue = fakes::redis_queue_access(*redis, run_tag);
  const auto env = fakes::test_process_env(dir.path() / "cache");
  // The front judges a worker "gone" by its own --lease: the same lease everywhere.
  FrontService front(queue, {"--lease", std::to_string(kLeaseS)}, env);
  std::vector<std::unique_ptr<FakeHost>> hosts;
  const std::vector<std::string> worker_args = {"--lease", std::to_string(kLeaseS), "--avoid-window", std::to_string(kAvoidWindowS)};
  for (const auto& h : kHosts) hosts.push_back(std::make_unique<FakeHost>(h, kWorkersPerHost, queue, worker_args, env));
  FakeHost& killed = *hosts.back();
  ASSERT_EQ(killed.name(), kKilledHost);
  auto logs = [&] {
    std::string out = "--- front service (" + front.url() + ") stderr:\n" + front.log() + "\n";
    for (auto& h : hosts) out += h->log(1500);
    return out + "--- redis log:\n" + redis->log_tail();
  };
  ServiceClient http(front.url());

  // Every worker of every host reports in, healthy, before the load starts.
  std::string health_raw;
  std::vector<std::string> exited;
  ASSERT_TRUE(wait_until(
      [&] {
        for (auto& h : hosts)
          for (const auto& e : h->exited()) exited.push_back(e);
        return !exited.empty() || workers_in_state(health_workers(http, &health_raw), kHosts, "healthy");
      },
      30) && exited.empty())
      << "not all " << kHosts.size() * kWorkersPerHost << " workers healthy in /v1/health within 30 s"
      << (exited.empty() ? "" : " (a worker exited: " + exited.front() + ")") << "; last answer: " << health_raw << "\n"
      << logs();
  for (const auto& [name, w] : health_workers(http)) {
    EXPECT_TRUE(w.contains("host") && w.contains("device") && w.contains("last_heartbeat") && w.contains("age_s"))
        << "a health entry lacks a field of the contract: " << w.dump();
    if (name.rfind(kKilledHost + "/", 0) == 0) {
      EXPECT_EQ(w.value("host", ""), kKilledHost) << w.dump();
    }
  }

  Load load;
  load.url = front.url();
  load.run_tag = run_tag;
  load.deadline = now_s() + kLoadDeadlineS;
  for (int i = 0; i < kSubmissions; ++i) {
    load.subs[static_cast<std::size_t>(i)].c = &kCases[static_cast<std::size_t>(i) % kCases.size()];
    load.subs[static_cast<std::size_t>(i)].key = run_tag + "-" + std::to_string(i);
  }
  const double t0 = now_s();
  Lanes lanes(load);

  // 1. A host lost: kill -9 of hostC's workers while they hold tasks.
  ASSERT_TRUE(wait_until([&] { return load.finished >= kKillHostAt; }, 60))
      << "only " << load.finished << " of " << kKillHostAt << " verdicts within 60 s\n" << logs();
  // A task running on the killed host when it died: its worker, read through the API.
  auto running_on_killed_host = [&] {
    std::set<std::string> out;
    for (const auto& [i, id] : load.snapshot_in_flight()) {
      ordered_json t = ordered_json::parse(get(http, "/v1/evaluations/" + id).body, nullptr, false);
      if (t.is_object() && t.value("state", "") == "running" && t.contains("worker") && t["worker"].is_string() &&
          t["worker"].get<std::string>().rfind(kKilledHost + "/", 0) == 0)
        out.insert(id);
    }
    return out;
  };
  bool busy = wait_until([&] { return !running_on_killed_host().empty(); }, 10);
  const double killed_at = now_s();
  killed.kill_workers();
  // Claimed by hostC before the kill and not finished: these must be re-run elsewhere.
  const std::set<std::string> caught = running_on_killed_host();
  EXPECT_TRUE(busy) << "no task seen running on " << kKilledHost << " (task JSON's worker) within 10 s before the kill";
  EXPECT_GE(caught.size(), 1u) << "the kill caught no task running on " << kKilledHost;
  const int done_at_host_kill = load.finished;

  // Its workers turn "gone" after their lease; watched while the load goes on (the others stay healthy).
  std::map<std::string, ordered_json> workers;
  double gone_seen_at = 0;
  auto watch_gone = [&] {
    if (gone_seen_at > 0) return;
    workers = health_workers(http, &health_raw);
    if (workers_in_state(workers, {kKilledHost}, "gone")) gone_seen_at = now_s();
  };

  // 2. Redis crashes (SIGKILL) mid-load and comes back on its AOF.
  ASSERT_TRUE(wait_until(
      [&] {
        watch_gone();
        return load.finished >= kKillRedisAt;
      },
      60))
      << "only " << load.finished << " of " << kKillRedisAt << " verdicts within 60 s of the host's kill\n" << logs();
  const int done_at_redis_kill = load.finished;
  redis->kill();
  const double redis_down_at = now_s();
  const Case& probe_case = kCases[0];
  const std::string probe_key = run_tag + "-probe";
  const std::string probe_body = submission_body(probe_case, run_tag + " probe");
  auto submit_probe_while_down = [&](const std::string& when) {
    HttpResult during;
    try {
      during = http.request("POST", "/v1/evaluations", probe_body, 10, {"Idempotency-Key: " + probe_key});
    } catch (const Error& e) {
      during = {0, e.what(), {}};
    }
    EXPECT_EQ(during.status, 503) << "a submission " << when << " while Redis is down: " << during.body;
    EXPECT_TRUE(is_json_error(during.body)) << "the 503 carries a JSON error: " << during.body;
  };
  submit_probe_while_down("at once");
  sleep_s(std::max(0.0, kRedisDownS - 0.5 - (now_s() - redis_down_at)));
  submit_probe_while_down("again, same key,");
  sleep_s(std::max(0.0, kRedisDownS - (now_s() - redis_down_at)));
  EXPECT_TRUE(front.alive()) << "the front service died while Redis was down\n" << logs();
  ASSERT_NO_THROW(redis->start()) << logs();
  const double redis_back_at = now_s();
  // The same key again: the task now (202), or the one the 503'd try made after all (200).
  std::string probe_id;
  ASSERT_TRUE(wait_until(
      [&] {
        try {
          HttpResult r = http.request("POST", "/v1/evaluations", probe_body, 10, {"Idempotency-Key: " + probe_key});
          if (r.status == 202 || r.status == 200) probe_id = ordered_json::parse(r.body).at("id").get<std::string>();
        } catch (const Error&) {
        }
        return !probe_id.empty();
      },
      30))
      << "the probe not accepted within 30 s of Redis's restart\n" << logs();

  // 3. The load finishes.
  bool all_done = wait_until(
      [&] {
        watch_gone();
        return load.finished >= kSubmissions;
      },
      std::max(1.0, load.deadline - now_s()));
  load.stop = !all_done;
  lanes.join();
  const double wall_s = now_s() - t0;
  ASSERT_TRUE(all_done) << "only " << load.finished << " of " << kSubmissions << " submissions finished within "
                        << kLoadDeadlineS << " s\n" << logs();
  wait_until(
      [&] {
        watch_gone();
        return gone_seen_at > 0;
      },
      std::max(0.0, killed_at + kLeaseS + 20 - now_s()));
  const double gone_after_s = gone_seen_at > 0 ? gone_seen_at - killed_at : -1;
  EXPECT_GT(gone_seen_at, 0) << kKilledHost << "'s workers not all \"gone\" in /v1/health within " << kLeaseS + 20
                             << " s of the kill; last answer: " << health_raw;
  ordered_json probe;
  try {
    probe = http.wait_done(probe_id, 30).task;
  } catch (const Error& e) {
    ADD_FAILURE() << "the probe task " << probe_id << ": " << e.what();
  }

  // Every submission: one task, its verdict the expected one, stamped by the worker that ran it.
  int lost = 0, wrong = 0, reruns = 0, resent_200 = 0, answered_503 = 0, unreachable = 0;
  std::map<std::string, int> by_host, reruns_by_host;
  std::map<std::string, int> ids;  // task id -> submissions that got it
  std::map<std::string, long> expected_by_status;
  for (int i = 0; i < kSubmissions; ++i) {
    const Submission& s = load.subs[static_cast<std::size_t>(i)];
    answered_503 += s.answered_503;
    resent_200 += s.answered_200;
    unreachable += s.unreachable;
    if (!s.id.empty()) ++ids[s.id];
    ++expected_by_status[s.c->status];
    if (s.task.is_null()) {
      ++lost;
      ADD_FAILURE() << "submission " << i << " (" << s.c->name << "): " << s.failure;
      continue;
    }
    const ordered_json& t = s.task;
    std::string status = t.value("status", "");
    const ordered_json verdict = t.contains("verdict") && t["verdict"].is_object() ? t["verdict"] : ordered_json::object();
    bool ok = status == s.c->status && verdict.value("status", "") == s.c->status;
    if (s.c->speedup) ok = ok && verdict.contains("speedup") && verdict["speedup"].is_number() &&
                           std::abs(verdict["speedup"].get<double>() - *s.c->speedup) < 1e-9;
    else ok = ok && (!verdict.contains("speedup") || verdict["speedup"].is_null());
    if (!ok) {
      ++wrong;
      ADD_FAILURE() << "submission " << i << " (" << s.c->name << ", expected " << s.c->status
                    << (s.c->speedup ? " speedup " + std::to_string(*s.c->speedup) : "") << "): " << t.dump().substr(0, 1500);
    }
    const ordered_json stamp = verdict.contains("service") ? verdict["service"] : ordered_json::object();
    std::string host = stamp.value("host", "");
    std::string worker = stamp.value("worker", "");
    int attempt = stamp.contains("attempt") && stamp["attempt"].is_number_integer() ? stamp["attempt"].get<int>() : 0;
    EXPECT_EQ(stamp.value("task", ""), s.id) << "verdict.service.task of submission " << i << ": " << stamp.dump();
    EXPECT_TRUE(std::find(kHosts.begin(), kHosts.end(), host) != kHosts.end()) << "verdict.service.host: " << stamp.dump();
    EXPECT_EQ(worker.rfind(host + "/", 0), 0u) << "verdict.service.worker is HOST/NAME: " << stamp.dump();
    EXPECT_GE(attempt, 1) << "verdict.service.attempt: " << stamp.dump();
    if (t.contains("attempts")) {
      EXPECT_EQ(t["attempts"], attempt) << "the task's attempts and its verdict's: " << t.dump().substr(0, 600);
    }
    ++by_host[host];
    if (attempt > 1) {
      ++reruns;
      ++reruns_by_host[host];
      EXPECT_NE(host, kKilledHost) << "a re-run finished on the killed host: " << stamp.dump();
    }
    if (caught.count(s.id)) {
      EXPECT_GE(attempt, 2) << "task " << s.id << " was running on " << kKilledHost << " when it was killed: " << stamp.dump();
      EXPECT_NE(host, kKilledHost) << stamp.dump();
    }
    if (host == kKilledHost) {
      EXPECT_LT(t.value("finished_at", 0.0), killed_at + 1.0) << "a verdict from the killed host after its kill: " << t.dump().substr(0, 600);
    }
  }
  int twins = 0;
  for (const auto& [id, n] : ids) twins += n - 1;
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(twins, 0) << "submissions that got the same task";
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kSubmissions)) << "distinct task ids";
  EXPECT_FALSE(ids.count(probe_id)) << "the probe got a task of the load";
  EXPECT_GE(reruns, static_cast<int>(caught.size()));
  EXPECT_GT(by_host["hostA"], 0);
  EXPECT_GT(by_host["hostB"], 0);
  EXPECT_GT(by_host[kKilledHost], 0) << "the killed host took work before its kill";
  EXPECT_TRUE(load.odd_503_bodies.empty()) << "503 answers without a JSON error: " << load.odd_503_bodies.front();
  if (probe.is_object()) {
    EXPECT_EQ(probe.value("status", ""), "PASSED") << probe.dump().substr(0, 800);
  }

  // No twin evaluation either: the counters count each task once (the probe included).
  expected_by_status["PASSED"] += 1;
  HttpResult metrics;
  std::map<std::string, long> counted;
  EXPECT_TRUE(wait_until(
      [&] {
        metrics = get(http, "/metrics");
        if (metrics.status == 404) metrics = get(http, "/v1/metrics");
        counted = evaluations_by_status(metrics.body);
        return counted == expected_by_status;
      },
      10))
      << "ptxbench_evaluations_total by status differs from the tasks' (more: a twin evaluation): counted "
      << ordered_json(counted).dump() << ", expected " << ordered_json(expected_by_status).dump() << "\n"
      << metrics.status << " " << metrics.body.substr(0, 3000);

  // After it all: the survivors healthy again (they reconnected to the restarted Redis), the killed host gone.
  EXPECT_TRUE(wait_until(
      [&] {
        workers = health_workers(http, &health_raw);
        return workers_in_state(workers, {"hostA", "hostB"}, "healthy") && workers_in_state(workers, {kKilledHost}, "gone");
      },
      kLeaseS + 15))
      << "after the load: hostA/hostB healthy and hostC gone expected; /v1/health: " << health_raw;
  for (std::size_t h = 0; h + 1 < hosts.size(); ++h)
    EXPECT_TRUE(hosts[h]->exited().empty()) << "a surviving worker exited (it should reconnect to Redis): "
                                            << hosts[h]->exited().front() << "\n" << hosts[h]->log();
  EXPECT_TRUE(front.alive()) << logs();

  ordered_json summary = {{"submissions", kSubmissions},
                          {"clients", kClients},
                          {"hosts", kHosts.size()},
                          {"workers_per_host", kWorkersPerHost},
                          {"verdicts", load.verdicts.load()},
                          {"lost", lost},
                          {"twins", twins},
                          {"not_as_expected", wrong},
                          {"distinct_task_ids", ids.size()},
                          {"reruns", reruns},
                          {"reruns_by_host", reruns_by_host},
                          {"finished_by_host", by_host},
                          {"caught_on_killed_host", caught.size()},
                          {"done_at_host_kill", done_at_host_kill},
                          {"killed_host_gone_after_s", gone_after_s},
                          {"done_at_redis_kill", done_at_redis_kill},
                          {"redis_down_s", redis_back_at - redis_down_at},
                          {"submit_answers_503", answered_503},
                          {"resends_answered_200", resent_200},
                          {"submit_tries_unreachable", unreachable},
                          {"other_answers", load.answers},
                          {"evaluations_total", counted},
                          {"wall_s", wall_s}};
  std::cout << "[multihost] " << summary.dump() << std::endl;
  RecordProperty("summary", summary.dump());
}

#include "service/worker_loop.h"

#include <fmt/format.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "service/service_log.h"
#include "service/redis_client.h"
#include "service/task_queue.h"
#include "verdict/verdict.h"

namespace ptxbench {
namespace {

// Renews a claim every lease/3 on its own connection until destroyed.
class Heartbeat {
 public:
  Heartbeat(const QueueConfig& queue, const Claim& claim, double lease_s)
      : m_thread([this, queue, claim, lease_s] {
          std::unique_ptr<TaskQueue> q;
          std::unique_lock<std::mutex> lock(m_mutex);
          while (!m_cv.wait_for(lock, std::chrono::duration<double>(lease_s / 3), [this] { return m_stop; })) {
            try {  // Redis restarting: the next beat reconnects; the lease outlasts a few misses
              if (!q) q = open_task_queue(queue);
              q->heartbeat(claim, lease_s);
            } catch (const EnvironmentError& e) {
              spdlog::warn("task {}: heartbeat failed ({}); retrying", claim.task.id, e.what());
            }
          }
        }) {}
  ~Heartbeat() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stop = true;
    }
    m_cv.notify_all();
    m_thread.join();
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_cv;
  bool m_stop = false;
  std::thread m_thread;
};

// Runs a queue operation that stores a worker's result, retrying while Redis restarts: a result is
// not dropped then (a stale claim is refused when it answers, as it would have been).
template <class Op>
bool store_retrying(const std::atomic<bool>& stop, const std::string& task, Op&& op) {
  for (;;) {
    try {
      return op();
    } catch (const RedisConnectionError& e) {
      if (stop) throw;
      spdlog::warn("task {}: storing its result failed ({}); retrying in 1 s", task, e.what());
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
}

// The next claim of `lane`, or nullopt after an idle wait (none queued, or the queue unreachable).
std::optional<Claim> next_claim(TaskQueue& queue, const WorkerConfig& config, TaskLane lane) {
  std::optional<Claim> claim;
  try {
    claim = queue.claim(config.name, config.lease_s, config.device, config.avoid_window_s, lane);
  } catch (const RedisConnectionError& e) {
    spdlog::warn("worker {}: the queue is unreachable ({}); retrying in 1 s", config.name, e.what());
    std::this_thread::sleep_for(std::chrono::seconds(1));
    return std::nullopt;
  }
  if (!claim) std::this_thread::sleep_for(std::chrono::duration<double>(config.poll_s));
  return claim;
}

// Statuses after which the GPU may be in a bad state (a runner was killed or crashed on it).
bool suspicious(Status status) {
  return status == Status::TIMEOUT || status == Status::RUNTIME_ERROR || status == Status::SANITIZER_ERROR;
}

}  // namespace

std::string check_and_record_health(HostRegistry& registry, EvalBackend& backend, int device) {
  HealthReport h;
  try {
    h = backend.check_health();
  } catch (const std::exception& e) {
    h.problem = std::string("health check failed: ") + e.what();
  }
  ordered_json detail = h.detail;
  if (h.problem.empty() && h.canary_us) {
    detail["canary_us"] = *h.canary_us;
    if (auto cal = registry.calibration(h.calibration_key)) {
      detail["calibration_us"] = *cal;
      h.problem = judge_canary(*cal, *h.canary_us);
    } else {
      registry.set_calibration(h.calibration_key, *h.canary_us);
      detail["calibration_us"] = *h.canary_us;
      detail["calibrated_now"] = true;
    }
  }
  if (!h.problem.empty()) detail["problem"] = h.problem;
  std::string state = h.problem.empty() ? "healthy" : "unhealthy";
  auto before = registry.health_records();
  bool changed = !before.count(device) || before[device].state != state;
  registry.record_health(device, state, detail);
  if (!h.problem.empty())
    spdlog::error("GPU {} unhealthy: {}", device, h.problem);
  else
    spdlog::log(changed ? spdlog::level::info : spdlog::level::debug, "GPU {} healthy{}", device,
                detail.contains("canary_us") ? fmt::format(" (canary {:.1f} us, calibration {:.1f} us)", detail["canary_us"].get<double>(),
                                                          detail.value("calibration_us", 0.0))
                                             : "");
  return h.problem;
}

int run_worker(const WorkerConfig& config, EvalBackend& backend, const Catalog& catalog, const std::atomic<bool>& stop) {
  std::unique_ptr<TaskQueue> queue_owner = open_task_queue(config.queue);
  TaskQueue& queue = *queue_owner;
  std::unique_ptr<HostRegistry> registry = open_host_registry(config.queue);
  const std::string host = config.queue.host.empty() ? local_host_name() : config.queue.host;
  if (!check_and_record_health(*registry, backend, config.device).empty()) {
    spdlog::warn("worker {} takes no work on an unhealthy GPU {}: exits to be restarted", config.name, config.device);
    return kWorkerUnhealthyExit;
  }
  spdlog::info("worker {} taking work on GPU {} (queue {})", config.name, config.device, config.queue.describe());
  while (!stop) {
    std::optional<Claim> claim = next_claim(queue, config, TaskLane::gpu);
    if (!claim) continue;
    Verdict verdict;
    {
      Heartbeat heartbeat(config.queue, *claim, config.lease_s);
      try {
        EvalRequest request = eval_request_from_json(claim->task.request, catalog, config.limits);
        verdict = backend.evaluate(request);
      } catch (const std::exception& e) {
        verdict = infra_verdict(std::string("worker failed: ") + e.what(), backend.fake());
      }
    }
    const ordered_json stamp = {{"task", claim->task.id}, {"worker", claim->worker}, {"host", host}, {"attempt", claim->token}};
    verdict.extra["service"] = stamp;
    const std::string status = to_string(verdict.status);
    auto store = [&](auto&& op) -> bool { return store_retrying(stop, claim->task.id, op); };
    if (verdict.status == Status::INFRA_ERROR) {
      std::string message = verdict.message.empty() ? std::string("infrastructure error") : verdict.message;
      store([&] { return queue.requeue(*claim, message, config.max_attempts, verdict); });
      spdlog::warn("task {} attempt {}/{}: INFRA_ERROR ({}); {}; worker {} exits to be restarted", claim->task.id,
                   claim->token, config.max_attempts, message,
                   claim->token >= config.max_attempts ? "given up" : "re-queued", config.name);
      return kWorkerUnhealthyExit;
    }
    if (suspicious(verdict.status)) {
      std::string problem = check_and_record_health(*registry, backend, config.device);
      if (!problem.empty()) {
        // The GPU, not the candidate, may have caused this verdict: run it again elsewhere.
        Verdict infra = infra_verdict("GPU unhealthy after this evaluation: " + problem, backend.fake());
        infra.extra["service"] = stamp;
        store([&] { return queue.requeue(*claim, infra.message, config.max_attempts, infra); });
        spdlog::error("task {} attempt {}/{}: GPU {} unhealthy after its {} verdict; {}; worker {} exits to be restarted",
                      claim->task.id, claim->token, config.max_attempts, config.device, status,
                      claim->token >= config.max_attempts ? "given up" : "re-queued", config.name);
        return kWorkerUnhealthyExit;
      }
    }
    if (store([&] { return queue.complete(*claim, verdict); }))
      spdlog::debug("task {} done: {} ({} attempt{})", claim->task.id, status, claim->token, claim->token == 1 ? "" : "s");
    else
      spdlog::warn("task {}: verdict {} dropped, the claim was taken back meanwhile (lease expired?)", claim->task.id, status);
  }
  spdlog::info("worker {} stopped", config.name);
  return 0;
}

int run_check_worker(const WorkerConfig& config, EvalBackend& backend, const Catalog& catalog, const std::atomic<bool>& stop) {
  std::unique_ptr<TaskQueue> queue_owner = open_task_queue(config.queue);
  TaskQueue& queue = *queue_owner;
  const std::string host = config.queue.host.empty() ? local_host_name() : config.queue.host;
  spdlog::info("check worker {} taking compile stages (queue {})", config.name, config.queue.describe());
  while (!stop) {
    std::optional<Claim> claim = next_claim(queue, config, TaskLane::check);
    if (!claim) continue;
    std::optional<Verdict> verdict;
    {
      Heartbeat heartbeat(config.queue, *claim, config.lease_s);
      try {
        verdict = backend.check(eval_request_from_json(claim->task.request, catalog, config.limits));
      } catch (const std::exception& e) {
        verdict = infra_verdict(std::string("check worker failed: ") + e.what(), backend.fake());
      }
    }
    const std::string& id = claim->task.id;
    if (verdict && verdict->status != Status::INFRA_ERROR) {
      verdict->extra["service"] = {{"task", id}, {"worker", claim->worker}, {"host", host}, {"attempt", claim->token}};
      if (store_retrying(stop, id, [&] { return queue.complete(*claim, *verdict); }))
        spdlog::debug("task {} done at its compile stage: {}", id, to_string(verdict->status));
      else
        spdlog::warn("task {}: verdict {} dropped, the claim was taken back meanwhile (lease expired?)", id, to_string(verdict->status));
      continue;
    }
    // Passed, or our check failed (its GPU worker compiles it again and says why).
    if (verdict) spdlog::warn("task {}: the check worker's compile stage failed on our side ({}); a GPU worker runs it", id, verdict->message);
    if (!store_retrying(stop, id, [&] { return queue.pass_on(*claim); }))
      spdlog::warn("task {}: not passed on, the claim was taken back meanwhile (lease expired?)", id);
  }
  spdlog::info("check worker {} stopped", config.name);
  return 0;
}

}  // namespace ptxbench

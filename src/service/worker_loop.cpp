#include "service/worker_loop.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "service/task_queue.h"

namespace ptxbench {
namespace {

// Renews a claim every lease/3 on its own connection until destroyed.
class Heartbeat {
 public:
  Heartbeat(const std::string& db, const Claim& claim, double lease_s)
      : m_thread([this, db, claim, lease_s] {
          TaskQueue q(db);
          std::unique_lock<std::mutex> lock(m_mutex);
          while (!m_cv.wait_for(lock, std::chrono::duration<double>(lease_s / 3), [this] { return m_stop; }))
            q.heartbeat(claim, lease_s);
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

ordered_json infra_verdict(const std::string& message) {
  return {{"schema", "ptxbench.verdict"}, {"schema_version", 1}, {"status", "INFRA_ERROR"}, {"message", message}};
}

// Statuses after which the GPU may be in a bad state (a runner was killed or crashed on it).
bool suspicious(const std::string& status) {
  return status == "TIMEOUT" || status == "RUNTIME_ERROR" || status == "SANITIZER_ERROR";
}

}  // namespace

std::string check_and_record_health(TaskQueue& queue, EvalBackend& backend, int device) {
  HealthReport h;
  try {
    h = backend.check_health();
  } catch (const std::exception& e) {
    h.problem = std::string("health check failed: ") + e.what();
  }
  ordered_json detail = h.detail;
  if (h.problem.empty() && h.canary_us) {
    detail["canary_us"] = *h.canary_us;
    if (auto cal = queue.calibration(h.calibration_key)) {
      detail["calibration_us"] = *cal;
      h.problem = judge_canary(*cal, *h.canary_us);
    } else {
      queue.set_calibration(h.calibration_key, *h.canary_us);
      detail["calibration_us"] = *h.canary_us;
      detail["calibrated_now"] = true;
    }
  }
  if (!h.problem.empty()) detail["problem"] = h.problem;
  queue.record_health(device, h.problem.empty() ? "healthy" : "unhealthy", detail);
  return h.problem;
}

int run_worker(const WorkerConfig& config, EvalBackend& backend, const Catalog& catalog, const std::atomic<bool>& stop) {
  TaskQueue queue(config.db);
  if (!check_and_record_health(queue, backend, config.device).empty()) return kWorkerUnhealthyExit;
  while (!stop) {
    auto claim = queue.claim(config.name, config.lease_s, config.device, config.avoid_window_s);
    if (!claim) {
      std::this_thread::sleep_for(std::chrono::duration<double>(config.poll_s));
      continue;
    }
    ordered_json verdict;
    {
      Heartbeat heartbeat(config.db, *claim, config.lease_s);
      try {
        EvalRequest request = eval_request_from_json(claim->task.request, catalog, config.limits);
        verdict = backend.evaluate(request);
      } catch (const std::exception& e) {
        verdict = infra_verdict(std::string("worker failed: ") + e.what());
      }
    }
    verdict["service"] = {{"task", claim->task.id}, {"worker", config.name}, {"attempt", claim->token}};
    std::string status = verdict.value("status", "");
    if (status == "INFRA_ERROR") {
      queue.requeue(*claim, verdict.value("message", std::string("infrastructure error")), config.max_attempts, verdict);
      return kWorkerUnhealthyExit;
    }
    if (suspicious(status)) {
      std::string problem = check_and_record_health(queue, backend, config.device);
      if (!problem.empty()) {
        // The GPU, not the candidate, may have caused this verdict: run it again elsewhere.
        ordered_json infra = {{"schema", "ptxbench.verdict"}, {"schema_version", 1}, {"status", "INFRA_ERROR"},
                              {"message", "GPU unhealthy after this evaluation: " + problem}, {"service", verdict["service"]}};
        queue.requeue(*claim, infra["message"].get<std::string>(), config.max_attempts, infra);
        return kWorkerUnhealthyExit;
      }
    }
    queue.complete(*claim, verdict);
  }
  return 0;
}

}  // namespace ptxbench

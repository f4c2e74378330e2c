// One worker process per GPU: claims tasks from the durable queue, keeps the claim alive with
// heartbeats while the evaluation runs, stores the verdict, and hands infrastructure failures back
// to the queue (exiting so that the service restarts it and re-checks its GPU). A check worker
// claims from the check lane and runs the compile stage alone, on the CPU.
#pragma once

#include <atomic>
#include <string>

#include "definitions/catalog.h"
#include "service/eval_backend.h"
#include "service/host_registry.h"
#include "service/task_queue.h"

namespace ptxbench {

struct WorkerConfig {
  QueueConfig queue;
  std::string name;        ///< "gpu0": the claim owner (Redis: "host/gpu0")
  int device = 0;
  double lease_s = 60.0;   ///< a claim not renewed for this long goes back to the queue
  double poll_s = 0.1;     ///< idle wait between claim attempts
  int64_t max_attempts = 3;
  /// A task that failed on this GPU (dead worker, lost lease, INFRA_ERROR) waits this long for
  /// another GPU before this one may take it again (0 on a host with one GPU).
  double avoid_window_s = 0.0;
  EvalRequestLimits limits;
};

/// Exit code of a worker that stopped because its evaluation failed on our side (INFRA_ERROR).
inline constexpr int kWorkerUnhealthyExit = 75;

/// Checks the GPU (the backend's check plus the canary against its calibration) and records the
/// result in the host registry (/v1/health, and the queue's avoid window). Returns the problem,
/// or "" when healthy.
std::string check_and_record_health(HostRegistry& registry, EvalBackend& backend, int device);

/// Checks the GPU first (an unhealthy GPU takes no work); then claims and evaluates until `stop`
/// becomes true (returns 0). An INFRA_ERROR, or a failed health check after an evaluation that was
/// killed or crashed, hands the task back to the queue and returns kWorkerUnhealthyExit.
int run_worker(const WorkerConfig& config, EvalBackend& backend, const Catalog& catalog, const std::atomic<bool>& stop);

/// A check worker (TaskLane::check, no GPU): claims check-lane tasks and runs their compile stage
/// until `stop` (returns 0). A candidate that fails it is finished with that verdict; one that
/// passes, or whose check failed on our side, goes on to the gpu lane, where a GPU worker runs the
/// whole evaluation (its compile a cache hit).
int run_check_worker(const WorkerConfig& config, EvalBackend& backend, const Catalog& catalog, const std::atomic<bool>& stop);

}  // namespace ptxbench

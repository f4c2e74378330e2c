// One worker process per GPU: claims tasks from the durable queue, keeps the claim alive with
// heartbeats while the evaluation runs, stores the verdict, and hands infrastructure failures back
// to the queue (exiting so that the service restarts it and re-checks its GPU).
#pragma once

#include <atomic>
#include <string>

#include "definitions/catalog.h"
#include "service/eval_backend.h"

namespace ptxbench {

struct WorkerConfig {
  std::string db;
  std::string name;        ///< "gpu0": the claim owner
  double lease_s = 60.0;   ///< a claim not renewed for this long goes back to the queue
  double poll_s = 0.1;     ///< idle wait between claim attempts
  int64_t max_attempts = 3;
  EvalRequestLimits limits;
};

/// Exit code of a worker that stopped because its evaluation failed on our side (INFRA_ERROR).
inline constexpr int kWorkerUnhealthyExit = 75;

/// Runs until `stop` becomes true (returns 0) or an INFRA_ERROR (returns kWorkerUnhealthyExit).
int run_worker(const WorkerConfig& config, EvalBackend& backend, const Catalog& catalog, const std::atomic<bool>& stop);

}  // namespace ptxbench

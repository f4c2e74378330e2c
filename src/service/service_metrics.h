// GET /metrics in the Prometheus text format: cumulative counters and the evaluation wall-time
// histogram kept in the queue database (they survive restarts of the service and never shrink when
// finished tasks expire), the queue's current state, the workers' state, and the build.
#pragma once

#include <string>

#include "common/json_check.h"
#include "service/task_queue.h"

namespace ptxbench {

/// `workers`: WorkerPool::status() (one entry per worker; their restart counts are the service
/// process's own, since a restart of the service starts new workers).
std::string render_metrics(TaskQueue& queue, const ordered_json& workers);

/// "<version>" and "<git commit>" (or "unknown") of this build.
std::string build_version();
std::string build_commit();

}  // namespace ptxbench

// The service's GPU workers: one `ptxbench worker` process per device, started, watched and
// restarted with back-off; a worker that dies hands its running tasks back to the queue; a GPU
// whose worker keeps dying is excluded and reported instead of receiving more work.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/json_check.h"
#include "common/subprocess.h"
#include "service/task_queue.h"

namespace ptxbench {

struct WorkerPoolConfig {
  std::string self_exe;     ///< the ptxbench binary (workers are `ptxbench worker …`)
  /// Local state beside which the GPU lock files go: the SQLite queue, or (Redis) a file of this
  /// host's service.
  std::string db;
  QueueConfig queue;        ///< what the workers claim from (`--db`, or `--queue` with Redis)
  std::vector<int> devices;
  /// Worker processes per GPU. Above 1 they share the GPU through a lock file beside the database:
  /// untimed stages overlap, timing stages run alone (worker/gpu_lock.h).
  int workers_per_gpu = 1;
  /// Check workers (no GPU): they run the compile stage of each new task, so that its
  /// COMPILE_ERROR, BANNED_API or ABI_ERROR verdict never waits for a GPU worker (TaskLane::check).
  int check_workers = 0;
  std::vector<std::string> worker_args;  ///< extra `ptxbench worker` options (time limits, log level)
  /// When >= 0: a descriptor (serve's stderr) each worker gets as fd 3 and writes its log to
  /// (`--log-fd 3`), so the workers' lines join serve's. Not owned; must outlive the pool.
  int log_fd = -1;
  bool fake = false;        ///< `--fake` workers (CPU tests)
  double lease_s = 60.0;
  int64_t max_attempts = 3;
  int exclude_after_failures = 5;  ///< failures within `failure_window_s` that exclude a GPU
  double failure_window_s = 600.0;
};

class WorkerPool {
 public:
  explicit WorkerPool(WorkerPoolConfig config);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void start();
  /// Reaps exited workers (re-queueing their tasks), restarts them when their back-off has passed,
  /// excludes flapping GPUs. Call periodically.
  void supervise();
  /// Kills every worker (their running tasks are recovered at the next start).
  void stop();
  /// Per-worker state for /v1/health and /metrics (several entries per device when shared).
  [[nodiscard]] ordered_json status() const;
  /// Kills the workers of a device as if they had crashed (tests, and the monitor's restart).
  void kill_worker(int device);

 private:
  struct Slot {
    int device = 0;  ///< -1: a check worker
    TaskLane lane = TaskLane::gpu;
    std::string name;
    std::unique_ptr<ChildProcess> process;
    std::string state = "stopped";  ///< starting/running, restarting, excluded, stopped
    int restarts = 0;
    std::string last_exit;
    double restart_at = 0;
    std::deque<double> failures;
  };
  void spawn(Slot& s);
  [[nodiscard]] std::string lock_path(int device) const;
  WorkerPoolConfig m_config;
  std::vector<Slot> m_slots;
  mutable std::mutex m_mutex;
};

}  // namespace ptxbench

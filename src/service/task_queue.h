// The durable evaluation queue (SQLite, WAL): accepted tasks survive a kill -9 of the service, and
// a task completes at most once — a completion must present the claim it was given, so a worker
// whose lease expired (and whose task was handed to another) cannot complete it a second time.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json_check.h"
#include "common/sqlite_db.h"

namespace ptxbench {

enum class TaskState { queued, running, done };
std::string to_string(TaskState s);

struct TaskRecord {
  std::string id;
  TaskState state = TaskState::queued;
  ordered_json request;                 ///< definition, workload, source, options
  std::optional<ordered_json> verdict;  ///< set when done
  std::string status;                   ///< verdict status when done
  int64_t attempts = 0;                 ///< claims so far; the claim token of the current one
  std::string worker;                   ///< the last claimer
  std::string note;                     ///< why it was re-queued last (INFRA_ERROR, lost worker)
  std::string client;                   ///< who submitted it (X-Ptxbench-Client, else the peer's address)
  std::string peer;                     ///< the submitting connection's address ("10.0.0.5:41234")
  double created_at = 0, started_at = 0, finished_at = 0;
};

struct Claim {
  TaskRecord task;
  std::string worker;
  int64_t token = 0;  ///< attempts at claim time; complete/requeue/heartbeat must present it
};

/// Who submits a task, as the service saw it.
struct Submitter {
  std::string client;  ///< the name quotas count by
  std::string peer;    ///< address of the connection
};

/// Bounds on what the queue accepts; 0 means no bound.
struct AdmissionLimits {
  int64_t max_queued = 0;    ///< queued tasks in total
  int64_t client_quota = 0;  ///< queued + running tasks of one client
};

enum class Admission {
  accepted,    ///< a new task
  existing,    ///< the idempotency key named a task accepted before (counted once, never refused)
  over_quota,  ///< the client already has client_quota tasks queued or running
  queue_full,  ///< max_queued tasks are waiting
};
std::string to_string(Admission a);

struct Enqueued {
  std::string id;  ///< empty when refused
  Admission admission = Admission::accepted;
  int64_t in_use = 0;  ///< refused: the tasks that fill the bound (the client's, or all queued)
  [[nodiscard]] bool created() const noexcept { return admission == Admission::accepted; }
  [[nodiscard]] bool refused() const noexcept { return admission == Admission::over_quota || admission == Admission::queue_full; }
};

/// Upper bounds (seconds) of the evaluation wall-time histogram; a last bucket takes the rest.
inline constexpr std::array<double, 13> kEvaluationSecondsBuckets = {0.1, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800};

/// Cumulative counts kept in the queue database, updated in the same transaction as what they
/// count: they survive restarts of the service and never shrink when finished tasks expire.
struct QueueCounters {
  std::map<std::string, int64_t> evaluations;  ///< finished tasks by verdict status (gave-up INFRA_ERROR included)
  /// Finished tasks by wall time (claim to finish of the last attempt): one count per bucket of
  /// kEvaluationSecondsBuckets, then one for longer ones. Not cumulative.
  std::vector<int64_t> seconds_buckets = std::vector<int64_t>(kEvaluationSecondsBuckets.size() + 1, 0);
  double seconds_sum = 0;
  std::map<std::string, int64_t> requeues;     ///< tasks taken back, by cause
  std::map<std::string, int64_t> submissions;  ///< submissions by admission (accepted, existing, over_quota, queue_full)
};

class TaskQueue {
 public:
  explicit TaskQueue(const std::string& path);

  /// Stores a new task; returns its id (32 hex digits).
  std::string enqueue(const ordered_json& request);
  /// Stores a new task unless `client_key` (non-empty) already names one: then that task's id, so
  /// a client that resends after a lost answer (a service restart) never makes a twin. The same key
  /// with a different request is an InputError. A new task is refused (nothing stored) when
  /// `submitter.client` is at its quota or the queue is full; checked in the same transaction as
  /// the insert, so concurrent submissions cannot overshoot a bound.
  Enqueued enqueue_once(const ordered_json& request, const std::string& client_key, const Submitter& submitter = {},
                        const AdmissionLimits& limits = {});
  /// The oldest queued task, now running under `worker` (on GPU `device`) until now + lease_s;
  /// nullopt when none. A task re-queued after a failure on this device (a dead worker, an expired
  /// lease, an infrastructure error) is left to other devices for `avoid_window_s` seconds, as long
  /// as another device's latest health check says healthy.
  std::optional<Claim> claim(const std::string& worker, double lease_s, int device = -1, double avoid_window_s = 0);
  /// Extends the lease; false when the claim is no longer current.
  bool heartbeat(const Claim& c, double lease_s);
  /// Stores the verdict and finishes the task; false (nothing written) when the claim is stale.
  bool complete(const Claim& c, const ordered_json& verdict);
  /// Returns the task to the queue (infrastructure failure), or finishes it with `final_verdict`
  /// once it has been tried `max_attempts` times. False when the claim is stale.
  bool requeue(const Claim& c, const std::string& reason, int64_t max_attempts, const ordered_json& final_verdict);
  /// Running tasks whose lease has passed go back to the queue; returns how many.
  int64_t recover_expired();
  /// Every running task goes back to the queue (the service restarted: its workers are gone).
  int64_t recover_all_running(const std::string& reason);
  /// The running tasks of a worker that died: back to the queue, or finished as INFRA_ERROR once
  /// tried `max_attempts` times (a task that keeps killing workers must not loop forever).
  int64_t recover_worker(const std::string& worker, const std::string& reason, int64_t max_attempts);
  [[nodiscard]] QueueCounters counters();

  /// The latest health check of a device, as its worker recorded it.
  void record_health(int device, const std::string& state, const ordered_json& detail);
  /// Forgets every health record (the service starts: its workers check their GPUs again).
  void clear_health();
  /// device -> {state, detail, updated_at}
  [[nodiscard]] std::map<int, ordered_json> health_records();
  /// Canary calibration (µs) of a GPU, by a key naming the physical device.
  [[nodiscard]] std::optional<double> calibration(const std::string& key);
  void set_calibration(const std::string& key, double us);

  [[nodiscard]] std::optional<TaskRecord> get(const std::string& id);
  [[nodiscard]] std::map<std::string, int64_t> state_counts();
  [[nodiscard]] std::map<std::string, int64_t> status_counts();
  /// Deletes finished tasks older than `seconds`; returns how many.
  int64_t expire_finished(double seconds);

  static double now();

 private:
  void add_counter(const std::string& name, const std::string& label, double by);
  /// Counts a finished task: its status and its wall time. Inside the finishing transaction.
  void count_finished(const std::string& status, double wall_s);
  SqliteDb m_db;
};

}  // namespace ptxbench

// The durable evaluation queue (SQLite, WAL): accepted tasks survive a kill -9 of the service, and
// a task completes at most once — a completion must present the claim it was given, so a worker
// whose lease expired (and whose task was handed to another) cannot complete it a second time.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json_check.h"
#include "service/sqlite_db.h"

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
  double created_at = 0, started_at = 0, finished_at = 0;
};

struct Claim {
  TaskRecord task;
  std::string worker;
  int64_t token = 0;  ///< attempts at claim time; complete/requeue/heartbeat must present it
};

struct Enqueued {
  std::string id;
  bool created = true;  ///< false: the idempotency key named an existing task
};

class TaskQueue {
 public:
  explicit TaskQueue(const std::string& path);

  /// Stores a new task; returns its id (32 hex digits).
  std::string enqueue(const ordered_json& request);
  /// Stores a new task unless `client_key` (non-empty) already names one: then that task's id, so
  /// a client that resends after a lost answer (a service restart) never makes a twin. The same key
  /// with a different request is an InputError.
  Enqueued enqueue_once(const ordered_json& request, const std::string& client_key);
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
  /// Wall seconds (finish − start) of the most recent finished tasks, for latency summaries.
  [[nodiscard]] std::vector<std::pair<std::string, double>> recent_durations(int64_t limit);

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
  SqliteDb m_db;
};

}  // namespace ptxbench

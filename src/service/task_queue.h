// The durable evaluation queue: accepted tasks survive a kill -9 of the service, and a task
// completes at most once — a completion must present the claim it was given, so a worker whose
// lease expired (and whose task was handed to another) cannot complete it a second time. One
// interface, two backends: SQLite on one host, Redis Streams across hosts (docs/service.md). What
// the service knows of its hosts (GPU health, workers, calibrations) is the host registry beside
// it (host_registry.h).
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json_check.h"
#include "service/queue_config.h"
#include "verdict/verdict.h"

namespace ptxbench {

enum class TaskState { queued, running, done };
std::string to_string(TaskState s);
TaskState parse_task_state(const std::string& s);  ///< anything but queued/running is done

/// Which workers a queued task waits for (docs/service.md, "The check lane"). `check`: the
/// service's check workers run its compile stage on the CPU first, so that a COMPILE_ERROR,
/// BANNED_API or ABI_ERROR verdict never waits for a GPU worker; a candidate that passes them
/// moves on to the `gpu` lane. A GPU worker with nothing in the gpu lane also takes check-lane
/// tasks (it compiles them itself), so no task waits on a lane nobody serves.
enum class TaskLane { check, gpu };
std::string to_string(TaskLane l);
TaskLane parse_task_lane(const std::string& s);  ///< anything but "check" is gpu

/// A task as the queue holds it. `verdict` and `status` are set exactly when the task is done;
/// `status` is the verdict's (the backends also keep it apart, to count by).
struct TaskRecord {
  std::string id;
  TaskState state = TaskState::queued;
  TaskLane lane = TaskLane::gpu;
  ordered_json request;            ///< definition, workload, source, options
  std::optional<Verdict> verdict;  ///< set when done
  std::optional<Status> status;    ///< set when done: the verdict's status
  int64_t attempts = 0;            ///< claims so far; the claim token of the current one
  std::string worker;              ///< the last claimer
  std::string note;                ///< why it was re-queued last (INFRA_ERROR, lost worker)
  std::string client;              ///< who submitted it (X-Ptxbench-Client, else the peer's address)
  std::string peer;                ///< the submitting connection's address ("10.0.0.5:41234")
  double created_at = 0, started_at = 0, finished_at = 0;
};

struct Claim {
  TaskRecord task;
  std::string worker;
  int64_t token = 0;  ///< attempts at claim time; complete/requeue/heartbeat must present it
  int device = -1;    ///< the GPU it runs on
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

/// The queue's interface. Two backends: SqliteTaskQueue (sqlite_task_queue.h, one host) and
/// RedisTaskQueue (redis_task_queue.h, Redis Streams, many hosts). Each object is one connection:
/// not shared between threads; open one per thread or process.
class TaskQueue {
 public:
  virtual ~TaskQueue() = default;

  /// Stores a new task in `lane`; returns its id (32 hex digits).
  std::string enqueue(const ordered_json& request, TaskLane lane = TaskLane::gpu) {
    return enqueue_once(request, "", {}, {}, lane).id;
  }
  /// Stores a new task unless `client_key` (non-empty) already names one: then that task's id, so
  /// a client that resends after a lost answer (a service restart) never makes a twin. The same key
  /// with a different request is an InputError. A new task is refused (nothing stored) when
  /// `submitter.client` is at its quota or the queue is full; checked atomically with the insert,
  /// so concurrent submissions cannot overshoot a bound. The task waits in `lane`.
  virtual Enqueued enqueue_once(const ordered_json& request, const std::string& client_key, const Submitter& submitter = {},
                                const AdmissionLimits& limits = {}, TaskLane lane = TaskLane::gpu) = 0;
  /// The oldest queued task of `lane`, now running under `worker` (on GPU `device`) until now +
  /// lease_s; nullopt when none. A gpu-lane claimer with nothing in its lane takes the oldest
  /// check-lane task instead. A task re-queued after a failure on this device (a dead worker, an
  /// expired lease, an infrastructure error) is left to other devices for `avoid_window_s`
  /// seconds, as long as another device's latest health check says healthy (Redis: another host's
  /// first).
  virtual std::optional<Claim> claim(const std::string& worker, double lease_s, int device = -1, double avoid_window_s = 0,
                                     TaskLane lane = TaskLane::gpu) = 0;
  /// A check-lane task whose compile stage passed goes to the gpu lane, queued, with its attempts
  /// counted afresh; false (nothing changed) when the claim is stale.
  virtual bool pass_on(const Claim& c) = 0;
  /// Extends the lease; false when the claim is no longer current.
  virtual bool heartbeat(const Claim& c, double lease_s) = 0;
  /// Stores the verdict (its JSON document) and finishes the task; false (nothing written) when
  /// the claim is stale.
  virtual bool complete(const Claim& c, const Verdict& verdict) = 0;
  /// Returns the task to the queue (infrastructure failure), or finishes it with `final_verdict`
  /// (as it is: infra_verdict() makes the usual one) once it has been tried `max_attempts` times.
  /// False when the claim is stale.
  virtual bool requeue(const Claim& c, const std::string& reason, int64_t max_attempts, const Verdict& final_verdict) = 0;
  /// Running tasks whose lease has passed go back to the queue; returns how many.
  virtual int64_t recover_expired() = 0;
  /// Every running task of this service's own workers goes back to the queue (the service
  /// restarted: its workers are gone). Redis: none (other hosts' workers keep theirs; this host's
  /// lost claims expire with their lease).
  virtual int64_t recover_all_running(const std::string& reason) = 0;
  /// The running tasks of a worker that died: back to the queue, or finished as INFRA_ERROR once
  /// tried `max_attempts` times (a task that keeps killing workers must not loop forever).
  virtual int64_t recover_worker(const std::string& worker, const std::string& reason, int64_t max_attempts) = 0;
  [[nodiscard]] virtual QueueCounters counters() = 0;

  [[nodiscard]] virtual std::optional<TaskRecord> get(const std::string& id) = 0;
  [[nodiscard]] virtual std::map<std::string, int64_t> state_counts() = 0;
  [[nodiscard]] virtual std::map<std::string, int64_t> status_counts() = 0;
  /// Deletes finished tasks older than `seconds`; returns how many.
  virtual int64_t expire_finished(double seconds) = 0;

  static double now();
};

/// Opens the backend `config.location` names. Throws InputError for a malformed location,
/// EnvironmentError (RedisConnectionError) when Redis cannot be reached.
std::unique_ptr<TaskQueue> open_task_queue(const QueueConfig& config);

/// Names of the cumulative counters (their label: the status, bucket bound or cause).
namespace queue_counter {
inline constexpr const char* kEvaluations = "evaluations";
inline constexpr const char* kSecondsBucket = "evaluation_seconds_bucket";
inline constexpr const char* kSecondsSum = "evaluation_seconds_sum";
inline constexpr const char* kRequeues = "requeues";
inline constexpr const char* kSubmissions = "submissions";
}  // namespace queue_counter

/// Adds one stored counter (its name, label and value) to `c`; unknown names are ignored.
void add_counter_value(QueueCounters& c, const std::string& name, const std::string& label, double value);

/// A new task id: 32 random hex digits.
std::string new_task_id();

/// The counter bucket label of kEvaluationSecondsBuckets[i] ("+Inf" past the last), and the bucket
/// of a wall time: shared by the backends so that /metrics reads the same.
std::string seconds_bucket_label(std::size_t i);
std::size_t seconds_bucket(double wall_s);

/// A stored task's verdict document ("": none yet), read back; both backends store to_json()'s
/// text. A document this version cannot read is an InputError naming the task.
std::optional<Verdict> read_stored_verdict(const std::string& task_id, const std::string& document);

}  // namespace ptxbench

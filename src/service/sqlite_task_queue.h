// The queue on one host: a SQLite database in WAL mode (the default backend). Tasks and cumulative
// counters live in one file with the host registry's tables (sqlite_host_registry.h); every state
// change is one transaction, so a kill -9 at any point loses nothing that was acknowledged.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/sqlite_db.h"
#include "service/task_queue.h"

namespace ptxbench {

class SqliteTaskQueue final : public TaskQueue {
 public:
  /// Opens (creating or migrating) the queue database at `path`.
  explicit SqliteTaskQueue(const std::string& path);

  Enqueued enqueue_once(const ordered_json& request, const std::string& client_key, const Submitter& submitter = {},
                        const AdmissionLimits& limits = {}, TaskLane lane = TaskLane::gpu) override;
  std::optional<Claim> claim(const std::string& worker, double lease_s, int device = -1, double avoid_window_s = 0,
                             TaskLane lane = TaskLane::gpu) override;
  bool pass_on(const Claim& c) override;
  bool heartbeat(const Claim& c, double lease_s) override;
  bool complete(const Claim& c, const Verdict& verdict) override;
  bool requeue(const Claim& c, const std::string& reason, int64_t max_attempts, const Verdict& final_verdict) override;
  int64_t recover_expired() override;
  int64_t recover_all_running(const std::string& reason) override;
  int64_t recover_worker(const std::string& worker, const std::string& reason, int64_t max_attempts) override;
  [[nodiscard]] QueueCounters counters() override;

  [[nodiscard]] std::optional<TaskRecord> get(const std::string& id) override;
  [[nodiscard]] std::map<std::string, int64_t> state_counts() override;
  [[nodiscard]] std::map<std::string, int64_t> status_counts() override;
  int64_t expire_finished(double seconds) override;

 private:
  /// Binds the parameters of a `where` clause given to send_back / finish_where.
  using BindWhere = std::function<void(SqliteStatement&)>;
  /// The running tasks `where` selects (its parameters from ?3 on; ?2 is now) go back to the
  /// queue with `note`, remembering the GPU they failed on. Returns how many. Inside a transaction.
  int64_t send_back(const std::string& note, const std::string& where, const BindWhere& bind);
  /// The running tasks `where` selects (its parameters from ?5 on) finish with `verdict` (and
  /// `note`, when given), each counted. Returns how many. Inside a transaction.
  int64_t finish_where(const Verdict& verdict, const std::optional<std::string>& note, const std::string& where,
                       const BindWhere& bind);
  void add_counter(const std::string& name, const std::string& label, double by);
  /// Counts a finished task: its status and its wall time. Inside the finishing transaction.
  void count_finished(const std::string& status, double wall_s);
  SqliteDb m_db;
};

}  // namespace ptxbench

// The queue on one host: a SQLite database in WAL mode (the default backend). Tasks, health
// records, calibrations and cumulative counters live in one file; every state change is one
// transaction, so a kill -9 at any point loses nothing that was acknowledged.
#pragma once

#include <string>

#include "common/sqlite_db.h"
#include "service/task_queue.h"

namespace ptxbench {

class SqliteTaskQueue final : public TaskQueue {
 public:
  /// Opens (creating or migrating) the queue database at `path`; `host` names this machine in
  /// worker_records() (default: gethostname).
  explicit SqliteTaskQueue(const std::string& path, std::string host = "");

  Enqueued enqueue_once(const ordered_json& request, const std::string& client_key, const Submitter& submitter = {},
                        const AdmissionLimits& limits = {}) override;
  std::optional<Claim> claim(const std::string& worker, double lease_s, int device = -1, double avoid_window_s = 0) override;
  bool heartbeat(const Claim& c, double lease_s) override;
  bool complete(const Claim& c, const ordered_json& verdict) override;
  bool requeue(const Claim& c, const std::string& reason, int64_t max_attempts, const ordered_json& final_verdict) override;
  int64_t recover_expired() override;
  int64_t recover_all_running(const std::string& reason) override;
  int64_t recover_worker(const std::string& worker, const std::string& reason, int64_t max_attempts) override;
  [[nodiscard]] QueueCounters counters() override;

  void record_health(int device, const std::string& state, const ordered_json& detail) override;
  void clear_health() override;
  [[nodiscard]] std::map<int, ordered_json> health_records() override;
  [[nodiscard]] std::vector<WorkerRecord> worker_records() override;
  [[nodiscard]] std::optional<double> calibration(const std::string& key) override;
  void set_calibration(const std::string& key, double us) override;

  [[nodiscard]] std::optional<TaskRecord> get(const std::string& id) override;
  [[nodiscard]] std::map<std::string, int64_t> state_counts() override;
  [[nodiscard]] std::map<std::string, int64_t> status_counts() override;
  int64_t expire_finished(double seconds) override;

 private:
  void add_counter(const std::string& name, const std::string& label, double by);
  /// Counts a finished task: its status and its wall time. Inside the finishing transaction.
  void count_finished(const std::string& status, double wall_s);
  SqliteDb m_db;
  std::string m_host;
};

}  // namespace ptxbench

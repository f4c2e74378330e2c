// The host registry on one host: tables gpu_health and calibration in the queue's SQLite file
// (sqlite_task_queue.h), on a connection of its own.
#pragma once

#include <string>

#include "common/sqlite_db.h"
#include "service/host_registry.h"

namespace ptxbench {

class SqliteHostRegistry final : public HostRegistry {
 public:
  /// Opens the database at `path` (creating it and the registry's tables when missing); `host`
  /// names this machine in worker_records() (default: gethostname).
  explicit SqliteHostRegistry(const std::string& path, std::string host = "");

  void record_health(int device, const std::string& state, const ordered_json& detail) override;
  void clear_health() override;
  [[nodiscard]] std::map<int, HealthRecord> health_records() override;
  [[nodiscard]] std::vector<WorkerRecord> worker_records() override;
  [[nodiscard]] std::optional<double> calibration(const std::string& key) override;
  void set_calibration(const std::string& key, double us) override;

  /// Creates the registry's tables when missing; the queue calls it too (its claim reads gpu_health).
  static void create_tables(SqliteDb& db);

 private:
  SqliteDb m_db;
  std::string m_host;
};

}  // namespace ptxbench

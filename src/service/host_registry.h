// What the service knows of its hosts, apart from the tasks: each GPU's last health check, the
// workers every host runs (GET /v1/health) and the canary calibrations. Kept beside the queue in
// the same database (SQLite) or Redis (same prefix), each object its own connection: not shared
// between threads; open one per thread or process.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json_check.h"
#include "service/queue_config.h"

namespace ptxbench {

/// The latest health check of one GPU, as its worker recorded it.
struct HealthRecord {
  std::string state;  ///< healthy / unhealthy
  ordered_json detail = ordered_json::object();
  double updated_at = 0;  ///< epoch seconds
  /// {state, detail, updated_at}: GET /v1/health's "last_check".
  [[nodiscard]] ordered_json to_json() const;
};

/// One worker as the registry last heard of it (GET /v1/health "workers").
struct WorkerRecord {
  std::string host, worker;
  int device = -1;
  std::string state;            ///< its GPU's last health check: healthy / unhealthy; "gone" when silent
  double last_heartbeat = 0;    ///< epoch seconds
  ordered_json detail = ordered_json::object();  ///< the last health check's detail
};

/// Two backends: SqliteHostRegistry (sqlite_host_registry.h, one host) and RedisHostRegistry
/// (redis_host_registry.h, many hosts). The queue's claim reads the health records too: a task
/// that failed on a GPU waits for another one only while some other GPU is healthy.
class HostRegistry {
 public:
  virtual ~HostRegistry() = default;

  /// The latest health check of a device of this host, as its worker recorded it.
  virtual void record_health(int device, const std::string& state, const ordered_json& detail) = 0;
  /// Forgets this host's health records (the service starts: its workers check their GPUs again).
  virtual void clear_health() = 0;
  /// This host's devices: device -> its latest check.
  [[nodiscard]] virtual std::map<int, HealthRecord> health_records() = 0;
  /// Every worker known, on every host, with its GPU's state and last heartbeat.
  [[nodiscard]] virtual std::vector<WorkerRecord> worker_records() = 0;
  /// Canary calibration (µs) of a GPU, by a key naming the physical device.
  [[nodiscard]] virtual std::optional<double> calibration(const std::string& key) = 0;
  virtual void set_calibration(const std::string& key, double us) = 0;
};

/// Opens the backend `config.location` names (as open_task_queue does). Throws InputError for a
/// malformed location, EnvironmentError (RedisConnectionError) when Redis cannot be reached.
std::unique_ptr<HostRegistry> open_host_registry(const QueueConfig& config);

}  // namespace ptxbench

// The host registry across hosts: the health, beats and calibration hashes of a Redis queue's
// prefix (redis_keys.h), on a connection of its own. Health records are per "host/device"; the
// workers are those whose claims and heartbeats wrote a beat (redis_task_queue.h).
#pragma once

#include <string>

#include "service/host_registry.h"
#include "service/redis_client.h"

namespace ptxbench {

class RedisHostRegistry final : public HostRegistry {
 public:
  /// Connects (password from config.password_file). Throws RedisConnectionError / RedisError /
  /// InputError (URL, prefix or host name).
  explicit RedisHostRegistry(const QueueConfig& config);

  void record_health(int device, const std::string& state, const ordered_json& detail) override;
  /// Forgets this host's records only: the other hosts' workers keep theirs.
  void clear_health() override;
  [[nodiscard]] std::map<int, HealthRecord> health_records() override;
  /// Sorted by worker; a worker silent for longer than its lease is "gone".
  [[nodiscard]] std::vector<WorkerRecord> worker_records() override;
  [[nodiscard]] std::optional<double> calibration(const std::string& key) override;
  void set_calibration(const std::string& key, double us) override;

 private:
  QueueConfig m_config;
  std::string m_prefix, m_host;
  RedisClient m_client;
};

}  // namespace ptxbench

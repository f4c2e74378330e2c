#include "service/redis_host_registry.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/clock.h"
#include "service/redis_keys.h"

namespace ptxbench {

RedisHostRegistry::RedisHostRegistry(const QueueConfig& config)
    : m_config(config),
      m_prefix(redis_key_prefix(config)),
      m_host(redis_host_name(config)),
      m_client(redis_connection_options(config)) {}

void RedisHostRegistry::record_health(int device, const std::string& state, const ordered_json& detail) {
  ordered_json h = {{"host", m_host}, {"device", device}, {"state", state}, {"detail", detail}, {"updated_at", epoch_seconds()}};
  m_client.command({"HSET", m_prefix + ":health", m_host + "/" + std::to_string(device), h.dump()});
}

void RedisHostRegistry::clear_health() {
  std::vector<std::string> argv = {"HDEL", m_prefix + ":health"};
  RedisReply fields = m_client.command({"HKEYS", m_prefix + ":health"});  // named: a range-for over a temporary's member dangles
  for (const auto& f : fields.as_array())
    if (f.as_string().rfind(m_host + "/", 0) == 0) argv.push_back(f.as_string());
  if (argv.size() > 2) m_client.command(argv);
}

std::map<int, HealthRecord> RedisHostRegistry::health_records() {
  std::map<int, HealthRecord> out;
  for (auto& [gpu, h] : read_health(m_client, m_prefix))
    if (h.host == m_host) out[h.device] = h.record;
  return out;
}

std::vector<WorkerRecord> RedisHostRegistry::worker_records() {
  const auto health = read_health(m_client, m_prefix);
  std::vector<WorkerRecord> out;
  double t = epoch_seconds();
  for (const auto& b : read_beats(m_client, m_prefix, m_config.gone_after_s)) {
    WorkerRecord w;
    w.host = b.host;
    w.worker = b.worker;
    w.device = b.device;
    w.last_heartbeat = b.at;
    w.state = "unknown";
    if (auto h = health.find(w.host + "/" + std::to_string(w.device)); h != health.end()) {
      if (!h->second.record.state.empty()) w.state = h->second.record.state;
      w.detail = h->second.record.detail;
    }
    if (t - w.last_heartbeat > b.gone_after) w.state = "gone";
    out.push_back(std::move(w));
  }
  std::sort(out.begin(), out.end(), [](const WorkerRecord& a, const WorkerRecord& b) { return a.worker < b.worker; });
  return out;
}

std::optional<double> RedisHostRegistry::calibration(const std::string& key) {
  RedisReply r = m_client.command({"HGET", m_prefix + ":calibration", key});
  if (r.is_nil()) return std::nullopt;
  return std::stod(r.as_string());
}

void RedisHostRegistry::set_calibration(const std::string& key, double us) {
  m_client.command({"HSET", m_prefix + ":calibration", key, fmt::format("{:.17g}", us)});
}

}  // namespace ptxbench

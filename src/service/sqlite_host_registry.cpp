#include "service/sqlite_host_registry.h"

#include "common/clock.h"

namespace ptxbench {

SqliteHostRegistry::SqliteHostRegistry(const std::string& path, std::string host)
    : m_db(path), m_host(host.empty() ? local_host_name() : std::move(host)) {
  create_tables(m_db);
}

void SqliteHostRegistry::create_tables(SqliteDb& db) {
  db.exec("CREATE TABLE IF NOT EXISTS gpu_health (device INTEGER PRIMARY KEY, state TEXT NOT NULL, detail TEXT NOT NULL, "
          "updated_at REAL NOT NULL)");
  db.exec("CREATE TABLE IF NOT EXISTS calibration (key TEXT PRIMARY KEY, canary_us REAL NOT NULL, created_at REAL NOT NULL)");
}

void SqliteHostRegistry::clear_health() { m_db.exec("DELETE FROM gpu_health"); }

void SqliteHostRegistry::record_health(int device, const std::string& state, const ordered_json& detail) {
  m_db.prepare("INSERT INTO gpu_health (device, state, detail, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(device) "
               "DO UPDATE SET state = excluded.state, detail = excluded.detail, updated_at = excluded.updated_at")
      .bind_all(static_cast<int64_t>(device), state, detail.dump(), epoch_seconds())
      .run();
}

std::vector<WorkerRecord> SqliteHostRegistry::worker_records() {
  // One host: its GPUs' records; the last check is the heartbeat (workers check at start and
  // after suspicious verdicts; /v1/health's "gpus" has the pool's live state).
  std::vector<WorkerRecord> out;
  for (auto& [device, h] : health_records()) {
    WorkerRecord w;
    w.host = m_host;
    w.worker = "gpu" + std::to_string(device);
    w.device = device;
    w.state = h.state;
    w.last_heartbeat = h.updated_at;
    w.detail = h.detail;
    out.push_back(std::move(w));
  }
  return out;
}

std::map<int, HealthRecord> SqliteHostRegistry::health_records() {
  std::map<int, HealthRecord> out;
  auto st = m_db.prepare("SELECT device, state, detail, updated_at FROM gpu_health");
  while (st.step()) out[static_cast<int>(st.integer(0))] = {st.text(1), ordered_json::parse(st.text(2)), st.real(3)};
  return out;
}

std::optional<double> SqliteHostRegistry::calibration(const std::string& key) {
  auto st = m_db.prepare("SELECT canary_us FROM calibration WHERE key = ?");
  st.bind(1, key);
  if (!st.step()) return std::nullopt;
  return st.real(0);
}

void SqliteHostRegistry::set_calibration(const std::string& key, double us) {
  m_db.prepare("INSERT OR REPLACE INTO calibration (key, canary_us, created_at) VALUES (?, ?, ?)")
      .bind(1, key)
      .bind(2, us)
      .bind(3, epoch_seconds())
      .run();
}

}  // namespace ptxbench

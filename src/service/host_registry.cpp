#include "service/host_registry.h"

#include "service/redis_host_registry.h"
#include "service/sqlite_host_registry.h"

namespace ptxbench {

ordered_json HealthRecord::to_json() const { return {{"state", state}, {"detail", detail}, {"updated_at", updated_at}}; }

std::unique_ptr<HostRegistry> open_host_registry(const QueueConfig& config) {
  config.check_location();
  if (config.redis()) return std::make_unique<RedisHostRegistry>(config);
  return std::make_unique<SqliteHostRegistry>(config.location, config.host);
}

}  // namespace ptxbench

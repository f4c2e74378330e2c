#include "service/queue_config.h"

#include <fmt/format.h>
#include <unistd.h>

#include "common/error.h"
#include "service/redis_client.h"

namespace ptxbench {

std::string QueueConfig::describe() const {
  if (!redis()) return location;
  RedisOptions o = parse_redis_url(location);
  return fmt::format("redis://{}{}:{}/{}", o.user.empty() ? "" : o.user + "@", o.host, o.port, o.db);
}

void QueueConfig::check_location() const {
  if (location.empty()) throw InputError("queue", "no queue location (a SQLite file or redis://host:port)");
  if (!redis() && location.find("://") != std::string::npos)
    throw InputError("queue", "'" + location + "': a queue is a SQLite file path or a redis:// URL");
}

std::string local_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace ptxbench

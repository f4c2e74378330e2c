#include "service/task_queue.h"

#include <fmt/format.h>
#include <unistd.h>

#include <random>

#include "common/clock.h"
#include "common/error.h"
#include "service/redis_client.h"
#include "service/redis_task_queue.h"
#include "service/sqlite_task_queue.h"

namespace ptxbench {

std::string to_string(TaskState s) {
  switch (s) {
    case TaskState::queued: return "queued";
    case TaskState::running: return "running";
    case TaskState::done: return "done";
  }
  return "done";
}

TaskState parse_task_state(const std::string& s) {
  if (s == "queued") return TaskState::queued;
  if (s == "running") return TaskState::running;
  return TaskState::done;
}

std::string to_string(Admission a) {
  switch (a) {
    case Admission::accepted: return "accepted";
    case Admission::existing: return "existing";
    case Admission::over_quota: return "over_quota";
    case Admission::queue_full: return "queue_full";
  }
  return "accepted";
}

double TaskQueue::now() { return epoch_seconds(); }

std::string new_task_id() {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^ (uint64_t(std::random_device{}()) << 32));
  return fmt::format("{:016x}{:016x}", rng(), rng());
}

void add_counter_value(QueueCounters& c, const std::string& name, const std::string& label, double value) {
  using namespace queue_counter;
  auto count = static_cast<int64_t>(value + 0.5);
  if (name == kEvaluations) c.evaluations[label] = count;
  else if (name == kRequeues) c.requeues[label] = count;
  else if (name == kSubmissions) c.submissions[label] = count;
  else if (name == kSecondsSum) c.seconds_sum = value;
  else if (name == kSecondsBucket)
    for (std::size_t i = 0; i < c.seconds_buckets.size(); ++i)
      if (seconds_bucket_label(i) == label) c.seconds_buckets[i] = count;
}

std::string seconds_bucket_label(std::size_t i) {
  return i < kEvaluationSecondsBuckets.size() ? fmt::format("{}", kEvaluationSecondsBuckets[i]) : "+Inf";
}

std::size_t seconds_bucket(double wall_s) {
  std::size_t bucket = 0;
  while (bucket < kEvaluationSecondsBuckets.size() && wall_s > kEvaluationSecondsBuckets[bucket]) ++bucket;
  return bucket;
}

std::string local_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string QueueConfig::describe() const {
  if (!redis()) return location;
  RedisOptions o = parse_redis_url(location);
  return fmt::format("redis://{}{}:{}/{}", o.user.empty() ? "" : o.user + "@", o.host, o.port, o.db);
}

std::unique_ptr<TaskQueue> open_task_queue(const QueueConfig& config) {
  if (config.location.empty()) throw InputError("queue", "no queue location (a SQLite file or redis://host:port)");
  if (config.redis()) return std::make_unique<RedisTaskQueue>(config);
  if (config.location.find("://") != std::string::npos)
    throw InputError("queue", "'" + config.location + "': a queue is a SQLite file path or a redis:// URL");
  return std::make_unique<SqliteTaskQueue>(config.location, config.host);
}

}  // namespace ptxbench

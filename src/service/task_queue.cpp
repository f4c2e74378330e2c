#include "service/task_queue.h"

#include <fmt/format.h>

#include <random>

#include "common/clock.h"
#include "common/enum_names.h"
#include "common/error.h"
#include "service/redis_task_queue.h"
#include "service/sqlite_task_queue.h"

namespace ptxbench {
namespace {

constexpr EnumName<TaskState> kTaskStates[] = {
    {TaskState::queued, "queued"},
    {TaskState::running, "running"},
    {TaskState::done, "done"},
};

constexpr EnumName<TaskLane> kTaskLanes[] = {
    {TaskLane::check, "check"},
    {TaskLane::gpu, "gpu"},
};

constexpr EnumName<Admission> kAdmissions[] = {
    {Admission::accepted, "accepted"},
    {Admission::existing, "existing"},
    {Admission::over_quota, "over_quota"},
    {Admission::queue_full, "queue_full"},
};

}  // namespace

std::string to_string(TaskState s) { return enum_name(kTaskStates, s); }

TaskState parse_task_state(const std::string& s) { return find_enum(kTaskStates, s).value_or(TaskState::done); }

std::string to_string(TaskLane l) { return enum_name(kTaskLanes, l); }

TaskLane parse_task_lane(const std::string& s) { return find_enum(kTaskLanes, s).value_or(TaskLane::gpu); }

std::string to_string(Admission a) { return enum_name(kAdmissions, a); }

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

std::optional<Verdict> read_stored_verdict(const std::string& task_id, const std::string& document) {
  if (document.empty()) return std::nullopt;
  try {
    return Verdict::from_json(ordered_json::parse(document));
  } catch (const std::exception& e) {
    throw InputError("queue", "task " + task_id + ": its stored verdict cannot be read: " + e.what());
  }
}

std::unique_ptr<TaskQueue> open_task_queue(const QueueConfig& config) {
  config.check_location();
  if (config.redis()) return std::make_unique<RedisTaskQueue>(config);
  return std::make_unique<SqliteTaskQueue>(config.location);
}

}  // namespace ptxbench

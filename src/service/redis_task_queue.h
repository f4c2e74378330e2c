// The queue across hosts (issue 23): Redis Streams with one consumer group per GPU arch, behind the
// same TaskQueue interface as SQLite. A task is a hash; its stream entry is what hands it to a
// worker; a claim key with the lease as its TTL says who runs it. Every state change is one Lua
// script (atomic in Redis), so the rules of the SQLite backend hold as they are:
// - at most once: complete/requeue/heartbeat present the claim (worker + attempt number);
// - a worker that stops renewing (killed, its host gone, partitioned) loses the claim with the
//   key's TTL, and the next worker that scans the pending list takes the task over at once;
// - a task that failed on a host goes to another host first (avoid window), then to another GPU of
//   the same host, then anywhere;
// - with AOF (appendfsync always) a restart of Redis or of any service loses no accepted task.
// Key layout: redis_keys.h; Redis settings relied on and the reasoning: docs/service.md, "Many hosts".
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "service/redis_client.h"
#include "service/redis_stream_queue.h"
#include "service/task_queue.h"

namespace ptxbench {

class RedisTaskQueue final : public TaskQueue {
 public:
  /// Connects (password from config.password_file), creates the arch's stream and group when
  /// missing. Throws RedisConnectionError / RedisError (e.g. WRONGPASS) / InputError (URL).
  explicit RedisTaskQueue(const QueueConfig& config);

  Enqueued enqueue_once(const ordered_json& request, const std::string& client_key, const Submitter& submitter = {},
                        const AdmissionLimits& limits = {}, TaskLane lane = TaskLane::gpu) override;
  std::optional<Claim> claim(const std::string& worker, double lease_s, int device = -1, double avoid_window_s = 0,
                             TaskLane lane = TaskLane::gpu) override;
  bool pass_on(const Claim& c) override;
  bool heartbeat(const Claim& c, double lease_s) override;
  bool complete(const Claim& c, const Verdict& verdict) override;
  bool requeue(const Claim& c, const std::string& reason, int64_t max_attempts, const Verdict& final_verdict) override;
  int64_t recover_expired() override;
  int64_t recover_all_running(const std::string& reason) override;
  int64_t recover_worker(const std::string& worker, const std::string& reason, int64_t max_attempts) override;
  [[nodiscard]] QueueCounters counters() override;

  [[nodiscard]] std::optional<TaskRecord> get(const std::string& id) override;
  [[nodiscard]] std::map<std::string, int64_t> state_counts() override;
  [[nodiscard]] std::map<std::string, int64_t> status_counts() override;
  int64_t expire_finished(double seconds) override;

  /// "host/worker": the consumer name of a worker of this host (names with a '/' are kept).
  [[nodiscard]] std::string consumer(const std::string& worker) const;
  [[nodiscard]] const std::string& prefix() const noexcept { return m_prefix; }

 private:
  /// Runs one of the queue's scripts with the prefix as ARGV[1] and `args` after it: by its SHA1
  /// (EVALSHA), loaded once per connection's server and again after a NOSCRIPT (Redis restarted).
  RedisReply script(const char* body, const std::vector<std::string>& args);
  /// Records that `worker` (on `device`) is alive (P:beats, read by the host registry too); at
  /// most once a second per worker.
  void beat(const std::string& consumer, int device);
  /// Whether a healthy, live GPU exists on another host / on this host other than `device`.
  std::pair<bool, bool> elsewhere_healthy(int device);
  /// One new entry of the first of `lanes` (or, with "", the pending ones of each lane, oldest
  /// first): try to claim its task for `consumer`. `lanes`: stream names, space-separated.
  std::optional<Claim> try_claim(const std::string& lanes, const std::string& entry, const std::string& consumer, double lease_s,
                                 int device, double avoid_window_s, std::pair<bool, bool> elsewhere);
  /// A lane's stream (P:tasks:<arch>, and P:tasks:<arch>:check for the check lane); its consumer
  /// group, and the `arch` field of its tasks' hashes, are named by the part after "tasks:".
  RedisStreamQueue& stream(TaskLane lane) { return lane == TaskLane::check ? m_check_stream : m_stream; }

  QueueConfig m_config;
  std::string m_prefix, m_host;
  RedisClient m_client;
  RedisStreamQueue m_stream;        ///< the gpu lane
  RedisStreamQueue m_check_stream;  ///< the check lane
  std::map<std::string, std::chrono::steady_clock::time_point> m_last_beat;
  std::map<const char*, std::string> m_script_sha;  ///< script body (its constant) -> SCRIPT LOAD's SHA1
};

}  // namespace ptxbench

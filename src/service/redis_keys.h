// The Redis side of one queue (one key prefix), shared by the task queue (redis_task_queue.h) and
// the host registry (redis_host_registry.h): where they connect, the key layout, and the records
// that both read (workers' beats, GPUs' health checks).
//
// Keys, all under the prefix P (default "ptxbench"; one Redis may hold several queues):
//   P:task:<id>      hash: request, state, verdict, status, attempts, worker, host, device, note,
//                    client, peer, client_key, created_at, started_at, finished_at, entry, arch,
//                    avoid_host, avoid_device, requeued_at
//   P:tasks:<arch>   stream of {task: id}; its consumer group is named <arch>
//   P:claim:<id>     "worker|attempt", TTL = the lease: who runs the task
//   P:key:<key>      idempotency key -> id
//   P:states         hash queued/running/done -> tasks held;  P:status  status -> done tasks held
//   P:active         hash client -> queued + running tasks (quotas)
//   P:done           zset id -> finished_at (retention)
//   P:counters       hash "name|label" -> cumulative value (/metrics)
//   P:health         hash "host/device" -> {host, device, state, detail, updated_at}   (registry)
//   P:beats          hash "host/worker" -> {host, worker, device, at, gone_after}     (queue)
//   P:calibration    hash key -> canary µs                                            (registry)
// Scripts build keys from the prefix, so the queue needs a single Redis, not a cluster.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "service/host_registry.h"
#include "service/queue_config.h"
#include "service/redis_client.h"

namespace ptxbench {

/// "redis://...?prefix=NAME&x=y" → the value of one query parameter ("" when absent); InputError
/// for a parameter other than the ones known (prefix).
std::string redis_url_parameter(const std::string& url, const std::string& name);

/// The key prefix `config.location` names ("ptxbench" by default); InputError for one with
/// characters other than letters, digits, '_', '-' and '.'.
std::string redis_key_prefix(const QueueConfig& config);
/// This host's name in keys and records: config.host, else gethostname; InputError with a '/'.
std::string redis_host_name(const QueueConfig& config);
/// The URL's connection settings, with the password read from config.password_file.
RedisOptions redis_connection_options(const QueueConfig& config);

/// A Redis hash reply (field, value, field, value, ...) as a map.
std::map<std::string, std::string> redis_hash_pairs(const RedisReply& r);

/// A worker's latest sign of life (P:beats).
struct RedisBeat {
  std::string worker;  ///< "host/worker": the consumer name
  std::string host;
  int device = -1;
  double at = 0;          ///< epoch seconds
  double gone_after = 0;  ///< its own lease: silent for longer, it is gone
};
/// Every worker's beat; a malformed entry is skipped, one without a lease gets `default_gone_after`.
std::vector<RedisBeat> read_beats(RedisClient& client, const std::string& prefix, double default_gone_after);

/// A GPU's latest health check (P:health), keyed "host/device".
struct RedisHealth {
  std::string host;
  int device = -1;
  HealthRecord record;
};
/// Every host's health checks by "host/device"; malformed entries are skipped.
std::map<std::string, RedisHealth> read_health(RedisClient& client, const std::string& prefix);

}  // namespace ptxbench

// Where the service's shared state lives (a SQLite file on one host, or Redis across hosts) and
// who opens it: the one setting the task queue (task_queue.h) and the host registry
// (host_registry.h) are opened from.
#pragma once

#include <cstdint>
#include <string>

namespace ptxbench {

struct QueueConfig {
  /// A SQLite file (one host; the default), or "redis://[user@]host[:port][/db][?prefix=NAME]"
  /// (many hosts: docs/service.md, "Many hosts").
  std::string location;
  std::string password_file;  ///< Redis: the ACL user's password (one line); never in the URL for services
  /// Redis: the name of this host in claims, health records and verdicts (default: gethostname).
  std::string host;
  /// Redis: the GPU kind whose stream this process reads and writes: one stream and consumer group
  /// per arch (every definition today targets sm_90a).
  std::string arch = "sm_90a";
  /// Redis: a task reclaimed from a lost worker after this many claims is finished as INFRA_ERROR
  /// (a task that kills every worker that takes it must not loop).
  int64_t max_attempts = 3;
  /// Redis: a worker whose last heartbeat is older than this is "gone" (/v1/health) and its GPU no
  /// longer counts as somewhere else to re-run a task.
  double gone_after_s = 120;
  [[nodiscard]] bool redis() const { return location.rfind("redis://", 0) == 0; }
  /// For messages and logs: the location without credentials.
  [[nodiscard]] std::string describe() const;
  /// InputError unless the location is a SQLite file path or a redis:// URL.
  void check_location() const;
};

/// The host name this machine reports (gethostname), for QueueConfig::host.
std::string local_host_name();

}  // namespace ptxbench

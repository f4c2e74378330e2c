// The Redis Streams primitives the multi-host queue backend is built from (issue 23): one stream of
// tasks, one consumer group that hands each entry to one consumer and keeps it in that consumer's
// pending list until acknowledged, and reclaiming of entries whose consumer went silent. The claim
// that makes a task complete at most once is the task queue's (redis_task_queue.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "service/redis_client.h"

namespace ptxbench {

/// One stream entry: its id ("1700000000000-0") and its fields in the order they were added.
struct StreamEntry {
  std::string id;
  std::vector<std::pair<std::string, std::string>> fields;  ///< empty for an entry deleted while pending
  [[nodiscard]] std::optional<std::string> field(const std::string& name) const;
};

/// XAUTOCLAIM's answer: the entries now owned by the claimer, where to continue the scan ("0-0"
/// when the pending list has been scanned to its end), and pending ids whose entries were deleted.
struct AutoClaimed {
  std::vector<StreamEntry> entries;
  std::string next_cursor = "0-0";
  std::vector<std::string> deleted_ids;
};

/// XPENDING's summary of a group's pending list (delivered, not acknowledged).
struct PendingSummary {
  int64_t count = 0;
  std::string smallest_id, largest_id;        ///< empty when count is 0
  std::map<std::string, int64_t> consumers;   ///< consumer -> its pending entries
};

/// One pending entry (XPENDING's extended form).
struct PendingEntry {
  std::string id;
  std::string consumer;
  int64_t idle_ms = 0;
  int64_t deliveries = 0;  ///< how many times it was handed out: the attempt count
};

/// A stream and its consumer group. All calls go through one RedisClient, not thread-safe. The
/// task queue built on it (claims, verdicts, at-most-once) is redis_task_queue.h.
class RedisStreamQueue {
 public:
  RedisStreamQueue(RedisClient& client, std::string stream, std::string group);

  /// Creates the group (and the stream) when missing; false when it existed. The group starts at
  /// id 0, not "$": tasks added before the first worker came up are delivered, not skipped.
  bool ensure_group();
  /// Appends an entry; returns its id.
  std::string add(const std::vector<std::pair<std::string, std::string>>& fields);
  /// New entries (never delivered to anyone) for `consumer`, at most `count`, waiting up to
  /// `block_ms` for one (0: do not wait). Each returned entry is in `consumer`'s pending list until
  /// ack() or until another consumer reclaims it.
  std::vector<StreamEntry> read_group(const std::string& consumer, int64_t count, int64_t block_ms);
  /// Removes entries from the pending list; returns how many were pending.
  int64_t ack(const std::vector<std::string>& entry_ids);
  /// Entries pending for longer than `min_idle_ms` (their consumer died or stopped renewing) move
  /// to `consumer`, starting the scan at `cursor`; their delivery counts go up by one.
  AutoClaimed claim_stale(const std::string& consumer, int64_t min_idle_ms, int64_t count, const std::string& cursor = "0-0");
  [[nodiscard]] PendingSummary pending();
  /// Up to `count` pending entries, oldest first, optionally of one consumer only.
  [[nodiscard]] std::vector<PendingEntry> pending_entries(int64_t count, const std::string& consumer = "");
  /// Entries between two ids (XRANGE), whether pending, acknowledged or never delivered.
  [[nodiscard]] std::vector<StreamEntry> range(const std::string& from = "-", const std::string& to = "+", int64_t count = -1);

  [[nodiscard]] const std::string& stream() const noexcept { return m_stream; }
  [[nodiscard]] const std::string& group() const noexcept { return m_group; }

 private:
  RedisClient& m_client;
  std::string m_stream, m_group;
};

}  // namespace ptxbench

#include "service/redis_stream_queue.h"

#include <fmt/format.h>

#include <charconv>

namespace ptxbench {
namespace {

StreamEntry parse_entry(const RedisReply& r) {
  const auto& parts = r.as_array();
  if (parts.size() != 2) throw RedisConnectionError("stream entry is not [id, fields]: " + r.describe());
  StreamEntry e;
  e.id = parts[0].as_string();
  if (!parts[1].is_nil()) {  // nil: the entry was deleted (XDEL, trimming) while pending
    const auto& kv = parts[1].as_array();
    if (kv.size() % 2) throw RedisConnectionError("stream entry fields are not pairs: " + r.describe());
    for (std::size_t i = 0; i < kv.size(); i += 2) e.fields.emplace_back(kv[i].as_string(), kv[i + 1].as_string());
  }
  return e;
}

std::vector<StreamEntry> parse_entries(const RedisReply& r) {
  std::vector<StreamEntry> out;
  if (r.is_nil()) return out;
  for (const auto& e : r.as_array()) out.push_back(parse_entry(e));
  return out;
}

}  // namespace

std::optional<std::string> StreamEntry::field(const std::string& name) const {
  for (const auto& [k, v] : fields)
    if (k == name) return v;
  return std::nullopt;
}

RedisStreamQueue::RedisStreamQueue(RedisClient& client, std::string stream, std::string group)
    : m_client(client), m_stream(std::move(stream)), m_group(std::move(group)) {}

bool RedisStreamQueue::ensure_group() {
  try {
    m_client.command({"XGROUP", "CREATE", m_stream, m_group, "0", "MKSTREAM"});
    return true;
  } catch (const RedisError& e) {
    if (e.code() == "BUSYGROUP") return false;  // another service or worker created it first
    throw;
  }
}

std::string RedisStreamQueue::add(const std::vector<std::pair<std::string, std::string>>& fields) {
  if (fields.empty()) throw InputError("Redis", "a stream entry needs at least one field");
  std::vector<std::string> argv = {"XADD", m_stream, "*"};
  for (const auto& [k, v] : fields) {
    argv.push_back(k);
    argv.push_back(v);
  }
  return m_client.command(argv).as_string();
}

std::vector<StreamEntry> RedisStreamQueue::read_group(const std::string& consumer, int64_t count, int64_t block_ms) {
  std::vector<std::string> argv = {"XREADGROUP", "GROUP", m_group, consumer, "COUNT", std::to_string(count)};
  if (block_ms > 0) {
    argv.push_back("BLOCK");
    argv.push_back(std::to_string(block_ms));
  }
  argv.insert(argv.end(), {"STREAMS", m_stream, ">"});
  // The server answers after block_ms at the latest; the client waits that long plus its own timeout.
  double timeout = block_ms > 0 ? block_ms / 1000.0 + m_client.options().io_timeout_s : -1;
  RedisReply r = m_client.command(argv, timeout);
  if (r.is_nil()) return {};  // blocked and nothing came
  std::vector<StreamEntry> out;
  for (const auto& stream : r.as_array()) {  // [[stream, entries]]
    const auto& parts = stream.as_array();
    for (std::size_t i = 0; i + 1 < parts.size(); i += 2)
      for (auto& e : parse_entries(parts[i + 1])) out.push_back(std::move(e));
  }
  return out;
}

int64_t RedisStreamQueue::ack(const std::vector<std::string>& entry_ids) {
  if (entry_ids.empty()) return 0;
  std::vector<std::string> argv = {"XACK", m_stream, m_group};
  argv.insert(argv.end(), entry_ids.begin(), entry_ids.end());
  return m_client.command(argv).as_integer();
}

AutoClaimed RedisStreamQueue::claim_stale(const std::string& consumer, int64_t min_idle_ms, int64_t count,
                                          const std::string& cursor) {
  RedisReply r = m_client.command({"XAUTOCLAIM", m_stream, m_group, consumer, std::to_string(min_idle_ms), cursor,
                                   "COUNT", std::to_string(count)});
  const auto& parts = r.as_array();
  if (parts.size() < 2) throw RedisConnectionError("XAUTOCLAIM reply is not [cursor, entries, ...]: " + r.describe());
  AutoClaimed out;
  out.next_cursor = parts[0].as_string();
  out.entries = parse_entries(parts[1]);
  if (parts.size() > 2)  // Redis 7: ids of pending entries that no longer exist (removed from the list)
    for (const auto& id : parts[2].as_array()) out.deleted_ids.push_back(id.as_string());
  return out;
}

PendingSummary RedisStreamQueue::pending() {
  RedisReply r = m_client.command({"XPENDING", m_stream, m_group});
  const auto& parts = r.as_array();
  if (parts.size() != 4) throw RedisConnectionError("XPENDING reply is not [count, min, max, consumers]: " + r.describe());
  PendingSummary s;
  s.count = parts[0].as_integer();
  if (!parts[1].is_nil()) s.smallest_id = parts[1].as_string();
  if (!parts[2].is_nil()) s.largest_id = parts[2].as_string();
  if (!parts[3].is_nil())
    for (const auto& c : parts[3].as_array()) {
      const auto& pair = c.as_array();
      if (pair.size() != 2) throw RedisConnectionError("XPENDING consumer is not [name, count]: " + c.describe());
      // The count comes as a bulk string in RESP2.
      const auto& n = pair[1];
      int64_t pending = 0;
      if (n.type == RedisReply::Type::integer) {
        pending = n.integer;
      } else {
        const std::string& text = n.as_string();
        if (std::from_chars(text.data(), text.data() + text.size(), pending).ec != std::errc())
          throw RedisConnectionError("XPENDING consumer count is not a number: " + c.describe());
      }
      s.consumers[pair[0].as_string()] = pending;
    }
  return s;
}

std::vector<PendingEntry> RedisStreamQueue::pending_entries(int64_t count, const std::string& consumer) {
  std::vector<std::string> argv = {"XPENDING", m_stream, m_group, "-", "+", std::to_string(count)};
  if (!consumer.empty()) argv.push_back(consumer);
  std::vector<PendingEntry> out;
  RedisReply r = m_client.command(argv);  // named: a range-for over a temporary's member would dangle
  for (const auto& e : r.as_array()) {
    const auto& f = e.as_array();
    if (f.size() != 4) throw RedisConnectionError("XPENDING entry is not [id, consumer, idle, deliveries]: " + e.describe());
    out.push_back({f[0].as_string(), f[1].as_string(), f[2].as_integer(), f[3].as_integer()});
  }
  return out;
}

std::vector<StreamEntry> RedisStreamQueue::range(const std::string& from, const std::string& to, int64_t count) {
  std::vector<std::string> argv = {"XRANGE", m_stream, from, to};
  if (count >= 0) argv.insert(argv.end(), {"COUNT", std::to_string(count)});
  return parse_entries(m_client.command(argv));
}

}  // namespace ptxbench

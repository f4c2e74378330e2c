#include "service/redis_keys.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"

namespace ptxbench {

std::string redis_url_parameter(const std::string& url, const std::string& name) {
  auto q = url.find('?');
  if (q == std::string::npos) return "";
  std::string found;
  std::string rest = url.substr(q + 1);
  std::size_t at = 0;
  while (at <= rest.size()) {
    std::size_t amp = rest.find('&', at);
    std::string item = rest.substr(at, amp == std::string::npos ? std::string::npos : amp - at);
    if (!item.empty()) {
      auto eq = item.find('=');
      std::string k = item.substr(0, eq), v = eq == std::string::npos ? "" : item.substr(eq + 1);
      if (k != "prefix") throw InputError("Redis", "queue URL '" + url + "': unknown parameter '" + k + "' (known: prefix)");
      if (k == name) found = v;
    }
    if (amp == std::string::npos) break;
    at = amp + 1;
  }
  return found;
}

std::string redis_key_prefix(const QueueConfig& config) {
  std::string p = redis_url_parameter(config.location, "prefix");
  if (p.empty()) p = "ptxbench";
  if (!std::all_of(p.begin(), p.end(), [](unsigned char ch) { return std::isalnum(ch) || ch == '_' || ch == '-' || ch == '.'; }))
    throw InputError("Redis", "queue prefix '" + p + "' must be letters, digits, '_', '-' or '.'");
  return p;
}

std::string redis_host_name(const QueueConfig& config) {
  std::string host = config.host.empty() ? local_host_name() : config.host;
  if (host.find('/') != std::string::npos) throw InputError("queue", "host name '" + host + "' must not contain '/'");
  return host;
}

RedisOptions redis_connection_options(const QueueConfig& config) {
  RedisOptions o = parse_redis_url(config.location);
  if (!config.password_file.empty()) o.password = read_redis_password(config.password_file);
  return o;
}

std::map<std::string, std::string> redis_hash_pairs(const RedisReply& r) {
  std::map<std::string, std::string> out;
  const auto& a = r.as_array();
  for (std::size_t i = 0; i + 1 < a.size(); i += 2) out[a[i].as_string()] = a[i + 1].as_string();
  return out;
}

std::vector<RedisBeat> read_beats(RedisClient& client, const std::string& prefix, double default_gone_after) {
  std::vector<RedisBeat> out;
  for (auto& [who, json] : redis_hash_pairs(client.command({"HGETALL", prefix + ":beats"}))) {
    ordered_json b = ordered_json::parse(json, nullptr, false);
    if (b.is_discarded()) continue;
    out.push_back(
        {who, b.value("host", ""), b.value("device", -1), b.value("at", 0.0), b.value("gone_after", default_gone_after)});
  }
  return out;
}

std::map<std::string, RedisHealth> read_health(RedisClient& client, const std::string& prefix) {
  std::map<std::string, RedisHealth> out;
  for (auto& [gpu, json] : redis_hash_pairs(client.command({"HGETALL", prefix + ":health"}))) {
    ordered_json h = ordered_json::parse(json, nullptr, false);
    if (h.is_discarded()) continue;
    out[gpu] = {h.value("host", ""), h.value("device", -1),
                {h.value("state", ""), h.value("detail", ordered_json::object()), h.value("updated_at", 0.0)}};
  }
  return out;
}

}  // namespace ptxbench

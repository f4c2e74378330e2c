#include "service/redis_task_queue.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "service/redis_keys.h"

namespace ptxbench {
namespace {

std::string lua_buckets() {
  std::string bounds, labels;
  for (std::size_t i = 0; i < kEvaluationSecondsBuckets.size(); ++i) {
    bounds += fmt::format("{}{}", i ? "," : "", kEvaluationSecondsBuckets[i]);
    labels += fmt::format("{}'{}'", i ? "," : "", seconds_bucket_label(i));
  }
  return "local BOUNDS = {" + bounds + "}\nlocal LABELS = {" + labels + "}\n";
}

// Shared by every script: counters, the finishing and the re-queueing of a task.
const std::string& prelude() {
  static const std::string text = lua_buckets() + R"lua(
local P = ARGV[1]
local function counter(name, label, by) redis.call('HINCRBYFLOAT', P..':counters', name..'|'..label, by) end
local function move(from, to)
  redis.call('HINCRBY', P..':states', from, -1)
  redis.call('HINCRBY', P..':states', to, 1)
end
local function bucket(wall)
  for i, b in ipairs(BOUNDS) do if wall <= b then return LABELS[i] end end
  return '+Inf'
end
local function finish(id, tk, verdict, status, now, from, note)
  local t = redis.call('HMGET', tk, 'started_at', 'client', 'entry', 'arch')
  redis.call('HSET', tk, 'state', 'done', 'verdict', verdict, 'status', status, 'finished_at', now)
  if note then redis.call('HSET', tk, 'note', note) end
  redis.call('DEL', P..':claim:'..id)
  local stream = P..':tasks:'..t[4]
  redis.call('XACK', stream, t[4], t[3])
  redis.call('XDEL', stream, t[3])
  move(from, 'done')
  redis.call('HINCRBY', P..':active', t[2], -1)
  redis.call('HINCRBY', P..':status', status, 1)
  redis.call('ZADD', P..':done', now, id)
  local wall = tonumber(now) - tonumber(t[1] or now)
  if wall < 0 then wall = 0 end
  counter('evaluations', status, 1)
  counter('evaluation_seconds_bucket', bucket(wall), 1)
  counter('evaluation_seconds_sum', '', wall)
end
local function back(id, tk, note, now, cause)
  local t = redis.call('HMGET', tk, 'host', 'device')
  redis.call('HSET', tk, 'state', 'queued', 'note', note, 'avoid_host', t[1] or '', 'avoid_device', t[2] or '-1', 'requeued_at', now)
  redis.call('DEL', P..':claim:'..id)
  move('running', 'queued')
  counter('requeues', cause, 1)
end
local function current(id, tk, worker, attempt)
  local t = redis.call('HMGET', tk, 'state', 'attempts', 'worker')
  if t[1] ~= 'running' or t[2] ~= attempt or t[3] ~= worker then return false end
  local held = redis.call('GET', P..':claim:'..id)
  return held == false or held == worker..'|'..attempt
end
)lua";
  return text;
}

// ARGV: id, request, client_key, client, peer, max_queued, client_quota, now, the lane's stream name
// (the arch, or <arch>:check), lane.
constexpr const char* kEnqueue = R"lua(
local id, request, ckey, client = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if ckey ~= '' then
  local known = redis.call('GET', P..':key:'..ckey)
  if known then
    local stored = redis.call('HGET', P..':task:'..known, 'request')
    if stored and stored ~= request then return {'conflict', known} end
    if stored then counter('submissions', 'existing', 1) return {'existing', known} end
  end
end
if tonumber(ARGV[8]) > 0 then
  local mine = tonumber(redis.call('HGET', P..':active', client) or '0')
  if mine >= tonumber(ARGV[8]) then counter('submissions', 'over_quota', 1) return {'over_quota', tostring(mine)} end
end
if tonumber(ARGV[7]) > 0 then
  local queued = tonumber(redis.call('HGET', P..':states', 'queued') or '0')
  if queued >= tonumber(ARGV[7]) then counter('submissions', 'queue_full', 1) return {'queue_full', tostring(queued)} end
end
local entry = redis.call('XADD', P..':tasks:'..ARGV[10], '*', 'task', id)
redis.call('HSET', P..':task:'..id, 'request', request, 'state', 'queued', 'attempts', 0, 'client', client, 'peer', ARGV[6],
           'created_at', ARGV[9], 'client_key', ckey, 'entry', entry, 'arch', ARGV[10], 'lane', ARGV[11])
if ckey ~= '' then redis.call('SET', P..':key:'..ckey, id) end
redis.call('HINCRBY', P..':states', 'queued', 1)
redis.call('HINCRBY', P..':active', client, 1)
counter('submissions', 'accepted', 1)
return {'accepted', id})lua";

// ARGV: entry, consumer, host, device, now, lease_ms, avoid_window_s, other_host_ok, other_device_ok,
// max_attempts, the lanes' stream names (space-separated, in the order tried), gave_up_verdict. An
// entry belongs to the first lane. An empty entry: the pending entries of each lane (handed back,
// or held by a worker whose lease may have passed), oldest first, tried in this one call (a poll
// costs one round trip however many tasks are running); {'none'} when none could be claimed.
constexpr const char* kClaim = R"lua(
local consumer, host, device, now = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local lanes = {}
for name in string.gmatch(ARGV[12], '%S+') do lanes[#lanes + 1] = name end
local stream, group
local fields = {'state', 'attempts', 'avoid_host', 'avoid_device', 'requeued_at', 'entry'}
local function try(entry)
  local e = redis.call('XRANGE', stream, entry, entry)
  if #e == 0 then redis.call('XACK', stream, group, entry) return {'gone'} end
  local id = e[1][2][2]
  local tk = P..':task:'..id
  local t = redis.call('HMGET', tk, unpack(fields))
  if not t[1] or t[1] == 'done' or t[6] ~= entry then
    redis.call('XACK', stream, group, entry)
    redis.call('XDEL', stream, entry)
    return {'gone'}
  end
  if t[1] == 'running' then
    if redis.call('EXISTS', P..':claim:'..id) == 1 then return {'held'} end
    back(id, tk, 'lease expired (worker lost)', now, 'lease_expired')
    t = redis.call('HMGET', tk, unpack(fields))
  end
  local attempts = tonumber(t[2] or '0')
  if attempts >= tonumber(ARGV[11]) then
    finish(id, tk, ARGV[13], 'INFRA_ERROR', now, 'queued', false)
    return {'gave_up', id}
  end
  if t[3] == host and tonumber(now) - tonumber(t[5] or '0') < tonumber(ARGV[8]) then
    if (t[4] == device and (ARGV[9] == '1' or ARGV[10] == '1')) or (t[4] ~= device and ARGV[9] == '1') then return {'avoid'} end
  end
  redis.call('XCLAIM', stream, group, consumer, 0, entry, 'JUSTID')
  attempts = attempts + 1
  redis.call('SET', P..':claim:'..id, consumer..'|'..attempts, 'PX', ARGV[7])
  redis.call('HSET', tk, 'state', 'running', 'attempts', attempts, 'worker', consumer, 'host', host, 'device', device, 'started_at', now)
  move('queued', 'running')
  return {'claimed', id, redis.call('HGETALL', tk)}
end
for i, lane in ipairs(lanes) do
  stream, group = P..':tasks:'..lane, lane
  if ARGV[2] ~= '' then return try(ARGV[2]) end
  for _, p in ipairs(redis.call('XPENDING', stream, group, '-', '+', 100)) do
    local r = try(p[1])
    if r[1] == 'claimed' then return r end
  end
end
return {'none'})lua";

// ARGV: id, worker, attempt, the gpu lane's stream name. A check-lane task moves to the gpu
// lane's stream, queued, its attempts counted afresh.
constexpr const char* kPassOn = R"lua(
local id, tk = ARGV[2], P..':task:'..ARGV[2]
if not current(id, tk, ARGV[3], ARGV[4]) then return 0 end
local t = redis.call('HMGET', tk, 'entry', 'arch', 'lane')
if t[3] ~= 'check' then return 0 end
local from = P..':tasks:'..t[2]
redis.call('XACK', from, t[2], t[1])
redis.call('XDEL', from, t[1])
local entry = redis.call('XADD', P..':tasks:'..ARGV[5], '*', 'task', id)
redis.call('HSET', tk, 'state', 'queued', 'lane', 'gpu', 'arch', ARGV[5], 'entry', entry, 'attempts', 0, 'worker', '',
           'note', 'compile stage passed')
redis.call('DEL', P..':claim:'..id)
move('running', 'queued')
return 1)lua";

// ARGV: id, worker, attempt, lease_ms.
constexpr const char* kHeartbeat = R"lua(
local id, tk = ARGV[2], P..':task:'..ARGV[2]
if not current(id, tk, ARGV[3], ARGV[4]) then return 0 end
redis.call('SET', P..':claim:'..id, ARGV[3]..'|'..ARGV[4], 'PX', ARGV[5])
local t = redis.call('HMGET', tk, 'entry', 'arch')
redis.call('XCLAIM', P..':tasks:'..t[2], t[2], ARGV[3], 0, t[1], 'JUSTID')
return 1)lua";

// ARGV: id, worker, attempt, verdict, status, now.
constexpr const char* kComplete = R"lua(
local id, tk = ARGV[2], P..':task:'..ARGV[2]
if not current(id, tk, ARGV[3], ARGV[4]) then return 0 end
finish(id, tk, ARGV[5], ARGV[6], ARGV[7], 'running', false)
return 1)lua";

// ARGV: id, worker, attempt, reason, now.
constexpr const char* kRequeue = R"lua(
local id, tk = ARGV[2], P..':task:'..ARGV[2]
if not current(id, tk, ARGV[3], ARGV[4]) then return 0 end
back(id, tk, ARGV[5], ARGV[6], 'infra_error')
return 1)lua";

// One pending entry: ARGV: entry, the lane's stream name, mode (expired | worker), worker, reason, now, max_attempts,
// gave_up_verdict. "expired": back to the queue when running without a claim (its lease passed);
// "worker": back to the queue (or given up) when running under `worker`.
constexpr const char* kRecover = R"lua(
local e = redis.call('XRANGE', P..':tasks:'..ARGV[3], ARGV[2], ARGV[2])
if #e == 0 then return 0 end
local id = e[1][2][2]
local tk = P..':task:'..id
local t = redis.call('HMGET', tk, 'state', 'attempts', 'worker')
if t[1] ~= 'running' then return 0 end
if ARGV[4] == 'expired' then
  if redis.call('EXISTS', P..':claim:'..id) == 1 then return 0 end
  back(id, tk, ARGV[6], ARGV[7], 'lease_expired')
  return 1
end
if t[3] ~= ARGV[5] then return 0 end
if tonumber(t[2]) >= tonumber(ARGV[8]) then
  finish(id, tk, ARGV[9], 'INFRA_ERROR', ARGV[7], 'running', ARGV[6])
else
  back(id, tk, ARGV[6], ARGV[7], 'worker_lost')
end
return 1)lua";

// ARGV: cutoff, limit.
constexpr const char* kExpire = R"lua(
local ids = redis.call('ZRANGEBYSCORE', P..':done', '-inf', ARGV[2], 'LIMIT', 0, ARGV[3])
for _, id in ipairs(ids) do
  local tk = P..':task:'..id
  local t = redis.call('HMGET', tk, 'status', 'client_key')
  if t[1] then
    redis.call('HINCRBY', P..':status', t[1], -1)
    redis.call('HINCRBY', P..':states', 'done', -1)
  end
  if t[2] and t[2] ~= '' and redis.call('GET', P..':key:'..t[2]) == id then redis.call('DEL', P..':key:'..t[2]) end
  redis.call('DEL', tk)
  redis.call('ZREM', P..':done', id)
end
return #ids)lua";

std::string seconds_text(double t) { return fmt::format("{:.6f}", t); }
int64_t lease_ms(double lease_s) { return std::max<int64_t>(1, static_cast<int64_t>(lease_s * 1000.0)); }

double number(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  if (it == m.end() || it->second.empty()) return 0;
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    throw RedisConnectionError("task field " + k + " is not a number: '" + it->second + "'");
  }
}

std::string text(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? "" : it->second;
}

TaskRecord task_from_hash(const std::string& id, const std::map<std::string, std::string>& h) {
  TaskRecord t;
  t.id = id;
  t.state = parse_task_state(text(h, "state"));
  t.request = ordered_json::parse(text(h, "request"));
  t.verdict = read_stored_verdict(id, text(h, "verdict"));
  if (t.verdict) t.status = t.verdict->status;
  t.attempts = static_cast<int64_t>(number(h, "attempts"));
  t.worker = text(h, "worker");
  t.note = text(h, "note");
  t.client = text(h, "client");
  t.peer = text(h, "peer");
  t.lane = parse_task_lane(text(h, "lane"));
  t.created_at = number(h, "created_at");
  t.started_at = number(h, "started_at");
  t.finished_at = number(h, "finished_at");
  return t;
}

// The verdict of a task given up after `attempts` claims, as the scripts store it.
std::string gave_up_verdict(const std::string& why, int64_t attempts) {
  return infra_verdict(why + "; gave up after " + std::to_string(attempts) + " attempts").to_json().dump();
}

}  // namespace

RedisTaskQueue::RedisTaskQueue(const QueueConfig& config)
    : m_config(config),
      m_prefix(redis_key_prefix(config)),
      m_host(redis_host_name(config)),
      m_client(redis_connection_options(config)),
      m_stream(m_client, m_prefix + ":tasks:" + config.arch, config.arch),
      m_check_stream(m_client, m_prefix + ":tasks:" + config.arch + ":check", config.arch + ":check") {
  if (m_config.arch.empty() || m_config.arch.find_first_of(": /") != std::string::npos)
    throw InputError("queue", "GPU arch '" + m_config.arch + "' is not a plain name like sm_90a");
  m_stream.ensure_group();
  m_check_stream.ensure_group();
}

RedisReply RedisTaskQueue::script(const char* body, const std::vector<std::string>& args) {
  std::string& sha = m_script_sha[body];
  auto run = [&] {
    if (sha.empty()) sha = m_client.command({"SCRIPT", "LOAD", prelude() + body}).as_string();
    std::vector<std::string> argv = {"EVALSHA", sha, "0", m_prefix};
    argv.insert(argv.end(), args.begin(), args.end());
    return m_client.command(argv);
  };
  try {
    return run();
  } catch (const RedisError& e) {
    if (e.code() != "NOSCRIPT") throw;
    sha.clear();  // a restarted Redis forgot its scripts: load it again
    return run();
  }
}

std::string RedisTaskQueue::consumer(const std::string& worker) const {
  return worker.find('/') == std::string::npos ? m_host + "/" + worker : worker;
}

Enqueued RedisTaskQueue::enqueue_once(const ordered_json& request, const std::string& client_key, const Submitter& submitter,
                                      const AdmissionLimits& limits, TaskLane lane) {
  RedisReply r = script(kEnqueue, {new_task_id(), request.dump(), client_key, submitter.client, submitter.peer,
                                   std::to_string(limits.max_queued), std::to_string(limits.client_quota), seconds_text(now()),
                                   stream(lane).group(), to_string(lane)});
  const auto& a = r.as_array();
  const std::string& outcome = a.at(0).as_string();
  const std::string& value = a.at(1).as_string();
  if (outcome == "conflict")
    throw InputError("queue", "idempotency key '" + client_key + "' was already used for a different request");
  if (outcome == "existing") return {value, Admission::existing};
  if (outcome == "over_quota") return {"", Admission::over_quota, std::stoll(value)};
  if (outcome == "queue_full") return {"", Admission::queue_full, std::stoll(value)};
  return {value, Admission::accepted};
}

void RedisTaskQueue::beat(const std::string& who, int device) {
  auto t = std::chrono::steady_clock::now();
  auto it = m_last_beat.find(who);
  if (it != m_last_beat.end() && t - it->second < std::chrono::seconds(1)) return;
  // Each worker says when it should count as gone: its own lease, not the reader's.
  ordered_json b = {{"host", m_host}, {"worker", who}, {"device", device}, {"at", now()}, {"gone_after", m_config.gone_after_s}};
  m_client.command({"HSET", m_prefix + ":beats", who, b.dump()});
  m_last_beat[who] = t;
}

std::pair<bool, bool> RedisTaskQueue::elsewhere_healthy(int device) {
  double t = now();
  std::map<std::string, double> alive;       // "host/device" -> latest sign of life
  std::map<std::string, double> gone_after;  // "host/device" -> its workers' lease
  for (const auto& b : read_beats(m_client, m_prefix, m_config.gone_after_s)) {
    std::string gpu = b.host + "/" + std::to_string(b.device);
    alive[gpu] = std::max(alive[gpu], b.at);
    gone_after[gpu] = gone_after.count(gpu) ? std::max(gone_after[gpu], b.gone_after) : b.gone_after;
  }
  bool other_host = false, other_device = false;
  for (const auto& [gpu, h] : read_health(m_client, m_prefix)) {
    if (h.record.state != "healthy") continue;
    double last = std::max(alive[gpu], h.record.updated_at);
    auto limit = gone_after.find(gpu);
    if (t - last > (limit != gone_after.end() ? limit->second : m_config.gone_after_s)) continue;
    if (h.host != m_host) other_host = true;
    else if (h.device != device) other_device = true;
  }
  return {other_host, other_device};
}

std::optional<Claim> RedisTaskQueue::try_claim(const std::string& lanes, const std::string& entry, const std::string& who,
                                               double lease_s, int device, double avoid_window_s, std::pair<bool, bool> elsewhere) {
  auto [other_host, other_device] = elsewhere;
  const std::string lost = "its workers were lost " + std::to_string(m_config.max_attempts) + " times (killed, or their host gone)";
  const std::string gave_up = gave_up_verdict(lost, m_config.max_attempts);
  RedisReply r = script(kClaim, {entry, who, m_host, std::to_string(device), seconds_text(now()),
                                 std::to_string(lease_ms(lease_s)), seconds_text(avoid_window_s), other_host ? "1" : "0",
                                 other_device ? "1" : "0", std::to_string(m_config.max_attempts), lanes, gave_up});
  const auto& a = r.as_array();
  if (a.at(0).as_string() != "claimed") return std::nullopt;
  TaskRecord t = task_from_hash(a.at(1).as_string(), redis_hash_pairs(a.at(2)));
  return Claim{t, who, t.attempts, device};
}

std::optional<Claim> RedisTaskQueue::claim(const std::string& worker, double lease_s, int device, double avoid_window_s,
                                           TaskLane lane) {
  const std::string who = consumer(worker);
  beat(who, device);
  auto elsewhere = avoid_window_s > 0 ? elsewhere_healthy(device) : std::pair<bool, bool>{false, false};
  // A gpu-lane claimer takes its own lane first, then the check lane; a check worker only its own.
  const std::vector<TaskLane> order = lane == TaskLane::check ? std::vector{TaskLane::check} : std::vector{TaskLane::gpu, TaskLane::check};
  // Tasks handed back (an infrastructure error, a lost worker) or whose lease passed: oldest first,
  // every lane in one script call (an empty entry).
  std::string lanes;
  for (TaskLane l : order) lanes += (lanes.empty() ? "" : " ") + stream(l).group();
  if (auto c = try_claim(lanes, "", who, lease_s, device, avoid_window_s, elsewhere)) return c;
  for (TaskLane from : order) {
    RedisStreamQueue& s = stream(from);
    std::vector<StreamEntry> fresh;
    try {
      fresh = s.read_group(who, 1, 0);
    } catch (const RedisError& e) {
      if (e.code() != "NOGROUP") throw;
      s.ensure_group();  // a Redis that lost its data (no AOF): start the group again
      fresh = s.read_group(who, 1, 0);
    }
    for (const auto& e : fresh)
      if (auto c = try_claim(s.group(), e.id, who, lease_s, device, avoid_window_s, elsewhere)) return c;
  }
  return std::nullopt;
}

bool RedisTaskQueue::pass_on(const Claim& c) {
  return script(kPassOn, {c.task.id, c.worker, std::to_string(c.token), m_stream.group()}).as_integer() == 1;
}

bool RedisTaskQueue::heartbeat(const Claim& c, double lease_s) {
  beat(c.worker, c.device);
  return script(kHeartbeat, {c.task.id, c.worker, std::to_string(c.token), std::to_string(lease_ms(lease_s))}).as_integer() == 1;
}

bool RedisTaskQueue::complete(const Claim& c, const Verdict& verdict) {
  return script(kComplete, {c.task.id, c.worker, std::to_string(c.token), verdict.to_json().dump(), to_string(verdict.status),
                            seconds_text(now())})
             .as_integer() == 1;
}

bool RedisTaskQueue::requeue(const Claim& c, const std::string& reason, int64_t max_attempts, const Verdict& final_verdict) {
  if (c.token >= max_attempts) return complete(c, final_verdict);
  return script(kRequeue, {c.task.id, c.worker, std::to_string(c.token), reason, seconds_text(now())}).as_integer() == 1;
}

int64_t RedisTaskQueue::recover_expired() {
  int64_t n = 0;
  for (TaskLane lane : {TaskLane::gpu, TaskLane::check})
    for (const auto& p : stream(lane).pending_entries(1000))
      n += script(kRecover, {p.id, stream(lane).group(), "expired", "", "lease expired (worker lost)", seconds_text(now()), "0", ""})
               .as_integer();
  return n;
}

int64_t RedisTaskQueue::recover_all_running(const std::string&) { return 0; }

int64_t RedisTaskQueue::recover_worker(const std::string& worker, const std::string& reason, int64_t max_attempts) {
  const std::string who = consumer(worker);
  const std::string gave_up = gave_up_verdict(reason, max_attempts);
  int64_t n = 0;
  for (TaskLane lane : {TaskLane::gpu, TaskLane::check})
    for (const auto& p : stream(lane).pending_entries(1000, who))
      n += script(kRecover, {p.id, stream(lane).group(), "worker", who, reason, seconds_text(now()), std::to_string(max_attempts),
                             gave_up})
               .as_integer();
  return n;
}

QueueCounters RedisTaskQueue::counters() {
  QueueCounters c;
  for (auto& [key, value_text] : redis_hash_pairs(m_client.command({"HGETALL", m_prefix + ":counters"}))) {
    auto bar = key.find('|');
    if (bar == std::string::npos) continue;
    add_counter_value(c, key.substr(0, bar), key.substr(bar + 1), std::stod(value_text));
  }
  return c;
}

std::optional<TaskRecord> RedisTaskQueue::get(const std::string& id) {
  auto h = redis_hash_pairs(m_client.command({"HGETALL", m_prefix + ":task:" + id}));
  if (h.empty() || !h.count("request")) return std::nullopt;
  return task_from_hash(id, h);
}

std::map<std::string, int64_t> RedisTaskQueue::state_counts() {
  std::map<std::string, int64_t> out = {{"queued", 0}, {"running", 0}, {"done", 0}};
  for (auto& [state, n] : redis_hash_pairs(m_client.command({"HGETALL", m_prefix + ":states"}))) out[state] = std::stoll(n);
  return out;
}

std::map<std::string, int64_t> RedisTaskQueue::status_counts() {
  std::map<std::string, int64_t> out;
  for (auto& [status, n] : redis_hash_pairs(m_client.command({"HGETALL", m_prefix + ":status"})))
    if (std::stoll(n) > 0) out[status] = std::stoll(n);
  return out;
}

int64_t RedisTaskQueue::expire_finished(double seconds) {
  constexpr int64_t kBatch = 500;
  int64_t total = 0;
  for (;;) {
    int64_t n = script(kExpire, {seconds_text(now() - seconds), std::to_string(kBatch)}).as_integer();
    total += n;
    if (n < kBatch) return total;
  }
}

}  // namespace ptxbench

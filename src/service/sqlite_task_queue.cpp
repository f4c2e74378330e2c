#include "service/sqlite_task_queue.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "service/sqlite_host_registry.h"

namespace ptxbench {
namespace {

// 2: tasks.client_key (idempotent submission); 3: tasks.device, avoid_device, requeued_at (a task
// re-queued after a failure on a GPU goes to another GPU first); 4: tasks.client, peer (who
// submitted it; quotas count by client) and the counters table (cumulative metrics); 5: tasks.lane
// (the check lane: compile-stage verdicts without a GPU worker).
constexpr int kSchemaVersion = 5;

using namespace queue_counter;

const char* kColumns =
    "id, state, request, verdict, status, attempts, worker, note, created_at, started_at, finished_at, client, peer, lane";

TaskRecord read_row(SqliteStatement& st) {
  TaskRecord t;
  t.id = st.text(0);
  t.state = parse_task_state(st.text(1));
  t.request = ordered_json::parse(st.text(2));
  t.verdict = read_stored_verdict(t.id, st.optional_text(3).value_or(""));
  if (t.verdict) t.status = t.verdict->status;
  t.attempts = st.integer(5);
  t.worker = st.text(6);
  t.note = st.text(7);
  t.created_at = st.real(8);
  t.started_at = st.real(9);
  t.finished_at = st.real(10);
  t.client = st.text(11);
  t.peer = st.text(12);
  t.lane = parse_task_lane(st.text(13));
  return t;
}

}  // namespace

SqliteTaskQueue::SqliteTaskQueue(const std::string& path) : m_db(path) {
  SqliteTransaction tx(m_db);
  auto version = m_db.prepare("PRAGMA user_version");
  version.step();
  int64_t v = version.integer(0);
  if (v == 0) {
    m_db.exec(R"(CREATE TABLE IF NOT EXISTS tasks (
      id TEXT PRIMARY KEY, state TEXT NOT NULL, request TEXT NOT NULL, verdict TEXT, status TEXT NOT NULL DEFAULT '',
      attempts INTEGER NOT NULL DEFAULT 0, worker TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '',
      created_at REAL NOT NULL, started_at REAL NOT NULL DEFAULT 0, finished_at REAL NOT NULL DEFAULT 0,
      lease_until REAL NOT NULL DEFAULT 0, seq INTEGER NOT NULL))");
    m_db.exec("CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks(state, seq)");
    v = 1;
  }
  if (v == 1) {
    m_db.exec("ALTER TABLE tasks ADD COLUMN client_key TEXT");
    m_db.exec("CREATE UNIQUE INDEX IF NOT EXISTS tasks_by_client_key ON tasks(client_key) WHERE client_key IS NOT NULL");
    v = 2;
  }
  if (v == 2) {
    m_db.exec("ALTER TABLE tasks ADD COLUMN device INTEGER NOT NULL DEFAULT -1");
    m_db.exec("ALTER TABLE tasks ADD COLUMN avoid_device INTEGER");
    m_db.exec("ALTER TABLE tasks ADD COLUMN requeued_at REAL NOT NULL DEFAULT 0");
    v = 3;
  }
  if (v == 3) {
    m_db.exec("ALTER TABLE tasks ADD COLUMN client TEXT NOT NULL DEFAULT ''");
    m_db.exec("ALTER TABLE tasks ADD COLUMN peer TEXT NOT NULL DEFAULT ''");
    m_db.exec("CREATE INDEX IF NOT EXISTS tasks_by_client ON tasks(client, state)");
    m_db.exec("CREATE TABLE IF NOT EXISTS counters (name TEXT NOT NULL, label TEXT NOT NULL, value REAL NOT NULL, "
              "PRIMARY KEY (name, label))");
    // The counters start from the finished tasks the queue still holds, so an upgraded service's
    // totals do not drop to zero.
    auto done = m_db.prepare("SELECT status, finished_at - started_at FROM tasks WHERE state = 'done'");
    while (done.step()) count_finished(done.text(0), done.real(1));
    v = 4;
  }
  if (v == 4) {
    m_db.exec("ALTER TABLE tasks ADD COLUMN lane TEXT NOT NULL DEFAULT 'gpu'");
    m_db.exec("CREATE INDEX IF NOT EXISTS tasks_by_lane ON tasks(state, lane, seq)");
    v = 5;
    m_db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
  }
  if (v != kSchemaVersion)
    throw Error("queue", "database schema version " + std::to_string(v) + " is not " + std::to_string(kSchemaVersion) +
                             " (a queue written by a newer ptxbench?)");
  SqliteHostRegistry::create_tables(m_db);  // the claim's avoid window reads gpu_health
  tx.commit();
}

Enqueued SqliteTaskQueue::enqueue_once(const ordered_json& request, const std::string& client_key, const Submitter& submitter,
                                  const AdmissionLimits& limits, TaskLane lane) {
  SqliteTransaction tx(m_db);
  auto finish = [&](Enqueued e) {
    add_counter(kSubmissions, to_string(e.admission), 1);
    tx.commit();
    return e;
  };
  if (!client_key.empty()) {
    auto known = m_db.prepare("SELECT id, request FROM tasks WHERE client_key = ?");
    known.bind(1, client_key);
    if (known.step()) {
      if (ordered_json::parse(known.text(1)) != request)
        throw InputError("queue", "idempotency key '" + client_key + "' was already used for a different request");
      return finish({known.text(0), Admission::existing});
    }
  }
  if (limits.client_quota > 0) {
    auto mine = m_db.prepare("SELECT COUNT(*) FROM tasks WHERE client = ? AND state IN ('queued', 'running')");
    mine.bind(1, submitter.client);
    mine.step();
    if (mine.integer(0) >= limits.client_quota) return finish({"", Admission::over_quota, mine.integer(0)});
  }
  if (limits.max_queued > 0) {
    auto queued = m_db.prepare("SELECT COUNT(*) FROM tasks WHERE state = 'queued'");
    queued.step();
    if (queued.integer(0) >= limits.max_queued) return finish({"", Admission::queue_full, queued.integer(0)});
  }
  std::string id = new_task_id();
  auto seq = m_db.prepare("SELECT COALESCE(MAX(seq), 0) + 1 FROM tasks");
  seq.step();
  auto insert = m_db.prepare(
      "INSERT INTO tasks (id, state, request, created_at, seq, client_key, client, peer, lane) VALUES (?, 'queued', ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, id).bind(2, request.dump()).bind(3, now()).bind(4, seq.integer(0));
  if (client_key.empty()) insert.bind_null(5);
  else insert.bind(5, client_key);
  insert.bind(6, submitter.client).bind(7, submitter.peer).bind(8, to_string(lane));
  insert.run();
  return finish({id, Admission::accepted});
}

std::optional<Claim> SqliteTaskQueue::claim(const std::string& worker, double lease_s, int device, double avoid_window_s,
                                            TaskLane lane) {
  SqliteTransaction tx(m_db);
  double t_now = now();
  // A gpu-lane claimer takes its own lane first, then the check lane; a check worker only its own.
  auto pick = m_db.prepare(std::string("SELECT ") + kColumns +
                           " FROM tasks WHERE state = 'queued' AND (lane = ?3 OR ?3 = 'gpu') AND (avoid_device IS NULL OR "
                           "avoid_device != ?1 OR requeued_at <= ?2 OR NOT EXISTS (SELECT 1 FROM gpu_health WHERE device != ?1 "
                           "AND state = 'healthy')) ORDER BY lane = ?3 DESC, seq LIMIT 1");
  pick.bind(1, static_cast<int64_t>(device)).bind(2, t_now - avoid_window_s).bind(3, to_string(lane));
  if (!pick.step()) return std::nullopt;
  TaskRecord t = read_row(pick);
  m_db.prepare("UPDATE tasks SET state = 'running', attempts = attempts + 1, worker = ?, started_at = ?, lease_until = ?, "
               "device = ? WHERE id = ?")
      .bind_all(worker, t_now, t_now + lease_s, static_cast<int64_t>(device), t.id)
      .run();
  tx.commit();
  t.state = TaskState::running;
  t.attempts += 1;
  t.worker = worker;
  t.started_at = t_now;
  return Claim{t, worker, t.attempts, device};
}

bool SqliteTaskQueue::pass_on(const Claim& c) {
  m_db.prepare("UPDATE tasks SET state = 'queued', lane = 'gpu', attempts = 0, worker = '', note = 'compile stage passed', "
               "lease_until = 0 WHERE id = ? AND state = 'running' AND lane = 'check' AND worker = ? AND attempts = ?")
      .bind_all(c.task.id, c.worker, c.token)
      .run();
  return m_db.changes() == 1;
}

bool SqliteTaskQueue::heartbeat(const Claim& c, double lease_s) {
  m_db.prepare("UPDATE tasks SET lease_until = ? WHERE id = ? AND state = 'running' AND worker = ? AND attempts = ?")
      .bind_all(now() + lease_s, c.task.id, c.worker, c.token)
      .run();
  return m_db.changes() == 1;
}

bool SqliteTaskQueue::complete(const Claim& c, const Verdict& verdict) {
  SqliteTransaction tx(m_db);
  if (finish_where(verdict, std::nullopt, "id = ?5 AND worker = ?6 AND attempts = ?7",
                   [&](SqliteStatement& st) { st.bind(5, c.task.id).bind(6, c.worker).bind(7, c.token); }) != 1)
    return false;
  tx.commit();
  return true;
}

bool SqliteTaskQueue::requeue(const Claim& c, const std::string& reason, int64_t max_attempts, const Verdict& final_verdict) {
  if (c.token >= max_attempts) return complete(c, final_verdict);
  SqliteTransaction tx(m_db);
  if (send_back(reason, "id = ?3 AND worker = ?4 AND attempts = ?5",
                [&](SqliteStatement& st) { st.bind(3, c.task.id).bind(4, c.worker).bind(5, c.token); }) != 1)
    return false;
  add_counter(kRequeues, "infra_error", 1);
  tx.commit();
  return true;
}

int64_t SqliteTaskQueue::recover_expired() {
  SqliteTransaction tx(m_db);
  int64_t n = send_back("lease expired (worker lost)", "lease_until < ?2", [](SqliteStatement&) {});
  if (n > 0) add_counter(kRequeues, "lease_expired", static_cast<double>(n));
  tx.commit();
  return n;
}

int64_t SqliteTaskQueue::recover_all_running(const std::string& reason) {
  SqliteTransaction tx(m_db);
  m_db.prepare("UPDATE tasks SET state = 'queued', note = ? WHERE state = 'running'").bind(1, reason).run();
  int64_t n = m_db.changes();
  if (n > 0) add_counter(kRequeues, "service_restart", static_cast<double>(n));
  tx.commit();
  return n;
}

int64_t SqliteTaskQueue::recover_worker(const std::string& worker, const std::string& reason, int64_t max_attempts) {
  SqliteTransaction tx(m_db);
  const Verdict gave_up = infra_verdict(reason + "; gave up after " + std::to_string(max_attempts) + " attempts");
  int64_t finished = finish_where(gave_up, reason, "worker = ?5 AND attempts >= ?6",
                                  [&](SqliteStatement& st) { st.bind(5, worker).bind(6, max_attempts); });
  int64_t requeued = send_back(reason, "worker = ?3", [&](SqliteStatement& st) { st.bind(3, worker); });
  if (requeued > 0) add_counter(kRequeues, "worker_lost", static_cast<double>(requeued));
  tx.commit();
  return finished + requeued;
}

int64_t SqliteTaskQueue::send_back(const std::string& note, const std::string& where, const BindWhere& bind) {
  auto st = m_db.prepare("UPDATE tasks SET state = 'queued', note = ?1, lease_until = 0, avoid_device = device, requeued_at = ?2 "
                         "WHERE state = 'running' AND " + where);
  st.bind(1, note).bind(2, now());
  bind(st);
  st.run();
  return m_db.changes();
}

int64_t SqliteTaskQueue::finish_where(const Verdict& verdict, const std::optional<std::string>& note, const std::string& where,
                                      const BindWhere& bind) {
  const std::string status = to_string(verdict.status);
  const double t_now = now();
  auto started = m_db.prepare("SELECT started_at FROM tasks WHERE state = 'running' AND " + where);
  bind(started);
  std::vector<double> wall;
  while (started.step()) wall.push_back(t_now - started.real(0));
  auto st = m_db.prepare(
      "UPDATE tasks SET state = 'done', verdict = ?1, status = ?2, finished_at = ?3, note = COALESCE(?4, note) "
      "WHERE state = 'running' AND " + where);
  st.bind(1, verdict.to_json().dump()).bind(2, status).bind(3, t_now);
  if (note) st.bind(4, *note);
  else st.bind_null(4);
  bind(st);
  st.run();
  const int64_t n = m_db.changes();
  for (double w : wall) count_finished(status, w);
  return n;
}

void SqliteTaskQueue::add_counter(const std::string& name, const std::string& label, double by) {
  m_db.prepare("INSERT INTO counters (name, label, value) VALUES (?, ?, ?) "
               "ON CONFLICT(name, label) DO UPDATE SET value = value + excluded.value")
      .bind(1, name)
      .bind(2, label)
      .bind(3, by)
      .run();
}

void SqliteTaskQueue::count_finished(const std::string& status, double wall_s) {
  wall_s = std::max(0.0, wall_s);  // a task finished without a claim (never started) took no time
  add_counter(kEvaluations, status, 1);
  add_counter(kSecondsBucket, seconds_bucket_label(seconds_bucket(wall_s)), 1);
  add_counter(kSecondsSum, "", wall_s);
}

QueueCounters SqliteTaskQueue::counters() {
  QueueCounters c;
  auto st = m_db.prepare("SELECT name, label, value FROM counters");
  while (st.step()) add_counter_value(c, st.text(0), st.text(1), st.real(2));
  return c;
}

std::optional<TaskRecord> SqliteTaskQueue::get(const std::string& id) {
  auto st = m_db.prepare(std::string("SELECT ") + kColumns + " FROM tasks WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return read_row(st);
}

std::map<std::string, int64_t> SqliteTaskQueue::state_counts() {
  std::map<std::string, int64_t> out = {{"queued", 0}, {"running", 0}, {"done", 0}};
  auto st = m_db.prepare("SELECT state, COUNT(*) FROM tasks GROUP BY state");
  while (st.step()) out[st.text(0)] = st.integer(1);
  return out;
}

std::map<std::string, int64_t> SqliteTaskQueue::status_counts() {
  std::map<std::string, int64_t> out;
  auto st = m_db.prepare("SELECT status, COUNT(*) FROM tasks WHERE state = 'done' GROUP BY status");
  while (st.step()) out[st.text(0)] = st.integer(1);
  return out;
}

int64_t SqliteTaskQueue::expire_finished(double seconds) {
  m_db.prepare("DELETE FROM tasks WHERE state = 'done' AND finished_at < ?").bind(1, now() - seconds).run();
  return m_db.changes();
}

}  // namespace ptxbench

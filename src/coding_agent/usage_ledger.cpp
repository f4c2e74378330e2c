#include "coding_agent/usage_ledger.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "common/clock.h"
#include "common/enum_names.h"
#include "common/error.h"
#include "runs/run_store_schema.h"

namespace ptxbench::coding_agent {
namespace {

// One table beside RunStore's, created on first use: it only references trajectory ids, so a
// store that never saw a proxy is unchanged but for an empty table.
constexpr const char* kSchema = R"(CREATE TABLE IF NOT EXISTS agent_model_calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  trajectory_id INTEGER NOT NULL,
  api TEXT NOT NULL,
  model TEXT NOT NULL,
  stream INTEGER NOT NULL,
  status INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens INTEGER NOT NULL DEFAULT 0,
  cached_tokens INTEGER NOT NULL DEFAULT 0,
  usage_reported INTEGER NOT NULL DEFAULT 0,
  started_at REAL NOT NULL,
  finished_at REAL,
  latency_s REAL NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '',
  turn INTEGER
);
CREATE INDEX IF NOT EXISTS agent_model_calls_by_trajectory ON agent_model_calls(trajectory_id, turn);)";

constexpr const char* kColumns =
    "id, trajectory_id, api, model, stream, status, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, "
    "usage_reported, started_at, finished_at, latency_s, error, turn";

constexpr EnumName<WireApi> kApiNames[] = {
    {WireApi::chat_completions, "chat_completions"},
    {WireApi::responses, "responses"},
    {WireApi::anthropic_messages, "anthropic_messages"},
    {WireApi::other, "other"},
};

ModelCall read_call(const SqliteStatement& q) {
  ModelCall c;
  c.id = q.integer(0);
  c.trajectory_id = q.integer(1);
  c.api = find_enum(kApiNames, q.text(2)).value_or(WireApi::other);
  c.model = q.text(3);
  c.stream = q.integer(4) != 0;
  c.status = static_cast<int>(q.integer(5));
  c.usage.prompt_tokens = q.integer(6);
  c.usage.completion_tokens = q.integer(7);
  c.usage.reasoning_tokens = q.integer(8);
  c.usage.cached_tokens = q.integer(9);
  c.usage.reported = q.integer(10) != 0;
  c.started_at = q.real(11);
  c.finished_at = q.optional_real(12);
  c.latency_s = q.real(13);
  c.error = q.text(14);
  if (!q.is_null(15)) c.turn = q.integer(15);
  return c;
}

}  // namespace

std::string to_string(WireApi api) { return enum_name(kApiNames, api); }

CallUsage& CallUsage::operator+=(const CallUsage& o) {
  prompt_tokens += o.prompt_tokens;
  completion_tokens += o.completion_tokens;
  reasoning_tokens += o.reasoning_tokens;
  cached_tokens += o.cached_tokens;
  reported = reported || o.reported;
  return *this;
}

// The run store's schema first: a new file becomes a run store (a ledger table written first would
// make RunStore refuse it as another database), another kind of file is refused.
UsageLedger::UsageLedger(const std::string& store_path) : m_db(store_path) {
  m_db.open_store(run_store_schema());
  m_db.exec(kSchema);
}

int64_t UsageLedger::begin_call(int64_t trajectory_id, WireApi api, const std::string& model, bool stream) {
  std::lock_guard lock(m_mutex);
  m_db.prepare("INSERT INTO agent_model_calls (trajectory_id, api, model, stream, started_at) VALUES (?, ?, ?, ?, ?)")
      .bind_all(trajectory_id, to_string(api), model, int64_t{stream ? 1 : 0}, epoch_seconds())
      .run();
  return sqlite3_last_insert_rowid(m_db.handle());
}

void UsageLedger::finish_call(int64_t call_id, int status, const std::string& model, const CallUsage& usage,
                              const std::string& error) {
  std::lock_guard lock(m_mutex);
  const double now = epoch_seconds();
  m_db.prepare("UPDATE agent_model_calls SET status = ?, model = CASE WHEN ? <> '' THEN ? ELSE model END, "
               "prompt_tokens = ?, completion_tokens = ?, reasoning_tokens = ?, cached_tokens = ?, usage_reported = ?, "
               "finished_at = ?, latency_s = ? - started_at, error = ? WHERE id = ? AND finished_at IS NULL")
      .bind_all(int64_t{status}, model, model, usage.prompt_tokens, usage.completion_tokens, usage.reasoning_tokens,
          usage.cached_tokens, int64_t{usage.reported ? 1 : 0}, now, now, error, call_id)
      .run();
}

std::optional<ModelUsage> UsageLedger::take(int64_t trajectory_id, int64_t turn, double grace_s) {
  const double asked_at = epoch_seconds();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  for (;;) {
    bool waiting = false;
    {
      std::lock_guard lock(m_mutex);
      auto q = m_db.prepare("SELECT COUNT(*) FROM agent_model_calls WHERE trajectory_id = ? AND turn IS NULL AND "
                            "finished_at IS NULL AND started_at <= ?");
      q.bind(1, trajectory_id).bind(2, asked_at);
      waiting = q.step() && q.integer(0) > 0;
    }
    if (!waiting || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  std::vector<ModelCall> taken;
  {
    auto q = m_db.prepare(std::string("SELECT ") + kColumns +
                          " FROM agent_model_calls WHERE trajectory_id = ? AND turn IS NULL AND finished_at IS NOT NULL "
                          "ORDER BY id");
    q.bind(1, trajectory_id);
    while (q.step()) taken.push_back(read_call(q));
  }
  if (taken.empty()) return std::nullopt;
  m_db.prepare("UPDATE agent_model_calls SET turn = ? WHERE trajectory_id = ? AND turn IS NULL AND finished_at IS NOT NULL "
               "AND id <= ?")
      .bind(1, turn)
      .bind(2, trajectory_id)
      .bind(3, taken.back().id)
      .run();
  tx.commit();
  ModelUsage u;
  u.attempts = static_cast<int64_t>(taken.size());
  for (const ModelCall& c : taken) {
    u.prompt_tokens += c.usage.prompt_tokens;
    u.completion_tokens += c.usage.completion_tokens;
    u.reasoning_tokens += c.usage.reasoning_tokens;
    u.cached_tokens += c.usage.cached_tokens;
    u.latency_s += c.latency_s;
  }
  u.provider = "agent:" + to_string(taken.back().api);
  u.model = taken.back().model;
  u.finish_reason = "tool_call";
  return u;
}

std::vector<ModelCall> UsageLedger::calls(int64_t trajectory_id) const {
  std::lock_guard lock(m_mutex);
  std::vector<ModelCall> out;
  auto q = m_db.prepare(std::string("SELECT ") + kColumns + " FROM agent_model_calls WHERE trajectory_id = ? ORDER BY id");
  q.bind(1, trajectory_id);
  while (q.step()) out.push_back(read_call(q));
  return out;
}

UsageLedger::Unattributed UsageLedger::unattributed(int64_t trajectory_id) const {
  Unattributed u;
  for (const ModelCall& c : calls(trajectory_id)) {
    if (c.turn || c.in_flight()) continue;
    u.usage += c.usage;
    ++u.calls;
  }
  return u;
}

mcp::UsageHook ledger_usage_hook(const std::string& store_path, double grace_s) {
  // Opened on first use: a session that never evaluates leaves the store file as it found it.
  auto ledger = std::make_shared<std::unique_ptr<UsageLedger>>();
  auto mutex = std::make_shared<std::mutex>();
  return [store_path, grace_s, ledger, mutex](const mcp::TurnContext& context) {
    try {
      std::lock_guard lock(*mutex);
      if (!*ledger) *ledger = std::make_unique<UsageLedger>(store_path);
      if (auto taken = (*ledger)->take(context.trajectory_id, context.turn, grace_s)) return *taken;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[mcp] the agent's model calls could not be read from the usage ledger: %s\n", e.what());
    }
    return mcp::zero_usage(context);
  };
}

}  // namespace ptxbench::coding_agent

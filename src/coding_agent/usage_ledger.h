// The model calls of external coding agents, as `ptxbench proxy` saw them (issue 20): one row per
// call in a table of the run store's file, keyed by trajectory, and the bridge that hands the
// tokens spent since the previous evaluation to the MCP session's turn (mcp::UsageHook), so the
// stored turns carry the agent's tokens as our own agent's turns carry its model's.
// docs/coding_agents.md, "Token accounting".
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runs/run_store.h"
#include "common/sqlite_db.h"
#include "mcp/trajectory_session.h"

namespace ptxbench::coding_agent {

/// The wire format of a call, as the proxy routed it.
enum class WireApi { chat_completions, responses, anthropic_messages, other };
std::string to_string(WireApi api);

/// Tokens of one call, in our convention (ModelUsage): prompt_tokens counts every input token,
/// cached ones included; completion_tokens counts every output token, reasoning included.
struct CallUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t reasoning_tokens = 0;
  int64_t cached_tokens = 0;
  bool reported = false;  ///< the provider's answer carried usage; false: all zeros, not measured

  CallUsage& operator+=(const CallUsage& o);
};

/// One model call through the proxy.
struct ModelCall {
  int64_t id = 0;
  int64_t trajectory_id = 0;  ///< 0: the call named no trajectory (the proxy's bare /v1 routes)
  WireApi api = WireApi::other;
  std::string model;          ///< the model the answer named, else the one asked for
  bool stream = false;
  int status = 0;             ///< the upstream's HTTP status; 0 while in flight or when none came
  CallUsage usage;
  double started_at = 0.0;    ///< Unix seconds
  std::optional<double> finished_at;
  double latency_s = 0.0;
  std::string error;          ///< why no answer came (connection, client gone), or ""
  std::optional<int64_t> turn;  ///< the evaluation turn it was attributed to, once taken

  [[nodiscard]] bool in_flight() const { return !finished_at.has_value(); }
};

/// Thread- and process-safe (SQLite WAL with a busy timeout): the proxy writes, `ptxbench mcp`
/// processes take, `ptxbench agent run` and reports read. The table lives in the run store's file
/// beside RunStore's tables, which it does not touch.
class UsageLedger {
 public:
  /// Opens the run store file (creating it as RunStore does; StoreError for a file of another
  /// kind), creating the ledger's table when absent.
  explicit UsageLedger(const std::string& store_path);
  UsageLedger(const UsageLedger&) = delete;
  UsageLedger& operator=(const UsageLedger&) = delete;

  /// A call begins: stored in flight, so an evaluation that races with its answer waits for it.
  int64_t begin_call(int64_t trajectory_id, WireApi api, const std::string& model, bool stream);
  /// The call ended (answered, failed or abandoned): its status, usage and error.
  void finish_call(int64_t call_id, int status, const std::string& model, const CallUsage& usage,
                   const std::string& error = "");

  /// Attributes to `turn` every finished call of the trajectory not yet attributed, and returns
  /// their sum as the turn's usage (attempts = calls, latency = their summed latency, provider
  /// "agent:<api>", model the last call's). Calls that began before this one and are still in
  /// flight are waited for, up to `grace_s` (an agent may start an evaluation the moment the
  /// tool call's bytes arrive, before the proxy has seen the usage that ends the stream); later
  /// ones go to the next turn. nullopt when there is nothing to attribute.
  std::optional<ModelUsage> take(int64_t trajectory_id, int64_t turn, double grace_s = 5.0);

  [[nodiscard]] std::vector<ModelCall> calls(int64_t trajectory_id) const;
  /// Finished calls of the trajectory that no turn took (the agent's words after its last
  /// evaluation): their summed usage and count.
  struct Unattributed {
    CallUsage usage;
    int64_t calls = 0;
  };
  [[nodiscard]] Unattributed unattributed(int64_t trajectory_id) const;

 private:
  mutable std::mutex m_mutex;
  mutable SqliteDb m_db;
};

/// The usage hook of an MCP session whose agent talks to its model through `ptxbench proxy`
/// writing into the ledger of `store_path`: each evaluation's turn gets the tokens the agent spent
/// since the previous one. With no call recorded (no proxy in front of the agent) it records what
/// mcp::zero_usage records. Never throws: a ledger it cannot read is logged and counted as none.
mcp::UsageHook ledger_usage_hook(const std::string& store_path, double grace_s = 5.0);

}  // namespace ptxbench::coding_agent

// One MCP session's trajectory in the run store (docs/design.md §10): the session is bound to one
// trajectory (definition, default workload, prompt tag, index) of a run whose policy is
// "mcp-agent", with a budget of evaluation requests per trajectory (default 8). Each evaluation is
// stored as a turn through the same RunStore steps as our own agent's turns (turn_loop.cpp), so
// `ptxbench report` reads agent runs as it reads ours. docs/mcp.md.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "runs/run_store.h"
#include "definitions/catalog.h"
#include "prompt/prompt_builder.h"
#include "service/service_client.h"

namespace ptxbench::mcp {

inline constexpr int kDefaultBudget = 8;
/// The run config's "policy" of runs whose turns an external agent submitted through MCP.
inline constexpr const char* kMcpPolicy = "mcp-agent";
/// The stop reason when the client ended the session (stdin closed) with budget left; a server
/// started again on the trajectory reopens it and counts on from the stored turns.
inline constexpr const char* kEndedReason = "agent ended the session";
/// "request budget of N evaluations used": the stop reason stored with the turn that spent it.
std::string budget_reason(int budget);

/// What a turn's usage row records. Issue 20 item 2 (a model proxy between the agent and its
/// provider) will return the tokens the agent spent since its previous evaluation; until then the
/// default hook records zeros with provider "mcp" and the client's name as the model.
struct TurnContext {
  int64_t trajectory_id = 0;
  int64_t turn = 0;
  std::string client;  ///< clientInfo "name version" from initialize, or "" before it
};
using UsageHook = std::function<ModelUsage(const TurnContext&)>;
ModelUsage zero_usage(const TurnContext& context);

struct SessionConfig {
  std::string run_id;  ///< empty: create a run (policy mcp-agent) for this session
  std::string definition;
  std::string tag;     ///< empty: the prompt builder's default tag (the last of its default tags)
  int64_t index = 0;
  /// Evaluations per trajectory. A new run stores it as num_turns (default kDefaultBudget); an
  /// existing run has its own, and a different value here is an InputError.
  std::optional<int> budget;
  /// The prompt target, an arch (sm_90a, sm_100a) or a GPU (h100, h200, b200): a new run's; an
  /// existing run keeps the one it stored.
  std::string arch = "sm_90a";
  std::string model = kMcpPolicy;  ///< a new run's model label (the report's Model column)
  std::string service;             ///< the service URL a new run records
  double eval_timeout_s = 3600;    ///< how long one evaluation may take, queue included
  double progress_interval_s = 5;  ///< how often `progress` is called while a verdict is awaited
  UsageHook usage_hook = zero_usage;
  std::function<void(const std::string&)> log;  ///< diagnostics; empty: stderr with "[mcp] "
};

/// The trajectory's evaluation budget is spent: nothing was submitted or stored.
class BudgetExhausted : public Error {
 public:
  explicit BudgetExhausted(int budget);
};

/// One stored evaluation.
struct EvaluationResult {
  int64_t turn = 0;
  Verdict verdict;
  std::string feedback;  ///< render_feedback(verdict): the text our agent's model would read
  int budget = 0;
  int used = 0;          ///< evaluations stored in the trajectory, this one included
  bool finished = false; ///< this evaluation spent the budget and ended the trajectory
  /// An earlier evaluation (an interrupted session's) completed before this one; "" when none.
  std::string note;
  [[nodiscard]] int remaining() const { return budget - used; }
};

/// Called while a verdict is awaited: seconds waited, the task's state (queued, running).
using ProgressFn = std::function<void(double waited_s, const std::string& state)>;

/// Thread-safe: evaluations are serialized (the turn numbers and the budget are the trajectory's).
class TrajectorySession {
 public:
  /// Opens (or creates) the run and the trajectory, stores the opening messages (the prompt our
  /// agent gets) once, and reopens a trajectory that an earlier session ended with budget left.
  /// Throws InputError for an unknown definition or tag, a run that is not an MCP run, a budget
  /// that differs from the run's; RunStoreError for an unknown run.
  TrajectorySession(RunStore& store, const ServiceClient& service, const Catalog& catalog, const PromptBuilder& prompts,
                    SessionConfig config);
  TrajectorySession(const TrajectorySession&) = delete;
  TrajectorySession& operator=(const TrajectorySession&) = delete;

  [[nodiscard]] const std::string& run_id() const noexcept { return m_run_id; }
  [[nodiscard]] int64_t trajectory_id() const noexcept { return m_trajectory; }
  [[nodiscard]] const TrajectoryKey& key() const noexcept { return m_key; }
  /// What candidates are compiled for (sm_90a, sm_100a): the prompt target's arch.
  [[nodiscard]] const std::string& arch() const noexcept { return m_prompt.arch; }
  [[nodiscard]] int budget() const noexcept { return m_budget; }
  /// Evaluations stored in the trajectory (a turn still waiting for its verdict included).
  [[nodiscard]] int used() const;
  [[nodiscard]] int remaining() const { return m_budget - used(); }
  /// The trajectory's prompt: what get_task answers for the bound definition and tag.
  [[nodiscard]] const Prompt& prompt() const noexcept { return m_prompt; }
  void set_client(const std::string& name_and_version);

  /// Submits `source` to the service and stores it as the next turn with its verdict and feedback.
  /// An evaluation of an earlier session that is still waiting for its verdict is completed first.
  /// Throws BudgetExhausted when the budget is spent (nothing submitted, nothing stored);
  /// InputError when the service refuses the request; Error when the service cannot be reached
  /// (nothing stored) or the verdict does not come (the turn stays stored, waiting: the next
  /// evaluation, or a new session, collects it).
  EvaluationResult evaluate(const std::string& source, const ProgressFn& progress = {});

  /// The client ended the session: finishes the trajectory as kEndedReason unless the budget
  /// ended it already. A turn still waiting for its verdict is left for a new session (the
  /// trajectory stays running). Also marks the run finished once none of its trajectories runs.
  /// Never throws (it runs at shutdown): problems are logged.
  void end();

 private:
  /// Drives the last turn from wherever it stands to complete (the steps of turn_loop.cpp with
  /// the candidate given, not extracted). Returns when no turn is pending.
  void settle(const ProgressFn& progress);
  [[nodiscard]] EvalRequest request(const std::string& source) const;
  [[nodiscard]] std::string idempotency_key(int64_t turn, const std::string& source, int64_t submission) const;
  [[nodiscard]] FinishedEvaluation await(const std::string& task_id, const ProgressFn& progress) const;
  void log(const std::string& line) const;

  RunStore& m_store;
  const ServiceClient& m_service;
  SessionConfig m_config;
  std::string m_run_id;
  std::string m_target;  ///< the prompt target: an arch or a GPU (h100, h200, b200)
  TrajectoryKey m_key;
  int64_t m_trajectory = 0;
  int m_budget = kDefaultBudget;
  Prompt m_prompt;
  mutable std::mutex m_mutex;
  std::string m_client;
};

/// The answer stored as a turn's assistant message: who submitted, then the source in a ```cuda
/// block (so exported trajectories read like our agent's).
std::string submission_answer(const std::string& client, const std::string& source);
/// The source back out of submission_answer's text; nullopt when it is not one.
std::optional<std::string> source_of_answer(const std::string& answer);

}  // namespace ptxbench::mcp

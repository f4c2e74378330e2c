#include "mcp/trajectory_session.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "common/sha256.h"
#include "verdict/feedback.h"

namespace ptxbench::mcp {
namespace {

constexpr std::string_view kFenceOpen = "```cuda\n";
constexpr std::string_view kFenceClose = "\n```\n";
constexpr int kMaxBudget = 100;  // run_config.cpp's bound on num_turns

}  // namespace

std::string budget_reason(int budget) { return fmt::format("request budget of {} evaluations used", budget); }

BudgetExhausted::BudgetExhausted(int budget)
    : Error("mcp", fmt::format("request budget of {} evaluations used up: this trajectory has stored {} evaluations; "
                               "nothing was submitted or stored",
                               budget, budget)) {}

ModelUsage zero_usage(const TurnContext& context) {
  ModelUsage u;
  u.provider = "mcp";
  u.model = context.client;
  return u;
}

std::string submission_answer(const std::string& client, const std::string& source) {
  std::string who = client.empty() ? "The agent" : "The agent (MCP client " + client + ")";
  return "[ptxbench mcp] " + who +
         " submitted this kernel with the tool `evaluate`; its own messages and tokens are not seen by the server.\n\n" +
         std::string(kFenceOpen) + source + std::string(kFenceClose);
}

std::optional<std::string> source_of_answer(const std::string& answer) {
  if (answer.rfind("[ptxbench mcp] ", 0) != 0) return std::nullopt;
  std::size_t open = answer.find(kFenceOpen);
  if (open == std::string::npos || answer.size() < open + kFenceOpen.size() + kFenceClose.size()) return std::nullopt;
  if (answer.compare(answer.size() - kFenceClose.size(), kFenceClose.size(), kFenceClose) != 0) return std::nullopt;
  std::size_t begin = open + kFenceOpen.size();
  return answer.substr(begin, answer.size() - kFenceClose.size() - begin);
}

TrajectorySession::TrajectorySession(RunStore& store, const ServiceClient& service, const Catalog& catalog,
                                     const PromptBuilder& prompts, SessionConfig config)
    : m_store(store), m_service(service), m_config(std::move(config)), m_target(m_config.arch) {
  if (m_config.definition.empty()) throw InputError("mcp", "give the definition the session evaluates (--definition)");
  if (m_config.index < 0) throw InputError("mcp", "the trajectory index must be >= 0");
  if (m_config.budget && (*m_config.budget < 1 || *m_config.budget > kMaxBudget))
    throw InputError("mcp", fmt::format("the budget must be 1 to {} evaluations, got {}", kMaxBudget, *m_config.budget));
  const Definition& def = catalog.definition(m_config.definition);
  std::string tag = m_config.tag.empty() ? prompts.default_tags().back() : m_config.tag;
  std::optional<RunInfo> run;
  if (!m_config.run_id.empty()) {
    run = store.run(m_config.run_id);
    if (run->imported())
      throw InputError("mcp", "run " + run->id + " was imported (" + run->origin + "): it takes no new turns");
    const ordered_json& c = run->config;
    std::string policy = c.is_object() && c.contains("policy") && c["policy"].is_string() ? c["policy"].get<std::string>() : "";
    if (policy != kMcpPolicy)
      throw InputError("mcp", "run " + run->id + " has policy '" + policy + "', not '" + kMcpPolicy +
                                  "': an MCP session adds turns only to runs made by `ptxbench mcp`");
    if (!c.contains("num_turns") || !c["num_turns"].is_number_integer())
      throw InputError("mcp", "run " + run->id + " has no integer num_turns (its evaluation budget)");
    m_budget = c["num_turns"].get<int>();
    if (m_config.budget && *m_config.budget != m_budget)
      throw InputError("mcp", fmt::format("run {} has a budget of {} evaluations per trajectory, not {} (leave out --budget)",
                                          run->id, m_budget, *m_config.budget));
    if (c.contains("arch") && c["arch"].is_string()) m_target = c["arch"].get<std::string>();
  } else {
    m_budget = m_config.budget.value_or(kDefaultBudget);
  }
  // Before anything is written: an unknown tag or target leaves no empty run behind.
  m_prompt = prompts.build(def, resolve_workload(def, catalog.default_workload(def.name)), tag, m_target);
  if (run) {
    m_run_id = run->id;
    if (run->status != RunStatus::running) store.set_run_status(m_run_id, RunStatus::running);
  } else {
    ordered_json c = {{"policy", kMcpPolicy},
                      {"definitions", {def.name}},
                      {"prompt_tags", {tag}},
                      {"trajectories_per_tag", 1},
                      {"num_turns", m_budget},
                      {"service", m_config.service},
                      {"eval_options", ordered_json::object()},
                      {"eval_timeout_s", m_config.eval_timeout_s},
                      {"arch", m_target}};
    m_run_id = store.create_run(c, m_config.model);
  }
  m_key = {def.name, "", tag, m_config.index};
  m_trajectory = store.ensure_trajectory(m_run_id, m_key);
  ResumePoint rp = store.resume_point(m_trajectory);
  if (rp.next() == NextAction::store_initial_messages) {
    store.record_initial_messages(m_trajectory, {{"system", m_prompt.system, 0, 0, ""}, {"user", m_prompt.user, 0, 0, ""}});
  } else {
    // A later session answers get_task with the prompt the trajectory was opened with.
    for (const auto& m : rp.messages)
      if (m.turn == 0) (m.role == "system" ? m_prompt.system : m_prompt.user) = m.content;
  }
  TrajectoryInfo t = store.trajectory(m_trajectory);
  if (t.status != TrajectoryStatus::running && t.stop_reason == kEndedReason && used() < m_budget) {
    store.reopen_trajectory(m_trajectory);
    log(fmt::format("trajectory {} reopened: {} of {} evaluations used", m_trajectory, used(), m_budget));
  }
}

int TrajectorySession::used() const { return static_cast<int>(m_store.turn_rows(m_trajectory).size()); }

void TrajectorySession::set_client(const std::string& name_and_version) {
  std::lock_guard lock(m_mutex);
  m_client = name_and_version;
}

void TrajectorySession::log(const std::string& line) const {
  if (m_config.log) m_config.log(line);
  else std::fprintf(stderr, "[mcp] %s\n", line.c_str());
}

EvalRequest TrajectorySession::request(const std::string& source) const {
  EvalRequest r;
  r.definition = m_key.definition;
  r.workload = m_key.workload_uuid;
  r.source = source;
  return r;
}

std::string TrajectorySession::idempotency_key(int64_t turn, const std::string& source, int64_t submission) const {
  // The source's hash is part of the key: a restarted session that sends another kernel for the
  // same turn number gets a new task rather than a refusal for a reused key.
  std::string key = fmt::format("mcp:{}:{}:{}:{}", m_run_id, m_trajectory, turn, sha256_hex(source).substr(0, 16));
  if (submission > 1) key += ":" + std::to_string(submission);
  return key;
}

FinishedEvaluation TrajectorySession::await(const std::string& task_id, const ProgressFn& progress) const {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto deadline = start + std::chrono::duration<double>(m_config.eval_timeout_s);
  for (;;) {
    double left = std::chrono::duration<double>(deadline - clock::now()).count();
    if (left <= 0)
      throw Error("service", fmt::format("evaluation {} not done within {} s", task_id, m_config.eval_timeout_s));
    ordered_json t = m_service.get(task_id, std::min(left, m_config.progress_interval_s));
    std::string state = t.value("state", "");
    if (state == "done") return read_finished_task(t);
    if (progress) progress(std::chrono::duration<double>(clock::now() - start).count(), state);
  }
}

void TrajectorySession::settle(const ProgressFn& progress) {
  const int64_t id = m_trajectory;
  for (;;) {
    ResumePoint rp = m_store.resume_point(id);
    const int64_t turn = rp.turn;
    switch (rp.next()) {
      case NextAction::done:
      case NextAction::next_turn:
      case NextAction::store_initial_messages:
        return;
      case NextAction::call_model:  // stopped between begin_turn and the answer: the source is lost
        m_store.record_model_answer(id, turn,
                                    "[ptxbench mcp] The server stopped before this evaluation's source was stored.",
                                    m_config.usage_hook({id, turn, m_client}));
        break;
      case NextAction::extract_candidate: {
        if (auto source = source_of_answer(rp.last->answer.value_or("")))
          m_store.record_candidate(id, turn, *source);
        else
          m_store.record_extraction_error(id, turn, "The MCP server stopped before this evaluation's source was stored; "
                                                    "nothing was evaluated.");
        break;
      }
      case NextAction::submit_evaluation: {
        const std::string& source = *rp.last->candidate_source;
        m_store.record_submission(id, turn, m_service.submit(request(source), idempotency_key(turn, source, 1)));
        break;
      }
      case NextAction::await_verdict: {
        const std::string& task = *rp.last->task_id;
        FinishedEvaluation t;
        try {
          t = await(task, progress);
        } catch (const Error&) {
          // An unknown task (expired from the service's queue, a new queue): submit it again.
          if (!m_service.forgot(task)) throw;
          const std::string& source = *rp.last->candidate_source;
          m_store.record_resubmission(id, turn, task,
                                      m_service.submit(request(source),
                                                       idempotency_key(turn, source, rp.last->submissions + 1)));
          break;
        }
        m_store.record_verdict(id, turn, task, t.verdict_or_bare().to_json());
        break;
      }
      case NextAction::feedback_or_complete: {
        const TurnRecord& last = *rp.last;
        m_store.record_feedback(id, turn, last.extraction_error ? *last.extraction_error : render_feedback(*last.verdict));
        break;
      }
      case NextAction::complete_turn: {
        std::optional<TrajectoryEnd> end;
        if (turn >= m_budget) end = TrajectoryEnd{TrajectoryStatus::finished, budget_reason(m_budget)};
        m_store.complete_turn(id, turn, end);
        break;
      }
    }
  }
}

EvaluationResult TrajectorySession::evaluate(const std::string& source, const ProgressFn& progress) {
  std::lock_guard lock(m_mutex);
  const int64_t id = m_trajectory;
  EvaluationResult r;
  r.budget = m_budget;
  ResumePoint before = m_store.resume_point(id);
  NextAction pending = before.next();
  if (pending != NextAction::next_turn && pending != NextAction::done) {
    settle(progress);
    TurnRecord earlier = m_store.turns(id).back();
    r.note = fmt::format("Evaluation {} (from an earlier session) was waiting for its verdict; it is stored now: {}.",
                         earlier.turn, earlier.status);
    log(r.note);
  }
  int used_before = used();
  if (used_before >= m_budget) throw BudgetExhausted(m_budget);
  TrajectoryInfo t = m_store.trajectory(id);
  if (t.status != TrajectoryStatus::running)
    throw Error("mcp", "trajectory " + std::to_string(id) + " is " + to_string(t.status) + " (" + t.stop_reason +
                           "): it takes no more evaluations");
  const int64_t turn = used_before + 1;
  // Submitted before the turn is begun: a service that cannot be reached or refuses the request
  // leaves nothing stored and spends nothing of the budget.
  std::string task = m_service.submit(request(source), idempotency_key(turn, source, 1));
  m_store.begin_turn(id, turn);
  m_store.record_model_answer(id, turn, submission_answer(m_client, source), m_config.usage_hook({id, turn, m_client}));
  m_store.record_candidate(id, turn, source);
  m_store.record_submission(id, turn, task);
  log(fmt::format("evaluation {} of {} submitted (task {})", turn, m_budget, task));
  settle(progress);
  TurnRecord done = m_store.turns(id).back();
  r.turn = done.turn;
  r.verdict = done.verdict.value_or(Verdict{});
  r.feedback = done.feedback.value_or("");
  r.used = static_cast<int>(done.turn);
  r.finished = m_store.trajectory(id).status != TrajectoryStatus::running;
  log(fmt::format("evaluation {} of {}: {}", turn, m_budget, to_string(r.verdict.status)));
  return r;
}

void TrajectorySession::end() {
  try {
    std::lock_guard lock(m_mutex);
    TrajectoryInfo t = m_store.trajectory(m_trajectory);
    if (t.status == TrajectoryStatus::running) {
      ResumePoint rp = m_store.resume_point(m_trajectory);
      if (rp.next() == NextAction::next_turn) {
        m_store.finish_trajectory(m_trajectory, TrajectoryStatus::finished, kEndedReason);
        log(fmt::format("trajectory {} finished: {} ({} of {} evaluations used)", m_trajectory, kEndedReason, rp.turn,
                        m_budget));
      } else {
        log(fmt::format("evaluation {} still waits for its verdict: trajectory {} stays open; `ptxbench mcp --run {}` "
                        "with the same definition, tag and index collects it",
                        rp.turn, m_trajectory, m_run_id));
      }
    }
    bool running = false;
    for (const auto& other : m_store.list_trajectories(m_run_id)) running |= other.status == TrajectoryStatus::running;
    if (!running) m_store.set_run_status(m_run_id, RunStatus::finished);
  } catch (const std::exception& e) {
    log(std::string("ending the session: ") + e.what());
  }
}

}  // namespace ptxbench::mcp

#include "agent/turn_loop.h"

#include <fmt/format.h>

#include <cmath>

#include "notes/notes_feedback.h"
#include "notes/repair_note.h"
#include "agent/code_extract.h"
#include "agent/sweep_evaluation.h"
#include "common/enum_names.h"
#include "common/error.h"
#include "service/service_client.h"
#include "verdict/feedback.h"
#include "verdict/sweep_verdict.h"

namespace ptxbench {
namespace {
constexpr EnumName<TurnPhase> kPhases[] = {
    {TurnPhase::model, "model"},       {TurnPhase::answered, "answered"}, {TurnPhase::extract, "extract"},
    {TurnPhase::evaluate, "evaluate"}, {TurnPhase::verdict, "verdict"},   {TurnPhase::done, "done"},
    {TurnPhase::failed, "failed"},
};

// The source turn a seed names in its origin (run, trajectory, turn; checked when the seeds were
// read), or nullopt when it names none.
std::optional<SeedOrigin> seed_origin(const RepairSeed& seed) {
  const auto& o = seed.origin;
  if (!o.contains("run") || !o.contains("turn")) return std::nullopt;
  SeedOrigin out;
  out.run_id = o["run"].get<std::string>();
  out.turn = o["turn"].get<int64_t>();
  if (o.contains("trajectory")) out.trajectory_id = o["trajectory"].get<int64_t>();
  return out;
}
}  // namespace

std::string to_string(TurnPhase p) { return enum_name(kPhases, p); }
TurnPhase parse_turn_phase(std::string_view text) { return parse_enum(kPhases, text, "turn phase"); }

std::string trajectory_label(const TrajectoryKey& key) {
  return key.definition + "/" + key.prompt_tag + "#" + std::to_string(key.index);
}

std::string protocol_note(const RunConfig& c, int64_t turn) {
  const std::string target = fmt::format("{:g}×", c.target_speedup);
  const int64_t left = std::max<int64_t>(0, c.num_turns - turn);
  std::string turns = left == 0 ? fmt::format("this was the last of your {} turns", c.num_turns)
                                : fmt::format("you have {} of {} turns left", left, c.num_turns);
  if (!c.workloads.empty())  // a sweep: its speedup is the geometric mean, PASSED means at every workload
    return fmt::format("\nTarget: a geometric-mean speedup of at least {} over the baseline library across the "
                       "workloads, with the kernel PASSED at every workload. The trajectory stops when a turn is "
                       "PASSED with that speedup ≥ {}; {}.\n",
                       target, target, turns);
  return fmt::format("\nTarget: a speedup of at least {} over the baseline library, with the kernel PASSED. The "
                     "trajectory stops when a turn is PASSED with speedup ≥ {}; {}.\n",
                     target, target, turns);
}

std::string turn_feedback(const std::string& verdict_text, const RunConfig& config, int64_t turn) {
  std::string out = verdict_text;
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out + protocol_note(config, turn);
}

TrajectoryRunner::TrajectoryRunner(RunStore& store, Policy& policy, EvaluationClient& evaluation, const RunConfig& config,
                                   const Catalog& catalog, const PromptBuilder& prompts, std::string run_id,
                                   const NotesStore* notes, RunControl* control)
    : m_store(store), m_policy(policy),
      m_sweep(config.workloads.empty() ? nullptr : make_sweep_evaluation(evaluation, catalog, config.workloads)),
      m_evaluation(m_sweep ? *m_sweep : evaluation), m_config(config), m_catalog(catalog), m_prompts(prompts),
      m_run_id(std::move(run_id)), m_notes(notes), m_control(control ? control : &m_own_control) {
  if (m_config.repair_notes.enabled() && !m_notes)
    throw InputError("agent", "repair_notes mode " + to_string(m_config.repair_notes.mode) + " needs its notes store open");
}

std::string TrajectoryRunner::with_repair_notes(const std::string& feedback, const std::string& kernel,
                                                const std::string& definition) const {
  if (!m_config.repair_notes.enabled()) return feedback;
  return feedback_with_notes(feedback, *m_notes, kernel, m_catalog.definition(definition).op_type,
                             m_config.repair_notes.mode, m_config.repair_notes.k);
}

TrajectoryRunner::Opening TrajectoryRunner::opening_messages(const TrajectoryKey& key) const {
  const Definition& def = m_catalog.definition(key.definition);
  const Workload& w = key.workload_uuid.empty() ? m_catalog.default_workload(key.definition)
                                                : m_catalog.find_workload(key.definition, key.workload_uuid);
  std::string tag = base_prompt_tag(key.prompt_tag);
  Prompt p = m_prompts.build(def, resolve_workload(def, w), tag, m_config.arch);
  if (!m_config.workloads.empty()) p.user += sweep_task_note(def, select_workloads(m_catalog, key.definition, m_config.workloads));
  Opening out;
  out.messages = {{"system", p.system, 0, 0, ""}, {"user", p.user, 0, 0, ""}};
  if (tag == key.prompt_tag) return out;
  // A repair trajectory: the seed of its index, as if the model had answered it at turn 0.
  const RepairFromConfig* from = m_config.repair_from ? &*m_config.repair_from : nullptr;
  if (!from || key.index < 0 || static_cast<std::size_t>(key.index) >= from->seeds.size() ||
      from->seeds[static_cast<std::size_t>(key.index)].definition != key.definition)
    throw InputError("agent", "trajectory " + key.definition + "/" + key.prompt_tag + "#" + std::to_string(key.index) +
                                  " is a repair trajectory with no matching seed in the run config's repair_from");
  const RepairSeed& seed = from->seeds[static_cast<std::size_t>(key.index)];
  std::string feedback = seed.feedback;
  if (seed.status != to_string(Status::PASSED)) feedback = with_repair_notes(feedback, seed.wrong_source, key.definition);
  out.messages.push_back(
      {"assistant", fenced(seed.wrong_source, m_config.language == CandidateLanguage::triton ? "python" : "cuda"), 0, 0, ""});
  out.messages.push_back({"user", feedback, 0, 0, ""});
  out.seed = SeedTurn{seed.wrong_source, m_config.language, seed.status, feedback, seed.verdict, seed_origin(seed)};
  return out;
}

std::vector<StoredMessage> TrajectoryRunner::shape_context(const std::vector<StoredMessage>& stored, ContextPolicy policy) {
  std::vector<StoredMessage> out;
  for (const auto& m : stored)
    if (m.role != "system") out.push_back(m);
  if (policy == ContextPolicy::full || out.size() <= 3) return out;
  // latest: the task (the first message), then the last assistant answer and the feedback that
  // followed it. A repair trajectory's seed exchange (turn 0 after the task) is that last pair
  // until turn 1 has its feedback.
  int64_t last_turn = out.back().turn;
  if (last_turn == 0) return out;
  std::vector<StoredMessage> latest = {out.front()};
  for (const auto& m : out)
    if (m.turn == last_turn) latest.push_back(m);
  return latest;
}

EvalRequest evaluation_request(const TrajectoryKey& key, const std::string& source, const RunConfig& config) {
  EvalRequest r;
  r.definition = key.definition;
  r.workload = key.workload_uuid;
  r.source = source;
  r.language = config.language;
  if (!config.eval_options.empty()) r.set_options(config.eval_options, "run config: eval_options");
  return r;
}

void TrajectoryRunner::run(int64_t id, const std::function<void(const TurnEvent&)>& on_event) {
  auto emit = [&](int64_t turn, TurnPhase phase, const std::string& detail = "", int64_t tokens = 0, bool fake = false) {
    if (on_event) on_event({id, turn, phase, detail, tokens, fake});
  };
  for (;;) {
    if (m_control->stopped()) return;  // the run failed elsewhere: leave this trajectory resumable
    ResumePoint rp = m_store.resume_point(id);
    const TrajectoryKey& key = rp.trajectory.key;
    int64_t turn = rp.turn;
    switch (rp.next()) {
      case NextAction::done:
        emit(turn, rp.trajectory.status == TrajectoryStatus::failed ? TurnPhase::failed : TurnPhase::done,
             rp.trajectory.stop_reason);
        return;
      case NextAction::store_initial_messages: {
        Opening opening = opening_messages(key);
        m_store.record_initial_messages(id, opening.messages, opening.seed);
        break;
      }
      case NextAction::next_turn:
        if (turn >= m_config.num_turns) {  // only reached when a stop was not stored with the last turn
          m_store.finish_trajectory(id, TrajectoryStatus::finished, "turn budget of " + std::to_string(m_config.num_turns));
          break;
        }
        m_store.begin_turn(id, turn + 1);
        break;
      case NextAction::call_model: {
        emit(turn, TurnPhase::model);
        PolicyRequest req;
        req.key = &key;
        req.turn = turn;
        for (const auto& m : rp.messages)
          if (m.role == "system") req.system = m.content;
        req.conversation = shape_context(rp.messages, m_config.context);
        PolicyAnswer a;
        try {
          a = m_policy.answer(req);
        } catch (const ModelApiError& e) {
          m_store.finish_trajectory(id, TrajectoryStatus::failed, std::string("model API: ") + e.what());
          break;
        } catch (const InputError& e) {
          m_store.finish_trajectory(id, TrajectoryStatus::failed, e.what());
          break;
        }
        m_store.record_model_answer(id, turn, a.text, a.usage, a.reasoning);
        emit(turn, TurnPhase::answered, a.usage.finish_reason, a.usage.prompt_tokens + a.usage.completion_tokens);
        break;
      }
      case NextAction::extract_candidate: {
        Extraction e = extract_candidate(rp.last->answer.value_or(""), m_config.language);
        if (e.source) m_store.record_candidate(id, turn, *e.source, m_config.language);
        else m_store.record_extraction_error(id, turn, e.error);
        emit(turn, TurnPhase::extract, e.source ? "ok" : kExtractionErrorStatus);
        break;
      }
      case NextAction::submit_evaluation: {
        emit(turn, TurnPhase::evaluate);
        EvalRequest request = evaluation_request(key, *rp.last->candidate_source, m_config);
        // The key names the turn: a run killed between the submission and record_submission
        // gets the same task back when it resumes.
        std::string idem = m_run_id + ":" + std::to_string(id) + ":" + std::to_string(turn);
        // After an INFRA_ERROR the same candidate goes again under a key of its own, or the
        // service would hand the failed task back.
        if (rp.last->infra_attempts > 0) idem += ":infra" + std::to_string(rp.last->infra_attempts);
        m_store.record_submission(id, turn, m_evaluation.submit(request, idem));
        break;
      }
      case NextAction::await_verdict:
        if (auto verdict = await_verdict(id, key, turn, *rp.last))
          emit(turn, TurnPhase::verdict, to_string(verdict->status), 0, verdict->fake_backend);
        break;
      case NextAction::feedback_or_complete:
        m_store.record_feedback(id, turn, feedback_for(*rp.last, key, turn));
        break;
      case NextAction::complete_turn: {
        const TurnRecord& last = *rp.last;
        std::optional<TrajectoryEnd> end;
        if (last.correct && last.speedup && *last.speedup >= m_config.target_speedup)
          end = TrajectoryEnd{TrajectoryStatus::stopped_early, "PASSED with speedup " + std::to_string(*last.speedup) +
                                                                   " >= target " + std::to_string(m_config.target_speedup)};
        else if (turn >= m_config.num_turns)
          end = TrajectoryEnd{TrajectoryStatus::finished, "turn budget of " + std::to_string(m_config.num_turns)};
        m_store.complete_turn(id, turn, end);
        break;
      }
    }
  }
}

std::optional<Verdict> TrajectoryRunner::await_verdict(int64_t id, const TrajectoryKey& key, int64_t turn,
                                                       const TurnRecord& last) {
  const std::string& task = *last.task_id;
  FinishedEvaluation done;
  try {
    done = m_evaluation.wait_done(task, m_config.eval_timeout_s);
  } catch (const Error&) {
    // An unknown task (expired from the service's queue, a new queue): submit it again.
    if (!m_evaluation.forgot(task)) throw;
    std::string idem =
        m_run_id + ":" + std::to_string(id) + ":" + std::to_string(turn) + ":" + std::to_string(last.submissions + 1);
    m_store.record_resubmission(id, turn, task, m_evaluation.submit(evaluation_request(key, *last.candidate_source, m_config), idem));
    return std::nullopt;
  }
  Verdict finished = done.verdict_or_bare();
  if (finished.status == Status::INFRA_ERROR) {
    handle_infra_error(id, key, turn, task, finished);
    return std::nullopt;
  }
  return m_store.record_verdict(id, turn, task, finished.to_json());
}

std::string TrajectoryRunner::feedback_for(const TurnRecord& last, const TrajectoryKey& key, int64_t turn) const {
  std::string feedback =
      turn_feedback(last.extraction_error ? *last.extraction_error : render_turn_feedback(*last.verdict), m_config, turn);
  // Repair notes go with a failed verdict only: a PASSED one, an INFRA_ERROR (ours, not the
  // kernel's; a stored one comes only from runs before INFRA_ERRORs were re-run), or an answer
  // with no kernel to search by (extraction error) keeps its feedback.
  if (!last.extraction_error && !last.correct && last.candidate_source && last.status != to_string(Status::INFRA_ERROR))
    feedback = with_repair_notes(feedback, *last.candidate_source, key.definition);
  return feedback;
}

void TrajectoryRunner::handle_infra_error(int64_t id, const TrajectoryKey& key, int64_t turn, const std::string& task,
                                          const Verdict& verdict) {
  int64_t attempt = m_store.record_infra_attempt(id, turn, task, verdict.to_json());
  int seen = ++m_infra_seen[{id, turn}];
  std::string why = verdict.message;
  if (why.empty()) why = "no message";
  std::string where = trajectory_label(key) + " turn " + std::to_string(turn);
  if (seen > m_config.infra_error_retries)
    throw InfraErrorPersists("evaluation", fmt::format("{}: ended INFRA_ERROR {} time(s) in a row ({} kept for the turn): "
                                                       "{}; the evaluation service cannot measure now",
                                                       where, seen, attempt, why));
  double wait = m_config.infra_error_backoff_s * std::ldexp(1.0, seen - 1);
  m_control->notice(fmt::format("[run] {}: INFRA_ERROR ({}), our side, not the kernel's: evaluating it again in {:g} s "
                                "(re-run {} of {}); the model does not see it and the turn is not spent",
                                where, why, wait, seen, m_config.infra_error_retries));
  m_control->sleep_for(wait);
}

}  // namespace ptxbench

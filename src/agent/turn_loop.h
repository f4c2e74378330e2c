// One trajectory's turns (docs/design.md §6), driven by the run store's resume point: build the prompt →
// ask the policy → extract the last valid code block → submit to the evaluation service (with an
// idempotency key, so a resumed turn re-attaches instead of re-submitting) → store the verdict →
// feedback text → next turn, until PASSED with speedup ≥ target or the turn budget. Every step is
// stored before the next begins, so a kill at any moment resumes with no lost and no repeated turn.
// Two repair conditions (issue 19): with the config's repair_notes on, a failed verdict's feedback
// gets the retrieved repair notes appended before it is stored; in a repair run, the opening
// messages end with a seed exchange (the wrong kernel, its feedback) stored as turn 0.
// An INFRA_ERROR verdict (our side failed) is never a turn: it is kept aside and the candidate is
// evaluated again after a back-off; when the re-runs run out, the whole run fails.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "notes/notes_store.h"
#include "agent/evaluation_client.h"
#include "agent/policy.h"
#include "agent/run_control.h"
#include "agent/run_config.h"
#include "runs/run_store.h"
#include "definitions/catalog.h"
#include "prompt/prompt_builder.h"

namespace ptxbench {

/// Where a trajectory stands, for the progress display.
enum class TurnPhase {
  model,     ///< the model call is in flight
  answered,  ///< the model answered (detail: finish reason; tokens)
  extract,   ///< a candidate was extracted (detail: "ok" or EXTRACTION_ERROR)
  evaluate,  ///< the candidate was submitted
  verdict,   ///< the verdict is stored (detail: its status)
  done,      ///< the trajectory ended (detail: stop reason)
  failed,    ///< the trajectory failed, resumably (detail: error)
};

std::string to_string(TurnPhase p);
/// The phase named `text`; InputError naming every phase otherwise.
TurnPhase parse_turn_phase(std::string_view text);

/// Something that happened in a trajectory, for the progress display.
struct TurnEvent {
  int64_t trajectory_id = 0;
  int64_t turn = 0;
  TurnPhase phase = TurnPhase::model;
  std::string detail;  ///< verdict status, stop reason, error
  int64_t tokens = 0;  ///< answered: prompt + completion tokens of the call
  bool fake = false;   ///< verdict: it came from a fake evaluation backend (no GPU measured it)
};

/// "gemm_n7168_k5120/params#2": how progress lines and notices name a trajectory.
std::string trajectory_label(const TrajectoryKey& key);

/// An INFRA_ERROR that outlived the service's retries and ours: the run cannot go on measuring.
class InfraErrorPersists : public EnvironmentError {
 public:
  using EnvironmentError::EnvironmentError;
};

/// What the model is told after every turn's verdict besides the verdict itself (the original
/// PTXBench's protocol): the target speedup, the early-stop rule and the turns left. Starts with a
/// blank line; appended to the verdict's feedback (or the extraction error), before repair notes.
std::string protocol_note(const RunConfig& config, int64_t turn);
/// The feedback of a turn as the model sees it: `verdict_text` (render_turn_feedback's: a sweep's
/// table and details, or render_feedback's; or the extraction error) followed by protocol_note.
std::string turn_feedback(const std::string& verdict_text, const RunConfig& config, int64_t turn);

/// The service request for a turn's candidate: its definition, workload, source, language and the
/// run's eval_options (InputError naming the config field when they are not the service's options).
EvalRequest evaluation_request(const TrajectoryKey& key, const std::string& source, const RunConfig& config);

class TrajectoryRunner {
 public:
  /// `notes`: the run's notes store, opened once per run; required when the config's
  /// repair_notes mode is not off (InputError otherwise), unused when it is. `control`: the run's
  /// shared stop flag and notices (none: a private one).
  TrajectoryRunner(RunStore& store, Policy& policy, EvaluationClient& evaluation, const RunConfig& config,
                   const Catalog& catalog, const PromptBuilder& prompts, std::string run_id,
                   const NotesStore* notes = nullptr, RunControl* control = nullptr);

  /// Runs the trajectory from wherever it stands until it is no longer running, or until the run
  /// is stopped (it returns after the step in hand, the trajectory still running). A model API
  /// that fails for good, or a policy with no answer, ends it as `failed` (resumable). An
  /// INFRA_ERROR is evaluated again config.infra_error_retries times (notices say so), then
  /// InfraErrorPersists is thrown; anything else propagates. `on_event` may be empty; it is
  /// called from this thread.
  void run(int64_t trajectory_id, const std::function<void(const TurnEvent&)>& on_event = {});

  /// The messages a policy sees at a turn under the context policy: full — the task and every
  /// answer/feedback pair so far; latest — the task, then only the last answer and its feedback
  /// (a repair trajectory's seed exchange is the last pair until turn 1 has its feedback).
  static std::vector<StoredMessage> shape_context(const std::vector<StoredMessage>& stored, ContextPolicy policy);

  /// What a trajectory opens with (stored in one transaction before turn 1).
  struct Opening {
    std::vector<StoredMessage> messages;
    std::optional<SeedTurn> seed;  ///< a repair trajectory's seed as its turn 0
  };
  /// The opening messages of a trajectory: system and task; in a repair run (the key's tag ends
  /// with kRepairTagSuffix) then the seed of the key's index as an exchange: the wrong kernel in
  /// a ```cuda block (assistant) and its feedback (user), with notes as for a failed verdict; and
  /// that seed as turn 0 (status, feedback as shown, verdict and origin when the seed has them).
  [[nodiscard]] Opening opening_messages(const TrajectoryKey& key) const;

  /// `feedback` of a failed verdict (not PASSED) of `kernel` with the run's repair notes appended;
  /// unchanged when repair_notes is off. Deterministic for a given notes store.
  [[nodiscard]] std::string with_repair_notes(const std::string& feedback, const std::string& kernel,
                                              const std::string& definition) const;

 private:
  RunStore& m_store;
  Policy& m_policy;
  /// The run's sweep over the given client when the config names workloads (agent/sweep_evaluation.h).
  std::unique_ptr<EvaluationClient> m_sweep;
  EvaluationClient& m_evaluation;  ///< the sweep, or the given client
  const RunConfig& m_config;
  const Catalog& m_catalog;
  const PromptBuilder& m_prompts;
  /// Keeps an INFRA_ERROR verdict aside (record_infra_attempt), says so, and waits the back-off
  /// before the loop submits again; throws InfraErrorPersists past the re-run budget.
  void handle_infra_error(int64_t id, const TrajectoryKey& key, int64_t turn, const std::string& task,
                          const Verdict& verdict);
  /// Waits for the turn's evaluation and stores its verdict; a task the service forgot is submitted
  /// again, an INFRA_ERROR goes to handle_infra_error. Returns the stored verdict, if one was.
  std::optional<Verdict> await_verdict(int64_t id, const TrajectoryKey& key, int64_t turn, const TurnRecord& last);
  /// The feedback the model gets for the completed evaluation (or extraction error) of `last`.
  [[nodiscard]] std::string feedback_for(const TurnRecord& last, const TrajectoryKey& key, int64_t turn) const;

  std::string m_run_id;
  const NotesStore* m_notes;
  RunControl m_own_control;
  RunControl* m_control;
  /// INFRA_ERROR verdicts seen per (trajectory, turn) by this process: the re-run budget starts
  /// afresh with every start or resume (a resume is the user saying the GPU is fixed).
  std::map<std::pair<int64_t, int64_t>, int> m_infra_seen;
};

}  // namespace ptxbench

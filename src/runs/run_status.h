// The states a run, a trajectory and a turn go through (docs/agent.md, "Run lifecycle"), what the
// turn loop does next from them, and their names: the words the run store writes and `run --list`
// shows.
#pragma once

#include <optional>
#include <string>

namespace ptxbench {

/// A run's lifecycle (docs/agent.md, "Run lifecycle"). Stored: running, finished, failed (an error
/// we caught stopped it; RunInfo::failure says which) and interrupted (what versions before schema
/// 4 wrote for a run that ended with failed or unfinished trajectories). `crashed` is never
/// stored: it is how a stored `running` run reads once the process that held it is gone.
enum class RunStatus { running, finished, interrupted, failed, crashed };
enum class TrajectoryStatus { running, stopped_early, finished, failed };

/// How far a turn got. Each step is one transaction, taken in this order; a turn whose candidate
/// could not be extracted goes from candidate_extracted straight to feedback_stored (or complete).
enum class TurnStep {
  model_call_started = 1,  ///< begin_turn: the model call may be in flight; nothing of it is stored
  model_answered = 2,      ///< assistant message + usage stored
  candidate_extracted = 3, ///< candidate source (and hash) stored, or the extraction error
  evaluation_submitted = 4,///< the service task id is stored: re-attach to it, do not re-submit
  verdict_stored = 5,      ///< verdict JSON, status, speedup, target-instruction flag stored
  feedback_stored = 6,     ///< the feedback (user) message for the next turn stored
  complete = 7,
};

/// What the turn loop should do next, from the stored state alone (ResumePoint::next).
enum class NextAction {
  store_initial_messages,  ///< record_initial_messages (system + task)
  next_turn,               ///< apply the stop rule / budget: finish_trajectory, or begin_turn(turn + 1)
  call_model,              ///< (re)send the conversation (`messages`), then record_model_answer
  extract_candidate,       ///< extract from last->answer, then record_candidate / record_extraction_error
  submit_evaluation,       ///< submit last->candidate_source, then record_submission
  await_verdict,           ///< wait for last->task_id (re-attach), then record_verdict
  feedback_or_complete,    ///< record_feedback then complete_turn, or complete_turn(end) to stop
  complete_turn,           ///< complete_turn
  done,                    ///< the trajectory is no longer running
};

std::string to_string(RunStatus s);
std::string to_string(TrajectoryStatus s);
std::string to_string(TurnStep s);
std::string to_string(NextAction a);
std::optional<RunStatus> parse_run_status(const std::string& s);
std::optional<TrajectoryStatus> parse_trajectory_status(const std::string& s);

}  // namespace ptxbench

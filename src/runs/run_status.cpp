#include "runs/run_status.h"

#include "common/enum_names.h"

namespace ptxbench {
namespace {

constexpr EnumName<RunStatus> kRunStatuses[] = {
    {RunStatus::running, "running"},
    {RunStatus::finished, "finished"},
    {RunStatus::interrupted, "interrupted"},
    {RunStatus::failed, "failed"},
    {RunStatus::crashed, "crashed"},
};

constexpr EnumName<TrajectoryStatus> kTrajectoryStatuses[] = {
    {TrajectoryStatus::running, "running"},
    {TrajectoryStatus::stopped_early, "stopped_early"},
    {TrajectoryStatus::finished, "finished"},
    {TrajectoryStatus::failed, "failed"},
};

constexpr EnumName<TurnStep> kTurnSteps[] = {
    {TurnStep::model_call_started, "model_call_started"},
    {TurnStep::model_answered, "model_answered"},
    {TurnStep::candidate_extracted, "candidate_extracted"},
    {TurnStep::evaluation_submitted, "evaluation_submitted"},
    {TurnStep::verdict_stored, "verdict_stored"},
    {TurnStep::feedback_stored, "feedback_stored"},
    {TurnStep::complete, "complete"},
};

constexpr EnumName<NextAction> kNextActions[] = {
    {NextAction::store_initial_messages, "store_initial_messages"},
    {NextAction::next_turn, "next_turn"},
    {NextAction::call_model, "call_model"},
    {NextAction::extract_candidate, "extract_candidate"},
    {NextAction::submit_evaluation, "submit_evaluation"},
    {NextAction::await_verdict, "await_verdict"},
    {NextAction::feedback_or_complete, "feedback_or_complete"},
    {NextAction::complete_turn, "complete_turn"},
    {NextAction::done, "done"},
};

}  // namespace

std::string to_string(RunStatus s) { return enum_name(kRunStatuses, s); }
std::string to_string(TrajectoryStatus s) { return enum_name(kTrajectoryStatuses, s); }
std::string to_string(TurnStep s) { return enum_name(kTurnSteps, s); }
std::string to_string(NextAction a) { return enum_name(kNextActions, a); }

std::optional<RunStatus> parse_run_status(const std::string& s) { return find_enum(kRunStatuses, s); }

std::optional<TrajectoryStatus> parse_trajectory_status(const std::string& s) {
  return find_enum(kTrajectoryStatuses, s);
}

}  // namespace ptxbench

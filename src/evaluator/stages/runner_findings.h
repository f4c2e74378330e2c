// What a runner's failure, or a wrong output, means for the verdict: each is the candidate's doing
// (the evaluator's own failures are EnvironmentErrors, so INFRA_ERROR).
#pragma once

#include <optional>
#include <string>

#include "evaluator/evaluation.h"
#include "evaluator/runner_session.h"
#include "verdict/correctness.h"

namespace ptxbench {

/// A runner's fault (`when`: "during a correctness call", ...; `limit_s`: the call's time limit).
Failure runner_fault_finding(const RunnerFault& f, const std::string& when, double limit_s);

/// System calls the sandbox denied make the verdict, whatever the call did after them.
std::optional<Failure> denied_calls(const RunnerReply& r);

/// The candidate runner lost `dropped` device activity records (during `when`): its calls launched
/// more than the recorder can hold, or it forged the count. Either is the candidate's doing, never
/// ours (an INFRA_ERROR would be re-run without charge), and what was lost is unaccounted device work
/// (timed or stray): TIMING_ANOMALY. The trusted runner's drops stay ours (trusted_runners.cpp).
Failure lost_activity_records(uint64_t dropped, const std::string& when);

/// A failed output check: guard-band writes are memory errors; a modified input is a broken
/// contract; otherwise the numbers are wrong.
Status status_for_check(const OutputCheck& check);
std::string check_message(const OutputCheck& check, int trial, TrialPhase phase);

}  // namespace ptxbench

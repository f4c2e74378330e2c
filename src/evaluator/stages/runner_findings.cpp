#include "evaluator/stages/runner_findings.h"

#include <fmt/format.h>

#include <vector>

namespace ptxbench {

Failure runner_fault_finding(const RunnerFault& f, const std::string& when, double limit_s) {
  switch (f.kind) {
    case RunnerFault::Kind::timeout:
      return {Status::TIMEOUT, "a call did not finish within " + std::to_string(static_cast<int>(limit_s)) + " s " + when +
                                   "; the runner was killed"};
    case RunnerFault::Kind::out_of_memory:
      return {Status::RUNTIME_ERROR, std::string("the runner was killed ") + when + ": " + f.what()};
    case RunnerFault::Kind::protocol:
      return {Status::RUNTIME_ERROR, "the runner's replies broke the protocol " + when + ": " + f.what()};
    case RunnerFault::Kind::died: break;
  }
  return {Status::RUNTIME_ERROR, "the runner died " + when + ": " + f.what()};
}

std::optional<Failure> denied_calls(const RunnerReply& r) {
  if (r.violations.empty()) return std::nullopt;
  std::string calls;
  for (const auto& v : r.violations) calls += (calls.empty() ? "" : ", ") + v;
  return Failure{Status::RUNTIME_ERROR, "the candidate made system calls the sandbox forbids (denied): " + calls};
}

Status status_for_check(const OutputCheck& check) {
  if (check.has(OutputProblemKind::guard_written)) return Status::SANITIZER_ERROR;
  if (!check.problems.empty()) return Status::RUNTIME_ERROR;
  return Status::INCORRECT_NUMERICAL;
}

std::string check_message(const OutputCheck& check, int trial, TrialPhase phase) {
  if (!check.problems.empty()) return check.problems.front().message;
  for (const auto& t : check.tensors)
    if (!t.passed)
      return "output " + t.name + " differs from the reference in " + std::to_string(t.mismatches) + " of " +
             std::to_string(t.elements) + " elements" +
             (t.beyond_outlier_bound ? ", " + std::to_string(t.beyond_outlier_bound) + " of them beyond the outlier bound" : "") +
             " (" + to_string(phase) + " trial " + std::to_string(trial) + ")";
  return "outputs differ from the reference";
}

Failure lost_activity_records(uint64_t dropped, const std::string& when) {
  return Failure{Status::TIMING_ANOMALY,
                 fmt::format("the candidate's runner lost {} device activity records {}: its calls launched more device "
                             "work than can be recorded (or its report was tampered with), so the device work it did "
                             "is unknown",
                             dropped, when)};
}

}  // namespace ptxbench

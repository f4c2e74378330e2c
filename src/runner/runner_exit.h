// Exit codes of `ptxbench-runner once`, read by the worker to tell a candidate's failure from ours.
#pragma once

namespace ptxbench {

inline constexpr int kRunnerCallFailedExit = 10;  ///< the candidate's call failed (its fault)
inline constexpr int kRunnerSetupFailedExit = 12;  ///< anything else: loading, inputs, CUPTI
inline constexpr int kRunnerSandboxViolationExit = 13;  ///< the sandbox denied system calls (named on stderr)

/// Printed on stderr by `once` right before it loads the candidate: from then on, any failure of
/// the process (whatever its exit code, which the candidate can choose) is the candidate's.
inline constexpr const char* kCandidateLoadedMarker = "ptxbench-runner: loading the candidate";

}  // namespace ptxbench

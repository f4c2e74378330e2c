// What the runner does when candidate code ends the process. The field's kernels wrap CUDA calls
// in a CUDA_CHECK macro that prints and calls exit(1): such a call has failed, and the verdict
// must say so as the candidate's RUNTIME_ERROR naming the code, whatever the code (an exit(0) in
// the middle of a call must not pass for success, nor an exit code the runner uses for its own
// failures pass for ours).
//
// The runner executable defines and exports exit() and abort() (src/runner/runner_symbols.list):
// a candidate library's calls bind to these rather than the C library's, because the dynamic
// linker searches the executable first. Inside a CandidateCodeScope they print what happened,
// report it (the session runner sends the failure as the reply to the current request) and end
// the runner with kRunnerCallFailedExit without running exit handlers; anywhere else they do what
// the C library's do. A raw exit_group system call bypasses all this; the worker then sees the
// runner die mid-request, which is the candidate's RUNTIME_ERROR too.
#pragma once

#include <functional>
#include <string>

namespace ptxbench {

/// How candidate code ended the process.
struct CandidateExit {
  bool aborted = false;      ///< abort() (also std::terminate) rather than exit()
  int code = 0;              ///< exit's status; SIGABRT when aborted
  bool loading = false;      ///< in the library's constructors (dlopen), not in a call
  /// "the candidate called exit(1) during a call"
  [[nodiscard]] std::string describe() const;
};

/// Marks candidate code running on this thread: loading its library, or a call of it. Scopes do
/// not nest (the runner never runs candidate code from candidate code).
class CandidateCodeScope {
 public:
  explicit CandidateCodeScope(bool loading);
  ~CandidateCodeScope();
  CandidateCodeScope(const CandidateCodeScope&) = delete;
  CandidateCodeScope& operator=(const CandidateCodeScope&) = delete;
};

/// True on a thread inside a CandidateCodeScope.
[[nodiscard]] bool candidate_code_running() noexcept;

/// What the runner does, after printing on stderr, when candidate code ends the process: the
/// session runner sends the failure as its reply. Runs on the candidate's thread just before the
/// process ends; exceptions it throws are ignored. Empty (the default): print only.
void set_candidate_exit_report(std::function<void(const CandidateExit&)> report);

/// Installs a SIGABRT handler (once, before the system-call filter) for aborts that do not go
/// through abort() (a failed assert calls the C library's own): inside a scope the runner prints
/// the reason and ends with kRunnerCallFailedExit; elsewhere the signal does what it did.
void install_candidate_abort_handler();

/// Ends the runner itself with `status`. Should candidate code call exit() again while the exit
/// handlers run (from a static destructor), the process ends at once with `status`, so the
/// runner's status stays its own.
[[noreturn]] void exit_runner(int status);

}  // namespace ptxbench

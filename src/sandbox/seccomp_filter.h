// The runner's system-call filter (seccomp, through libseccomp), installed by the runner itself
// after the CUDA context exists and before it loads a candidate, on every thread (TSYNC). Denied
// calls fail with EPERM through a SIGSYS trap that records them, so the verdict can name what a
// candidate tried; the trap handler cannot be replaced (sigaction on SIGSYS is denied too).
#pragma once

#include <string>
#include <vector>

namespace ptxbench {

enum class SeccompProfile {
  /// The timing session runner: additionally no new threads at all (a thread of the candidate's
  /// could launch work while the baseline is timed, or patch what the runner reports).
  session,
  /// A runner under compute-sanitizer or ncu, whose injected agents may start threads.
  tool_target,
};
std::string to_string(SeccompProfile p);

/// Installs the filter; throws EnvironmentError when the kernel refuses it.
void install_seccomp_filter(SeccompProfile profile);

/// Denied system calls seen since the filter was installed (names, first occurrences, at most 32).
std::vector<std::string> seccomp_violations();

/// Whether this build and kernel support the filter (libseccomp linked, seccomp enabled).
bool seccomp_available();

}  // namespace ptxbench

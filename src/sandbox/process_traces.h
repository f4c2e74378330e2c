// What a runner's own process shows of how it was started: the environment block and the command
// line (in its memory and in /proc/self/environ, /proc/self/cmdline), its memory map
// (/proc/self/maps, where a tool's injected libraries appear) and the other processes of its
// namespace (under a tool, the tool is PID 1). A candidate that reads them can tell a profiled or
// sanitized call from a timed one; these helpers take that look away before the candidate's code
// runs (docs/sandbox.md, "Denying the look"). What stays detectable is listed there, with the
// bindings that make a detection worthless (docs/verdict.md, "The profile against the timed calls").
#pragma once

#include <string>

namespace ptxbench {

/// Zeroes the memory that held the process's original argument and environment strings (the
/// kernel serves /proc/self/cmdline and /proc/self/environ from it). Call after clearenv() and after
/// the arguments were parsed into owned strings. Returns what was wiped, or why nothing was.
/// @warning Any pointer into the original strings (argv[i], an old getenv() result) reads "" afterwards.
std::string wipe_start_block();

/// How much of /proc a restricted thread may read.
enum class ProcView {
  visible,  ///< no restriction
  hidden,   ///< own memory map, environment, command line, auxv, tasks and every other process unreadable
};

/// Restricts reading under /proc for the calling thread and the threads it starts afterwards
/// (Landlock: every top-level directory but /proc stays readable, and in /proc everything but the
/// process entries, of which only this process's harmless ones). Threads that exist already keep
/// their view. Returns "hidden (Landlock ABI n)" or why it could not (no Landlock on this kernel).
std::string restrict_proc_view();

}  // namespace ptxbench

// The processes the tool stages start (compute-sanitizer, ncu, CUPTI counting): the runner's
// one-call command in the runner's sandbox, and what the sandbox says when one of them failed.
#pragma once

#include <string>
#include <vector>

#include "common/fs.h"
#include "common/subprocess.h"
#include "evaluator/eval_options.h"

namespace ptxbench {

// Our own kernels (input fills, references, the probe) carry this in their names; a profile lists
// them beside the candidate's and they are never the candidate's.
inline constexpr const char* kOurKernels = "ptxb_internal_";

// A Triton candidate's tool runs start CPython, torch and Triton under the tool (compute-sanitizer
// intercepts every CUDA call of torch's start-up too): their time limits are this many times the
// CUDA candidate's, so that the start-up never reads as the candidate's hang.
inline constexpr double kTritonToolTimeFactor = 3.0;

/// The ptxbench-runner these options name (default: beside this executable).
std::string runner_path(const EvalOptions& o);

/// The runner's one-call command that compute-sanitizer and ncu start. In the sandbox's PID
/// namespace the tool is the first process, and its end ends the runner; without a sandbox the
/// runner watches this worker, its owner, so that a hang outlives neither (see exit_when_orphaned).
std::vector<std::string> once_command(const EvalOptions& o, const fs::path& library, const fs::path& spec, uint64_t seed,
                                      bool triton);

/// A tool stage's process: the tool and the runner in one sandbox that sees the candidate's build.
ProcessSpec tool_spec(const EvalOptions& o, const std::vector<std::string>& argv, const fs::path& scratch,
                      const std::vector<fs::path>& readable, bool keep_root = false);

/// What the sandbox says about a tool run whose runner failed: its memory limit, or a system call
/// it denied (the runner names it on stderr). Empty: neither.
std::string sandbox_finding(const ProcessSpec& spec, const ProcessResult& r);

}  // namespace ptxbench

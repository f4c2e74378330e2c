// Locating the CUDA command-line tools (nvcc, cuobjdump, ncu, compute-sanitizer).
#pragma once

#include <string>

namespace ptxbench {

/// Absolute path of a CUDA tool: $PTXBENCH_CUDA_HOME/bin, $CUDA_HOME/bin, /usr/local/cuda/bin,
/// then PATH. Empty when absent (callers decide whether that is an error or a skipped stage).
std::string find_cuda_tool(const std::string& name);

}  // namespace ptxbench

// The runner's own trusted kernel, launched before any candidate is loaded: the worker times calls
// of it through the same per-call handshake as the candidate's, which calibrates the overhead its
// own clock sees around a call of a known device span (docs/verdict.md, "host bound").
#pragma once

#include <cuda_runtime.h>

namespace ptxbench {

/// Launches one block that spins on the global timer for `us` microseconds.
void launch_probe_kernel(double us, cudaStream_t stream);

}  // namespace ptxbench

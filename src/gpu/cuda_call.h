// Checking macros for every CUDA-family call: a failure throws LibraryCallError carrying the
// library, file:line, the call text and the status name. *_NOEXCEPT twins log instead (for
// destructors).
#pragma once

#include <cuda_runtime.h>

#include "gpu/checked_call.h"

#define PTXB_CUDA_CALL(expr) PTXB_CHECKED_CALL("CUDA runtime", cudaError_t, cudaSuccess, cudaGetErrorName, (expr), #expr)

#define PTXB_CUDA_CALL_NOEXCEPT(expr) \
  PTXB_CHECKED_CALL_NOEXCEPT(cudaError_t, cudaSuccess, cudaGetErrorName, (expr), #expr)

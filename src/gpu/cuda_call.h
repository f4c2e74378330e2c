// Checking macros for every CUDA-family call: a failure throws LibraryCallError carrying the
// library, file:line, the call text and the status name. *_NOEXCEPT twins log instead (for
// destructors).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>

#include "common/error.h"

#define PTXB_CUDA_CALL(expr)                                                                    \
  do {                                                                                          \
    cudaError_t ptxb_status_ = (expr);                                                          \
    if (ptxb_status_ != cudaSuccess)                                                            \
      ::ptxbench::detail::throw_call_error("CUDA runtime", ptxb_status_,                        \
                                           cudaGetErrorName(ptxb_status_), #expr, __FILE__,     \
                                           __LINE__);                                           \
  } while (0)

#define PTXB_CUDA_CALL_NOEXCEPT(expr)                                                           \
  do {                                                                                          \
    cudaError_t ptxb_status_ = (expr);                                                          \
    if (ptxb_status_ != cudaSuccess)                                                            \
      std::fprintf(stderr, "ptxbench: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,      \
                   cudaGetErrorName(ptxb_status_));                                             \
  } while (0)

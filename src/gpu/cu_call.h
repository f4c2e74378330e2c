// Checking macros for CUDA driver API calls (the runtime's twins are in cuda_call.h): a failure
// throws LibraryCallError("CUDA driver", ...) with file:line, the call text and the status name.
// Driver functions themselves come through gpu/driver_entry.h (no link-time libcuda).
#pragma once

#include <cuda.h>

#include <cstdio>

#include "common/error.h"

namespace ptxbench::detail {
/// The status's name ("CUDA_ERROR_INVALID_VALUE"), through the driver's entry point.
const char* cu_error_name(CUresult r) noexcept;
}  // namespace ptxbench::detail

#define PTXB_CU_CALL(expr)                                                                                      \
  do {                                                                                                          \
    CUresult ptxb_cu_status_ = (expr);                                                                          \
    if (ptxb_cu_status_ != CUDA_SUCCESS)                                                                        \
      ::ptxbench::detail::throw_call_error("CUDA driver", ptxb_cu_status_,                                      \
                                           ::ptxbench::detail::cu_error_name(ptxb_cu_status_), #expr, __FILE__, \
                                           __LINE__);                                                           \
  } while (0)

#define PTXB_CU_CALL_NOEXCEPT(expr)                                                                   \
  do {                                                                                                \
    CUresult ptxb_cu_status_ = (expr);                                                                \
    if (ptxb_cu_status_ != CUDA_SUCCESS)                                                              \
      std::fprintf(stderr, "ptxbench: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,            \
                   ::ptxbench::detail::cu_error_name(ptxb_cu_status_));                               \
  } while (0)

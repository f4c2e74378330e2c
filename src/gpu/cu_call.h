// Checking macros for CUDA driver API calls (the runtime's twins are in cuda_call.h): a failure
// throws LibraryCallError("CUDA driver", ...) with file:line, the call text and the status name.
// Driver functions themselves come through gpu/driver_entry.h (no link-time libcuda).
#pragma once

#include <cuda.h>

#include "gpu/checked_call.h"

namespace ptxbench::detail {
/// The status's name ("CUDA_ERROR_INVALID_VALUE"), through the driver's entry point.
const char* cu_error_name(CUresult r) noexcept;
}  // namespace ptxbench::detail

#define PTXB_CU_CALL(expr) \
  PTXB_CHECKED_CALL("CUDA driver", CUresult, CUDA_SUCCESS, ::ptxbench::detail::cu_error_name, (expr), #expr)

#define PTXB_CU_CALL_NOEXCEPT(expr) \
  PTXB_CHECKED_CALL_NOEXCEPT(CUresult, CUDA_SUCCESS, ::ptxbench::detail::cu_error_name, (expr), #expr)

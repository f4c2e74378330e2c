// Checking macro for CUPTI calls: a failure throws LibraryCallError naming CUPTI, file:line, the
// call text and CUPTI's result string (gpu/checked_call.h, as gpu/cuda_call.h).
#pragma once

#include <cupti_result.h>

#include "gpu/checked_call.h"

namespace ptxbench::detail {
/// CUPTI's text of a result ("?" when it has none).
inline const char* cupti_result_text(CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  return text ? text : "?";
}
}  // namespace ptxbench::detail

#define PTXB_CUPTI_CALL(expr) \
  PTXB_CHECKED_CALL("CUPTI", CUptiResult, CUPTI_SUCCESS, ::ptxbench::detail::cupti_result_text, (expr), #expr)

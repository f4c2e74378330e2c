// Checking macro for CUPTI calls: a failure throws LibraryCallError naming CUPTI, file:line, the
// call text and CUPTI's result string (the same shape as gpu/cuda_call.h).
#pragma once

#include <cupti_result.h>

#include "common/error.h"

#define PTXB_CUPTI_CALL(expr)                                                                    \
  do {                                                                                           \
    CUptiResult ptxb_status_ = (expr);                                                           \
    if (ptxb_status_ != CUPTI_SUCCESS) {                                                         \
      const char* ptxb_text_ = nullptr;                                                          \
      cuptiGetResultString(ptxb_status_, &ptxb_text_);                                           \
      ::ptxbench::detail::throw_call_error("CUPTI", ptxb_status_, ptxb_text_ ? ptxb_text_ : "?", \
                                           #expr, __FILE__, __LINE__);                           \
    }                                                                                            \
  } while (0)

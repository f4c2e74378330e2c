// The body of the checking macros of every CUDA-family library (cuda_call.h, cu_call.h): the
// library's status type, its success value and the function that names a status are the
// arguments; the call's text comes from the caller's macro, as the call was written.
#pragma once

#include <cstdio>

#include "common/error.h"

/// Throws LibraryCallError(library, ...) with file:line, the call text and `name(status)` unless
/// `expr` returns `ok`.
#define PTXB_CHECKED_CALL(library, Status, ok, name, expr, text)                                               \
  do {                                                                                                         \
    Status ptxb_status_ = (expr);                                                                              \
    if (ptxb_status_ != (ok))                                                                                  \
      ::ptxbench::detail::throw_call_error((library), ptxb_status_, name(ptxb_status_), (text), __FILE__,      \
                                           __LINE__);                                                          \
  } while (0)

/// The twin for destructors: logs the failure to stderr instead of throwing.
#define PTXB_CHECKED_CALL_NOEXCEPT(Status, ok, name, expr, text)                                               \
  do {                                                                                                         \
    Status ptxb_status_ = (expr);                                                                              \
    if (ptxb_status_ != (ok))                                                                                  \
      std::fprintf(stderr, "ptxbench: %s:%d: %s failed: %s\n", __FILE__, __LINE__, (text),                     \
                   name(ptxb_status_));                                                                        \
  } while (0)

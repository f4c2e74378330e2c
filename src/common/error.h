// Typed errors: every failure carries the library it came from, file:line and the failing call.
// Library code throws; only process mains catch and report (STYLE habit 1).
#pragma once

#include <stdexcept>
#include <string>

namespace ptxbench {

/// Base error: `library` names the component ("CUDA runtime", "cuBLASLt", "definitions", ...).
class Error : public std::runtime_error {
 public:
  Error(std::string library, const std::string& message)
      : std::runtime_error(library + ": " + message), m_library(std::move(library)) {}
  [[nodiscard]] const std::string& library() const noexcept { return m_library; }

 private:
  std::string m_library;
};

/// A bad input from a user or a model (malformed definition, request, option): never our bug.
class InputError : public Error {
 public:
  using Error::Error;
};

/// The host is missing a tool or a device we need (no GPU, no ncu): an infrastructure problem.
class EnvironmentError : public Error {
 public:
  using Error::Error;
};

/// A failed call into a GPU library, with its numeric status.
class LibraryCallError : public Error {
 public:
  LibraryCallError(std::string library, long code, const std::string& message)
      : Error(std::move(library), message), m_code(code) {}
  [[nodiscard]] long code() const noexcept { return m_code; }

 private:
  long m_code;
};

namespace detail {
[[noreturn]] void throw_call_error(const char* library, long code, const char* code_text,
                                   const char* call, const char* file, int line);
std::string where(const char* file, int line);
}  // namespace detail

}  // namespace ptxbench

/// Throws ptxbench::Error(library, message) with file:line when `cond` is false.
#define PTXB_ENSURE(cond, library, message)                                                  \
  do {                                                                                       \
    if (!(cond))                                                                             \
      throw ::ptxbench::Error((library), ::ptxbench::detail::where(__FILE__, __LINE__) +    \
                                             ": " + std::string(message));                  \
  } while (0)

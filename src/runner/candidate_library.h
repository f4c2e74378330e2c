// The candidate's shared library, loaded with dlopen and closed on destruction. Its code runs
// inside a CandidateCodeScope (candidate_exit.h) while it loads (its constructors) and in every
// call through entry(), so an exit() or abort() of the candidate is reported as its failure.
#pragma once

#include <string>

#include "ptxbench_abi.h"

namespace ptxbench {

using CandidateEntry = int (*)(const ptxb_tensor*, int32_t, cudaStream_t);

class CandidateLibrary {
 public:
  /// Throws Error("runner", ...) with dlerror's text when the library or ptxb_run is missing, or
  /// when another candidate library is loaded in this process (a runner loads one).
  explicit CandidateLibrary(const std::string& path);
  ~CandidateLibrary();
  CandidateLibrary(const CandidateLibrary&) = delete;
  CandidateLibrary& operator=(const CandidateLibrary&) = delete;
  /// ptxb_run, called inside a CandidateCodeScope.
  [[nodiscard]] CandidateEntry entry() const noexcept;
  /// Another exported symbol, or nullptr (the Triton shim's extra entry points).
  [[nodiscard]] void* symbol(const char* name) const noexcept;
  /// The candidate's ptxb_last_error() text (cut at 4 KiB), or "" when it exports none: why its
  /// last call returned nonzero, in its own words (the TVM-FFI binding fills it).
  [[nodiscard]] std::string last_error() const;

 private:
  void* m_handle = nullptr;
  const char* (*m_last_error)() = nullptr;
};

}  // namespace ptxbench

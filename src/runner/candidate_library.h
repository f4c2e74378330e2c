// The candidate's shared library, loaded with dlopen and closed on destruction.
#pragma once

#include <string>

#include "ptxbench_abi.h"

namespace ptxbench {

using CandidateEntry = int (*)(const ptxb_tensor*, int32_t, cudaStream_t);

class CandidateLibrary {
 public:
  /// Throws Error("runner", ...) with dlerror's text when the library or ptxb_run is missing.
  explicit CandidateLibrary(const std::string& path);
  ~CandidateLibrary();
  CandidateLibrary(const CandidateLibrary&) = delete;
  CandidateLibrary& operator=(const CandidateLibrary&) = delete;
  [[nodiscard]] CandidateEntry entry() const noexcept { return m_entry; }
  /// Another exported symbol, or nullptr (the Triton shim's extra entry points).
  [[nodiscard]] void* symbol(const char* name) const noexcept;

 private:
  void* m_handle = nullptr;
  CandidateEntry m_entry = nullptr;
};

}  // namespace ptxbench

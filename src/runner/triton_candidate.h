// The runner's handle on a Triton candidate: the trusted shim library (src/runner/triton_shim.cpp)
// loaded before the system-call filter, prepared there (Python, torch, Triton, the argument views),
// and told to import candidate.py once the filter is on (docs/triton.md, "The GPU side").
#pragma once

#include <memory>
#include <string>

#include "runner/candidate_library.h"

namespace ptxbench {

class TritonCandidate {
 public:
  /// Loads the shim (trusted: no candidate code runs in it). Throws Error("runner", ...).
  explicit TritonCandidate(const std::string& shim_path);
  /// Before the filter: starts Python and imports torch and Triton; views the arguments.
  /// Throws Error("runner", ...) with the shim's message (an unusable host: our fault).
  void prepare(int device, const ptxb_tensor* args, int32_t nargs, cudaStream_t stream);
  /// Under the filter: imports candidate.py. Throws Error("runner", ...) with its traceback.
  void load();
  /// ptxb_run of the shim.
  [[nodiscard]] CandidateEntry entry() const noexcept { return m_library->entry(); }
  /// What failed in the last call (the Python traceback), for the verdict's message.
  [[nodiscard]] std::string last_error() const;
  /// {"python":..., "torch":..., "triton":...} as the shim imported them.
  [[nodiscard]] std::string versions() const;

 private:
  std::unique_ptr<CandidateLibrary> m_library;
  int (*m_prepare)(int, const ptxb_tensor*, int32_t, cudaStream_t) = nullptr;
  int (*m_load)() = nullptr;
  const char* (*m_last_error)() = nullptr;
  const char* (*m_versions)() = nullptr;
};

}  // namespace ptxbench

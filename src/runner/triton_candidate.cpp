#include "runner/triton_candidate.h"

#include "common/error.h"

namespace ptxbench {

TritonCandidate::TritonCandidate(const std::string& shim_path)
    : m_library(std::make_unique<CandidateLibrary>(shim_path)) {
  m_prepare = reinterpret_cast<decltype(m_prepare)>(m_library->symbol("ptxb_triton_prepare"));
  m_load = reinterpret_cast<decltype(m_load)>(m_library->symbol("ptxb_triton_load"));
  m_last_error = reinterpret_cast<decltype(m_last_error)>(m_library->symbol("ptxb_triton_last_error"));
  m_versions = reinterpret_cast<decltype(m_versions)>(m_library->symbol("ptxb_triton_versions"));
  if (!m_prepare || !m_load || !m_last_error || !m_versions)
    throw Error("runner", shim_path + " is not the Triton shim (ptxb_triton_* entry points missing)");
}

void TritonCandidate::prepare(int device, const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  if (m_prepare(device, args, nargs, stream) != 0)
    throw Error("runner", "the Triton runtime could not start: " + last_error());
}

void TritonCandidate::load() {
  if (m_load() != 0) throw Error("runner", last_error());
}

std::string TritonCandidate::last_error() const {
  const char* e = m_last_error();
  return e ? e : "";
}

std::string TritonCandidate::versions() const {
  const char* v = m_versions();
  return v ? v : "{}";
}

}  // namespace ptxbench

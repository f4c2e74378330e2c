#include "runner/candidate_library.h"

#include <dlfcn.h>

#include "common/error.h"

namespace ptxbench {

CandidateLibrary::CandidateLibrary(const std::string& path) {
  m_handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m_handle) throw Error("runner", std::string("cannot load the candidate: ") + dlerror());
  m_entry = reinterpret_cast<CandidateEntry>(dlsym(m_handle, "ptxb_run"));
  if (!m_entry) {
    std::string err = dlerror() ? dlerror() : "ptxb_run not found";
    dlclose(m_handle);
    throw Error("runner", "the candidate does not export ptxb_run: " + err);
  }
}

void* CandidateLibrary::symbol(const char* name) const noexcept { return dlsym(m_handle, name); }

CandidateLibrary::~CandidateLibrary() {
  // Deliberately not dlclose'd: a candidate's module may still hold CUDA state that the runtime
  // tears down at exit; unloading its code first would crash the teardown.
}

}  // namespace ptxbench

#include "runner/candidate_library.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>

#include "common/error.h"
#include "runner/candidate_exit.h"

namespace ptxbench {
namespace {

// The loaded candidate's ptxb_run; entry() hands out scoped_entry, which calls it inside a
// scope. A plain function pointer keeps the runner's call sites and their cost as they were.
std::atomic<CandidateEntry> g_entry{nullptr};

int scoped_entry(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  CandidateCodeScope scope(false);
  return g_entry.load(std::memory_order_relaxed)(args, nargs, stream);
}

}  // namespace

CandidateLibrary::CandidateLibrary(const std::string& path) {
  if (g_entry.load()) throw Error("runner", "a candidate library is loaded already");
  {
    CandidateCodeScope scope(true);  // its constructors run inside dlopen
    m_handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (!m_handle) throw Error("runner", std::string("cannot load the candidate: ") + dlerror());
  auto entry = reinterpret_cast<CandidateEntry>(dlsym(m_handle, "ptxb_run"));
  if (!entry) {
    std::string err = dlerror() ? dlerror() : "ptxb_run not found";
    dlclose(m_handle);
    throw Error("runner", "the candidate does not export ptxb_run: " + err);
  }
  m_last_error = reinterpret_cast<const char* (*)()>(dlsym(m_handle, "ptxb_last_error"));
  g_entry.store(entry);
}

CandidateEntry CandidateLibrary::entry() const noexcept { return &scoped_entry; }

void* CandidateLibrary::symbol(const char* name) const noexcept { return dlsym(m_handle, name); }

std::string CandidateLibrary::last_error() const {
  if (!m_last_error) return "";
  const char* text = nullptr;
  {
    CandidateCodeScope scope(false);  // the candidate's code, like any other of its functions
    text = m_last_error();
  }
  return text ? std::string(text, strnlen(text, 4096)) : std::string();
}

CandidateLibrary::~CandidateLibrary() {
  // Deliberately not dlclose'd: a candidate's module may still hold CUDA state that the runtime
  // tears down at exit; unloading its code first would crash the teardown.
}

}  // namespace ptxbench

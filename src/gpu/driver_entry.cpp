#include "gpu/driver_entry.h"

#include <cuda_runtime.h>

#include <string>

#include "common/error.h"
#include "gpu/cu_call.h"
#include "gpu/cuda_call.h"

namespace ptxbench {

void* driver_symbol(const char* name, unsigned version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  PTXB_CUDA_CALL(cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found));
  if (!fn || found != cudaDriverEntryPointSuccess) throw EnvironmentError("CUDA driver", std::string("no entry point ") + name);
  return fn;
}

namespace detail {
const char* cu_error_name(CUresult r) noexcept {
  try {
    const char* name = nullptr;
    auto get_name = driver_function<CUresult (*)(CUresult, const char**)>("cuGetErrorName");
    if (get_name(r, &name) == CUDA_SUCCESS && name) return name;
  } catch (...) {
  }
  return "CUDA_ERROR_UNKNOWN";
}
}  // namespace detail

}  // namespace ptxbench

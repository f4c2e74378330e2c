// The runner's cudaSetDevice, which a candidate library's calls bind to (runner_symbols.list,
// runner_symbols.map.in). The field's kernels write cudaSetDevice(t.device().device_id) before
// they launch: to the device the evaluation runs on that is a no-op, and it is answered as one.
// Any other device is refused with cudaErrorInvalidDevice, as if the runner saw no other GPU (it
// may: the sandbox lends it every GPU's device node and passes CUDA_VISIBLE_DEVICES through as it
// is), so a candidate cannot move the runner's thread onto a GPU that other evaluations use; a
// CUDA_CHECK around the call then fails the call as RUNTIME_ERROR (candidate_exit.h).
//
// NOTES: the definition carries the CUDA runtime's symbol version (libcudart.so.<major> of the
// toolkit this is built with, the one candidates are compiled with), so only callers linked
// against that runtime bind to it. A library linked against another major version (torch's own
// runtime, loaded by the Triton shim) keeps its own cudaSetDevice: forwarding its calls to ours
// would select the device in the wrong runtime.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "runner/candidate_exit.h"

namespace {

using SetDeviceFunction = cudaError_t (*)(int);
// The CUDA runtime's own, looked up before main (before the system-call filter is installed).
const SetDeviceFunction g_next_set_device = reinterpret_cast<SetDeviceFunction>(dlsym(RTLD_NEXT, "cudaSetDevice"));

}  // namespace

extern "C" cudaError_t cudaSetDevice(int device) {
  if (ptxbench::candidate_code_running()) {
    int current = -1;
    if (cudaGetDevice(&current) == cudaSuccess && current == device) return cudaSuccess;
    return cudaErrorInvalidDevice;
  }
  return g_next_set_device ? g_next_set_device(device) : cudaErrorInvalidDevice;
}

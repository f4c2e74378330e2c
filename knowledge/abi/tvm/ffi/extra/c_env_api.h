// ptxbench's TVM-FFI binding: the environment's CUDA stream. TVMFFIEnvGetStream returns the stream
// the evaluator passed for the current call (launch your kernels on it); outside a call, or for
// another device, it returns NULL (the legacy default stream). Written for ptxbench from the
// TVM-FFI documentation.
#ifndef TVM_FFI_EXTRA_C_ENV_API_H_
#define TVM_FFI_EXTRA_C_ENV_API_H_

#include <dlpack/dlpack.h>

#include <cstdint>

/// A stream of the device's API: a cudaStream_t for kDLCUDA.
typedef void* TVMFFIStreamHandle;

namespace tvm {
namespace ffi {
namespace details {

/// What ptxb_run (tvm/ffi/function.h) sets for the length of one call.
struct CallEnvironment {
  TVMFFIStreamHandle stream = nullptr;
  int32_t device_id = -1;
  bool in_call = false;
};
inline CallEnvironment g_call_environment;

}  // namespace details
}  // namespace ffi
}  // namespace tvm

/// The stream to launch on for (device_type, device_id): cudaStream_t stream =
/// static_cast<cudaStream_t>(TVMFFIEnvGetStream(t.device().device_type, t.device().device_id));
inline TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id) {
  const auto& env = ::tvm::ffi::details::g_call_environment;
  if (!env.in_call || device_type != kDLCUDA || device_id != env.device_id) return nullptr;
  return env.stream;
}

#endif  // TVM_FFI_EXTRA_C_ENV_API_H_

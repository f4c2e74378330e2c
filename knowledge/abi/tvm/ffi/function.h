// ptxbench's TVM-FFI binding: TVM_FFI_DLL_EXPORT_TYPED_FUNC and the ptxb_run it stands behind.
// Written for ptxbench from the TVM-FFI documentation, so that a kernel written the way the field
// writes them (PTXBench, FlashInfer-Bench: `void run(TensorView A, TensorView B, TensorView C)`,
// exported with TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run)) builds as a ptxbench candidate unchanged.
//
// How a call runs: the evaluator calls ptxb_run (ptxbench_abi.h) with the definition's tensors,
// inputs then outputs. ptxb_run views each as a DLTensor (device {kDLCUDA, the current device}),
// makes `stream` the one TVMFFIEnvGetStream returns, and calls the exported function with one
// TensorView per parameter. It returns nonzero, with the reason in ptxb_last_error(), when the
// parameter count differs from the tensor count, when the function throws (tvm::ffi::Error from
// TVM_FFI_THROW/TVM_FFI_ICHECK, or any other exception), or when a kernel launch it made failed.
//
// Which export is called: the only one, or else the one named PTXB_TVM_FFI_ENTRY ("run" unless
// defined before this header is included; a FlashInfer-Bench Solution's entry point sets it).
#ifndef TVM_FFI_FUNCTION_H_
#define TVM_FFI_FUNCTION_H_

#include <cuda_runtime.h>
#include <dlpack/dlpack.h>
#include <ptxbench_abi.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <type_traits>
#include <utility>

#ifndef PTXB_TVM_FFI_ENTRY
#define PTXB_TVM_FFI_ENTRY "run"
#endif

namespace tvm {
namespace ffi {
namespace details {

inline constexpr int kMaxExports = 16;
inline constexpr int kMaxTensors = 32;

using ExportedCall = int (*)(const DLTensor* tensors, int32_t count);
struct ExportEntry {
  const char* name;
  ExportedCall call;
};
inline ExportEntry g_exports[kMaxExports] = {};
inline int g_export_count = 0;
inline char g_last_error[4096] = {};

inline void set_last_error(const char* text) { std::snprintf(g_last_error, sizeof g_last_error, "%s", text); }

/// Called at load time (a constructor of the library) for each TVM_FFI_DLL_EXPORT_TYPED_FUNC.
inline void register_export(const char* name, ExportedCall call) {
  if (g_export_count < kMaxExports) g_exports[g_export_count++] = {name, call};
}

template <class T>
struct IsTensorParameter : std::false_type {};
template <>
struct IsTensorParameter<TensorView> : std::true_type {};
template <>
struct IsTensorParameter<Tensor> : std::true_type {};

template <class R, class... A, std::size_t... I>
void call_with_views(R (*fn)(A...), const DLTensor* tensors, std::index_sequence<I...>) {
  (void)fn(std::decay_t<A>(&tensors[I])...);
}

template <class R, class... A>
int invoke(R (*fn)(A...), const DLTensor* tensors, int32_t count) {
  static_assert((IsTensorParameter<std::decay_t<A>>::value && ...),
                "TVM_FFI_DLL_EXPORT_TYPED_FUNC under ptxbench: the evaluator passes the definition's tensors "
                "(inputs then outputs) and nothing else, so every parameter must be a tvm::ffi::TensorView");
  if (count != static_cast<int32_t>(sizeof...(A))) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "ValueError: the exported function takes %d tensors; the definition passes %d "
                  "(its inputs, then its outputs)",
                  static_cast<int>(sizeof...(A)), static_cast<int>(count));
    set_last_error(text);
    return static_cast<int>(cudaErrorInvalidValue);
  }
  call_with_views(fn, tensors, std::index_sequence_for<A...>{});
  return 0;
}

template <auto Function>
int exported_call(const DLTensor* tensors, int32_t count) {
  return invoke(Function, tensors, count);
}

inline DLDataType dl_dtype(int32_t ptxb_dtype) {
  switch (ptxb_dtype) {
    case PTXB_BF16: return {static_cast<uint8_t>(kDLBfloat), 16, 1};
    case PTXB_F16: return {static_cast<uint8_t>(kDLFloat), 16, 1};
    case PTXB_F32: return {static_cast<uint8_t>(kDLFloat), 32, 1};
    case PTXB_I32: return {static_cast<uint8_t>(kDLInt), 32, 1};
    case PTXB_I64: return {static_cast<uint8_t>(kDLInt), 64, 1};
    case PTXB_F8E4M3: return {static_cast<uint8_t>(kDLFloat8_e4m3fn), 8, 1};
    default: return {static_cast<uint8_t>(kDLOpaqueHandle), 0, 1};
  }
}

inline const ExportEntry* find_entry() {
  if (g_export_count == 1) return &g_exports[0];
  for (int i = 0; i < g_export_count; ++i)
    if (std::strcmp(g_exports[i].name, PTXB_TVM_FFI_ENTRY) == 0) return &g_exports[i];
  return nullptr;
}

/// The environment of one call, undone however the call ends.
struct CallScope {
  CallScope(cudaStream_t stream, int32_t device) {
    g_call_environment = {static_cast<TVMFFIStreamHandle>(stream), device, true};
  }
  ~CallScope() { g_call_environment = CallEnvironment{}; }
};

inline int run_entry(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  g_last_error[0] = '\0';
  const ExportEntry* entry = find_entry();
  if (!entry) {
    set_last_error(g_export_count == 0
                       ? "ValueError: the file exports no function: end it with "
                         "TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, <your function>)"
                       : "ValueError: the file exports several functions and none is named " PTXB_TVM_FFI_ENTRY);
    return static_cast<int>(cudaErrorInvalidValue);
  }
  if (nargs < 0 || nargs > kMaxTensors || (nargs > 0 && !args)) {
    set_last_error("ValueError: unexpected argument count");
    return static_cast<int>(cudaErrorInvalidValue);
  }
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return static_cast<int>(status);
  DLTensor tensors[kMaxTensors];
  for (int32_t i = 0; i < nargs; ++i) {
    const ptxb_tensor& t = args[i];
    tensors[i] = DLTensor{t.data,
                          DLDevice{kDLCUDA, device},
                          t.ndim,
                          dl_dtype(t.dtype),
                          const_cast<int64_t*>(t.shape),
                          const_cast<int64_t*>(t.stride),
                          0};
  }
  try {
    CallScope scope(stream, device);
    int rc = entry->call(tensors, nargs);
    if (rc != 0) return rc;
  } catch (const Error& e) {
    set_last_error(e.what());
    const bool bad_input = e.kind() == "ValueError" || e.kind() == "TypeError" || e.kind() == "IndexError";
    return static_cast<int>(bad_input ? cudaErrorInvalidValue : cudaErrorUnknown);
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return static_cast<int>(cudaErrorUnknown);
  } catch (...) {
    set_last_error("the exported function threw an exception that is not a std::exception");
    return static_cast<int>(cudaErrorUnknown);
  }
  // A launch that failed (bad configuration, too much shared memory) left its error here; without
  // this the outputs would just stay unwritten.
  status = cudaGetLastError();
  if (status != cudaSuccess) {
    char text[512];
    std::snprintf(text, sizeof text, "a CUDA call or kernel launch failed: %s: %s", cudaGetErrorName(status),
                  cudaGetErrorString(status));
    set_last_error(text);
    return static_cast<int>(status);
  }
  return 0;
}

}  // namespace details
}  // namespace ffi
}  // namespace tvm

/// Exports `Function` under `ExportName`: TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, my_namespace::run);
/// Every parameter is a tvm::ffi::TensorView (the definition's inputs, then its outputs); the
/// return value, if any, is ignored. Usable at namespace scope, with or without a trailing ';'.
#define TVM_FFI_DLL_EXPORT_TYPED_FUNC(ExportName, Function)                                                 \
  __attribute__((constructor)) static void ptxb_tvm_ffi_register_##ExportName() {                          \
    ::tvm::ffi::details::register_export(#ExportName, &::tvm::ffi::details::exported_call<&(Function)>); \
  }

/// The ptxbench entry point behind the exported function (ptxbench_abi.h).
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  return ::tvm::ffi::details::run_entry(args, nargs, stream);
}

/// Why the last call returned nonzero; the evaluator reports it with the code.
PTXB_EXPORT const char* ptxb_last_error(void) { return ::tvm::ffi::details::g_last_error; }

#endif  // TVM_FFI_FUNCTION_H_

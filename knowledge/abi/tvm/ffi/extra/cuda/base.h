// ptxbench's TVM-FFI binding: TVM_FFI_CHECK_CUDA_ERROR, which turns a failed CUDA runtime call
// into a RuntimeError (the call then fails with the error's text). Written for ptxbench.
#ifndef TVM_FFI_EXTRA_CUDA_BASE_H_
#define TVM_FFI_EXTRA_CUDA_BASE_H_

#include <cuda_runtime.h>
#include <tvm/ffi/error.h>

#define TVM_FFI_CHECK_CUDA_ERROR(stmt)                                                               \
  do {                                                                                              \
    cudaError_t ptxb_tvm_ffi_status_ = (stmt);                                                      \
    if (ptxb_tvm_ffi_status_ != cudaSuccess)                                                        \
      TVM_FFI_THROW(RuntimeError) << #stmt << " failed: " << cudaGetErrorName(ptxb_tvm_ffi_status_) \
                                  << ": " << cudaGetErrorString(ptxb_tvm_ffi_status_);             \
  } while (0)

#endif  // TVM_FFI_EXTRA_CUDA_BASE_H_

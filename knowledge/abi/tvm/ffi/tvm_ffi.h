// ptxbench's TVM-FFI binding: everything a candidate kernel uses, in one include
// (#include <tvm/ffi/tvm_ffi.h>). Written for ptxbench; ABI.md ("The TVM-FFI binding") explains
// how an exported function is called.
#ifndef TVM_FFI_TVM_FFI_H_
#define TVM_FFI_TVM_FFI_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/base.h>
#include <tvm/ffi/function.h>

#endif  // TVM_FFI_TVM_FFI_H_

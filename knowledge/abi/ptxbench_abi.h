/* ptxbench candidate ABI (version 1).
 *
 * A candidate is one self-contained .cu file that exports ptxb_run(). The evaluator passes the
 * definition's inputs then its outputs, in definition order, as tensor views, and the CUDA stream
 * to launch on. The candidate writes every element of every output and returns 0, or a nonzero
 * code (a cudaError_t) that the verdict reports. See ABI.md beside this file. */
#ifndef PTXBENCH_ABI_H
#define PTXBENCH_ABI_H

#include <stdint.h>
#include <cuda_runtime.h>

#define PTXB_ABI_VERSION 1

/* Element types; values are part of the ABI. */
enum {
  PTXB_BF16 = 0,
  PTXB_F16 = 1,
  PTXB_F32 = 2,
  PTXB_I32 = 3,
  PTXB_I64 = 4,
  PTXB_F8E4M3 = 5
};

/* A strided view of device memory. Strides count elements, not bytes. */
typedef struct {
  void* data;
  int32_t dtype;
  int32_t ndim;
  int64_t shape[8];
  int64_t stride[8];
} ptxb_tensor;

#define PTXB_EXPORT extern "C" __attribute__((visibility("default")))

/* The one function a candidate exports. args = inputs then outputs in definition order
 * (GEMM: A, B, C; MHA forward: Q, K, V, O, LSE; MHA backward: Q, K, V, O, dO, LSE, dQ, dK, dV).
 * Launch all work on `stream` or on streams that you join back into it before returning. */
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream);

/* Optional: why the last call of ptxb_run returned nonzero (a NUL-terminated text owned by the
 * library). The evaluator reports it beside the code; the TVM-FFI binding (tvm/ffi/function.h)
 * defines it. */
PTXB_EXPORT const char* ptxb_last_error(void);

#endif /* PTXBENCH_ABI_H */

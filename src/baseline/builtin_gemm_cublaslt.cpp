// A trusted "candidate" that runs the cuBLASLt baseline through the candidate ABI. It exists for
// the A/A self-test: evaluated against itself, the speedup must come out 1.00 ± noise, which checks
// that the runner's and the worker's timing paths treat a kernel the same way. Never a submission.
#include <memory>

#include "baseline/gemm_cublaslt.h"

PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  static std::unique_ptr<ptxbench::GemmCublasLt> gemm;
  if (nargs != 3) return cudaErrorInvalidValue;
  int64_t M = args[0].shape[0], K = args[0].shape[1], N = args[1].shape[0];
  try {
    if (!gemm || !gemm->matches(M, N, K)) gemm = std::make_unique<ptxbench::GemmCublasLt>(M, N, K);
  } catch (...) {
    return cudaErrorUnknown;
  }
  return gemm->run(args, nargs, stream);
}

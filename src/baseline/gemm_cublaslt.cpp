#include "baseline/gemm_cublaslt.h"

#include "gpu/checked_call.h"

#define PTXB_CUBLAS_CALL(expr) \
  PTXB_CHECKED_CALL("cuBLASLt", cublasStatus_t, CUBLAS_STATUS_SUCCESS, cublasLtGetStatusName, (expr), #expr)

namespace ptxbench {
namespace {
constexpr std::size_t kWorkspaceBytes = 32u << 20;  // what cuBLAS recommends for Hopper
}

// Row-major C[M,N] = A[M,K]·B[N,K]ᵀ is column-major Cᵀ[N,M] = op_T(B as K×N) · (A as K×M):
// the "TN" problem cuBLAS is fastest at, with m = N, n = M.
GemmCublasLt::GemmCublasLt(int64_t M, int64_t N, int64_t K) : m_M(M), m_N(N), m_K(K), m_workspace(kWorkspaceBytes) {
  PTXB_CUBLAS_CALL(cublasLtCreate(&m_handle));
  PTXB_CUBLAS_CALL(cublasLtMatmulDescCreate(&m_desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  PTXB_CUBLAS_CALL(cublasLtMatmulDescSetAttribute(m_desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a));
  PTXB_CUBLAS_CALL(cublasLtMatmulDescSetAttribute(m_desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b));
  PTXB_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&m_a, CUDA_R_16BF, static_cast<uint64_t>(K), static_cast<uint64_t>(N), K));
  PTXB_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&m_b, CUDA_R_16BF, static_cast<uint64_t>(K), static_cast<uint64_t>(M), K));
  PTXB_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&m_c, CUDA_R_16BF, static_cast<uint64_t>(N), static_cast<uint64_t>(M), N));

  cublasLtMatmulPreference_t pref = nullptr;
  PTXB_CUBLAS_CALL(cublasLtMatmulPreferenceCreate(&pref));
  std::size_t ws = kWorkspaceBytes;
  PTXB_CUBLAS_CALL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(m_handle, m_desc, m_a, m_b, m_c, m_c, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  PTXB_CUBLAS_CALL(st);
  if (found == 0) throw Error("cuBLASLt", "no algorithm for this GEMM shape");
  m_algo = result.algo;
}

GemmCublasLt::~GemmCublasLt() {
  if (m_c) cublasLtMatrixLayoutDestroy(m_c);
  if (m_b) cublasLtMatrixLayoutDestroy(m_b);
  if (m_a) cublasLtMatrixLayoutDestroy(m_a);
  if (m_desc) cublasLtMatmulDescDestroy(m_desc);
  if (m_handle) cublasLtDestroy(m_handle);
}

int GemmCublasLt::run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  if (nargs != 3) return cudaErrorInvalidValue;
  const float alpha = 1.0f, beta = 0.0f;
  // cuBLASLt's "A" is our B and its "B" is our A (see the constructor).
  cublasStatus_t st = cublasLtMatmul(m_handle, m_desc, &alpha, args[1].data, m_a, args[0].data, m_b, &beta,
                                     args[2].data, m_c, args[2].data, m_c, &m_algo, m_workspace.get(),
                                     m_workspace.bytes(), stream);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : static_cast<int>(cudaErrorUnknown);
}

}  // namespace ptxbench

// Trusted references for selected rows only: what the worker checks after *every* timed call
// (the spot check, docs/verdict.md "Measurement integrity"), so a candidate that skips or
// shortcuts some calls is caught. Each row costs O(N·K) (GEMM) or O(S·D) (attention) instead of
// the whole output; fp32 arithmetic, the same math as gemm_reference.h and mha_reference.h.
// `rows` point to device memory (int64 indices); outputs are row after row.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "reference/mha_reference.h"

namespace ptxbench {

/// out[r][n] = Σ_k A[rows[r]][k]·B[n][k] for r < n_rows (C = A·Bᵀ, A[M,K], B[N,K]).
void gemm_reference_rows(const __nv_bfloat16* A, const __nv_bfloat16* B, const int64_t* rows, int64_t n_rows,
                         float* out, int64_t N, int64_t K, cudaStream_t stream);

/// Scratch floats the attention row references need for `n_rows` rows.
int64_t mha_rows_scratch_floats(const AttentionDims& dims, int64_t n_rows);

/// Forward: for each row (= head·S + query): O row (D floats, into O_rows) and its LSE.
void mha_forward_reference_rows(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                                const int64_t* rows, int64_t n_rows, float* O_rows, float* LSE_rows,
                                float* scratch, const AttentionDims& dims, cudaStream_t stream);

/// Backward, D_i = Σ_d dO_id·O_id for every query row (heads·S floats), which the rows below need.
void mha_backward_delta(const __nv_bfloat16* O, const __nv_bfloat16* dO, float* delta, const AttentionDims& dims,
                        cudaStream_t stream);
/// Backward: dQ rows for query rows `rows`.
void mha_backward_dq_rows(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                          const __nv_bfloat16* dO, const float* LSE, const float* delta, const int64_t* rows,
                          int64_t n_rows, float* dQ_rows, float* scratch, const AttentionDims& dims,
                          cudaStream_t stream);
/// Backward: dK and dV rows for key rows `rows`.
void mha_backward_dkdv_rows(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                            const __nv_bfloat16* dO, const float* LSE, const float* delta, const int64_t* rows,
                            int64_t n_rows, float* dK_rows, float* dV_rows, float* scratch, const AttentionDims& dims,
                            cudaStream_t stream);

}  // namespace ptxbench

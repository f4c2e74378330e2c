// Trusted multi-head attention references (forward with LSE, backward) for layout [B, H, S, D],
// contiguous, bf16 inputs, fp32 arithmetic throughout, scale 1/√D. Chosen for obviousness over
// speed: the score matrix is formed explicitly, softmax is a plain two-pass row operation, and
// every product is a tiled fp32 GEMM. Memory stays bounded: heads (or query rows of one head) are
// processed in chunks whose S×S scratch fits a fixed budget, so S = 16384 at B·H = 192 works.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ptxbench {

struct AttentionDims {
  int64_t heads = 0;                  ///< B·H: the heads are independent problems laid out one after another
  int64_t seq = 0;                    ///< S (queries = keys)
  int64_t dim = 0;                    ///< D (head dimension)
  bool causal = false;                ///< query i attends to keys j ≤ i
  [[nodiscard]] float scale() const;  ///< 1/√D
};

/// O = softmax(scale·Q·Kᵀ [masked])·V, LSE_i = ln Σ_j exp(scale·Q_i·K_j) over the attended keys.
/// O and LSE in fp32 (the reference outputs of a forward evaluation).
void mha_forward_reference(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, float* O, float* LSE,
                           const AttentionDims& dims, cudaStream_t stream);
/// The same, with O rounded to bf16: the derived inputs O and LSE of a backward trial.
void mha_forward_reference(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O,
                           float* LSE, const AttentionDims& dims, cudaStream_t stream);

/// dQ, dK, dV (fp32) of O = softmax(scale·Q·Kᵀ)·V for the upstream gradient dO, by the standard
/// derivation from the given forward state (as FlashAttention and cuDNN compute it):
///   P = exp(scale·Q·Kᵀ − LSE) (0 where masked), dV = Pᵀ·dO, dP = dO·Vᵀ, D_i = Σ_d dO_id·O_id,
///   dS = P∘(dP − D), dQ = scale·dS·K, dK = scale·dSᵀ·Q.
/// With O and LSE from the trusted forward this is the gradient of Σ dO∘O (checked against finite
/// differences in the GPU tests).
void mha_backward_reference(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                            const __nv_bfloat16* O, const __nv_bfloat16* dO, const float* LSE, float* dQ, float* dK,
                            float* dV, const AttentionDims& dims, cudaStream_t stream);

}  // namespace ptxbench

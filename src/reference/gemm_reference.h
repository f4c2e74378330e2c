// Trusted GEMM reference: C[M,N] = A[M,K] · B[N,K]ᵀ from bf16 inputs with fp32 products and fp32
// accumulation, fp32 output. Plain CUDA-core code, chosen for obviousness over speed.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ptxbench {

void gemm_reference(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int64_t M, int64_t N,
                    int64_t K, cudaStream_t stream);

}  // namespace ptxbench

// The two small kernels around the cuDNN GQA plan: base-e → base-2 lse, and a padded page table
// built from a packed one (only for cuDNN builds that refuse packed page tables).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace ptxbench {

/// x[i] *= factor for i < n, on `stream`. Returns the launch's error.
cudaError_t launch_scale_f32(float* x, int64_t n, float factor, cudaStream_t stream);

/// table[b·width + j] = indices[indptr[b] + j] for j < indptr[b+1] − indptr[b], else 0 (a valid
/// page that the padding mask hides), for b < batch. Returns the launch's error.
cudaError_t launch_pad_page_table(const int32_t* indptr, const int32_t* indices, int64_t batch, int64_t width,
                                  int32_t* table, cudaStream_t stream);

}  // namespace ptxbench

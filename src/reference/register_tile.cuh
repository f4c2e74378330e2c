// The fp32 register tile of the reference GEMMs (gemm_reference.cu, mha_reference.cu): a block of
// 16×16 threads computes a kTile × kTile output tile; per step it stages a kDepth-deep slice of
// each operand k-major in shared memory, and every thread accumulates its kPer × kPer outputs in
// registers. The FMA order is fixed here, so both references round alike.
#pragma once

namespace ptxbench::reference {

constexpr int kTile = 64;   // output tile per block (kTile × kTile)
constexpr int kDepth = 16;  // reduction slice staged in shared memory per step
constexpr int kPer = 4;     // outputs per thread along each dimension (16×16 threads)

using SharedSlice = float[kDepth][kTile];

/// acc[i][j] += Σ_kk As[kk][ty·kPer + i] · Bs[kk][tx·kPer + j] over the staged slice.
__device__ __forceinline__ void accumulate_slice(const SharedSlice& As, const SharedSlice& Bs, int ty, int tx,
                                                 float (&acc)[kPer][kPer]) {
#pragma unroll
  for (int kk = 0; kk < kDepth; ++kk) {
    float a[kPer], b[kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      a[i] = As[kk][ty * kPer + i];
      b[i] = Bs[kk][tx * kPer + i];
    }
#pragma unroll
    for (int i = 0; i < kPer; ++i)
#pragma unroll
      for (int j = 0; j < kPer; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

}  // namespace ptxbench::reference

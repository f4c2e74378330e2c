// The pack's make_tensor_map_2d calls the driver's cuTensorMapEncodeTiled. Candidates link libcuda;
// this test binary must start on hosts without a driver (it reports skipped there), so the symbol is
// provided here and forwarded to the driver through the runtime's entry-point lookup.
#include <cuda.h>
#include <cuda_runtime.h>

extern "C" CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank,
                                                   void* base, const cuuint64_t* dims, const cuuint64_t* strides,
                                                   const cuuint32_t* box, const cuuint32_t* elem_strides,
                                                   CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                                   CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  using Fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                          const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                          CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static Fn fn = nullptr;
  if (!fn) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess || !p)
      return CUDA_ERROR_NOT_FOUND;
    fn = reinterpret_cast<Fn>(p);
  }
  return fn(map, dtype, rank, base, dims, strides, box, elem_strides, interleave, swizzle, l2, oob);
}

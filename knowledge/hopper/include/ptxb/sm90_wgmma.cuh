// ptxb Hopper templates: warpgroup MMA (wgmma) with bf16 inputs and fp32 accumulators.
// A warpgroup is 4 consecutive warps starting at a warp index divisible by 4; all 128 threads issue
// every wgmma. Each thread holds N/2 fp32 accumulators of the 64×N tile (see accumulator_row/col).
#pragma once
#include <cstdint>

#include "sm90_mbarrier.cuh"

namespace ptxb {

/// Shared-memory layout of a wgmma operand (descriptor bits 62-63).
enum class Swizzle : uint32_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

/// @brief Matrix descriptor of an operand tile at shared address `addr`: start address, leading and
/// stride byte offsets (LBO/SBO) and swizzle. For K-major bf16 tiles with Swizzle::b128 (rows of 128 B,
/// 1024-byte aligned tile): lbo = 16 (ignored), sbo = 1024 (distance between 8-row groups); step K by
/// 16 elements by adding 32 bytes to `addr`.
__device__ __forceinline__ uint64_t make_smem_desc_addr(uint32_t addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                                        Swizzle swizzle) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32) | (static_cast<uint64_t>(swizzle) << 62);
}

/// @brief make_smem_desc_addr for a generic pointer into shared memory.
__device__ __forceinline__ uint64_t make_smem_desc(const void* smem, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                                   Swizzle swizzle) {
  return make_smem_desc_addr(smem_addr(smem), lbo_bytes, sbo_bytes, swizzle);
}

/// @brief Order register accesses before wgmma: before the first wgmma of a batch and whenever the
/// accumulators or A registers were written by ordinary instructions.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

/// @brief Close the batch of wgmma issued since the last commit into one group.
__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

/// @brief Wait until at most `Pending` committed groups are still running. Accumulators of a running
/// group must not be read or written, and its shared-memory operands must not be overwritten.
template <int Pending>
__device__ __forceinline__ void wgmma_wait_group() {
  static_assert(Pending >= 0 && Pending <= 7, "wgmma.wait_group depth is 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending) : "memory");
}

/// @brief Keep the compiler from moving accumulator reads/writes across an in-flight wgmma.
template <int Count>
__device__ __forceinline__ void wgmma_fence_registers(float (&d)[Count]) {
#pragma unroll
  for (int i = 0; i < Count; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/// @brief Row (0..63) within the 64×N tile of accumulator register `i` of this thread.
__device__ __forceinline__ int accumulator_row(int i, int thread_in_warpgroup) {
  int warp = thread_in_warpgroup / 32, lane = thread_in_warpgroup % 32;
  return 16 * warp + lane / 4 + 8 * ((i % 4) / 2);
}

/// @brief Column (0..N-1) within the 64×N tile of accumulator register `i` of this thread.
__device__ __forceinline__ int accumulator_col(int i, int thread_in_warpgroup) {
  int lane = thread_in_warpgroup % 32;
  return 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
}

namespace detail {

// Accumulator operands and their asm register lists, one pair of macros per N (shared by the SS and
// RS forms); each N extends the list of the N before it.
#define PTXB_WGMMA_ACC32(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define PTXB_WGMMA_REGS32 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define PTXB_WGMMA_ACC64(d) \
    PTXB_WGMMA_ACC32(d), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define PTXB_WGMMA_REGS64 \
    PTXB_WGMMA_REGS32 ", " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define PTXB_WGMMA_ACC128(d) \
    PTXB_WGMMA_ACC64(d), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define PTXB_WGMMA_REGS128 \
    PTXB_WGMMA_REGS64 ", " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define PTXB_WGMMA_ACC256(d) \
    PTXB_WGMMA_ACC128(d), \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define PTXB_WGMMA_REGS256 \
    PTXB_WGMMA_REGS128 ", " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

template <int TransA, int TransB>
__device__ __forceinline__ void wgmma_ss_n32(float (&d)[16], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %18, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {" PTXB_WGMMA_REGS32 "}, %16, %17, p, 1, 1, %19, %20;\n}\n"
               : PTXB_WGMMA_ACC32(d)
               : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TransA), "n"(TransB));
}

template <int TransB>
__device__ __forceinline__ void wgmma_rs_n32(float (&d)[16], const uint32_t (&a)[4], uint64_t desc_b, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %21, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {" PTXB_WGMMA_REGS32 "}, {%16, %17, %18, %19}, %20, p, 1, 1, %22;\n}\n"
               : PTXB_WGMMA_ACC32(d)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TransB));
}

template <int TransA, int TransB>
__device__ __forceinline__ void wgmma_ss_n64(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" PTXB_WGMMA_REGS64 "}, %32, %33, p, 1, 1, %35, %36;\n}\n"
               : PTXB_WGMMA_ACC64(d)
               : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TransA), "n"(TransB));
}

template <int TransB>
__device__ __forceinline__ void wgmma_rs_n64(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" PTXB_WGMMA_REGS64 "}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
               : PTXB_WGMMA_ACC64(d)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TransB));
}

template <int TransA, int TransB>
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" PTXB_WGMMA_REGS128 "}, %64, %65, p, 1, 1, %67, %68;\n}\n"
               : PTXB_WGMMA_ACC128(d)
               : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TransA), "n"(TransB));
}

template <int TransB>
__device__ __forceinline__ void wgmma_rs_n128(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" PTXB_WGMMA_REGS128 "}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
               : PTXB_WGMMA_ACC128(d)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TransB));
}

template <int TransA, int TransB>
__device__ __forceinline__ void wgmma_ss_n256(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" PTXB_WGMMA_REGS256 "}, %128, %129, p, 1, 1, %131, %132;\n}\n"
               : PTXB_WGMMA_ACC256(d)
               : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TransA), "n"(TransB));
}

template <int TransB>
__device__ __forceinline__ void wgmma_rs_n256(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %133, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" PTXB_WGMMA_REGS256 "}, {%128, %129, %130, %131}, %132, p, 1, 1, %134;\n}\n"
               : PTXB_WGMMA_ACC256(d)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TransB));
}

#undef PTXB_WGMMA_ACC32
#undef PTXB_WGMMA_REGS32
#undef PTXB_WGMMA_ACC64
#undef PTXB_WGMMA_REGS64
#undef PTXB_WGMMA_ACC128
#undef PTXB_WGMMA_REGS128
#undef PTXB_WGMMA_ACC256
#undef PTXB_WGMMA_REGS256
}  // namespace detail

/// @brief D[64×N] (+)= A[64×16] · B[16×N], A and B from shared memory by descriptor. `TransA`/`TransB`
/// false: K-major operands (each row of A, and each row of B viewed as N×K, is contiguous along K).
/// `accumulate` false overwrites D. N ∈ {32, 64, 128, 256}.
template <int N, bool TransA = false, bool TransB = false>
__device__ __forceinline__ void wgmma_m64k16_bf16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  static_assert(N == 32 || N == 64 || N == 128 || N == 256, "supported N: 32, 64, 128, 256");
  if constexpr (N == 32) detail::wgmma_ss_n32<TransA, TransB>(d, desc_a, desc_b, accumulate);
  else if constexpr (N == 64) detail::wgmma_ss_n64<TransA, TransB>(d, desc_a, desc_b, accumulate);
  else if constexpr (N == 128) detail::wgmma_ss_n128<TransA, TransB>(d, desc_a, desc_b, accumulate);
  else detail::wgmma_ss_n256<TransA, TransB>(d, desc_a, desc_b, accumulate);
}

/// @brief D[64×N] (+)= A[64×16] · B[16×N] with A from registers: a[0..3] hold this thread's bf16 pairs
/// in the accumulator layout of a 64×16 tile (a[0]: row r, cols c,c+1; a[1]: row r+8; a[2]: row r,
/// cols c+8,c+9; a[3]: row r+8, cols c+8,c+9; r = 16·warp + lane/4, c = 2·(lane%4)), e.g. P in attention.
template <int N, bool TransB = false>
__device__ __forceinline__ void wgmma_m64k16_bf16_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                                                     bool accumulate) {
  static_assert(N == 32 || N == 64 || N == 128 || N == 256, "supported N: 32, 64, 128, 256");
  if constexpr (N == 32) detail::wgmma_rs_n32<TransB>(d, a, desc_b, accumulate);
  else if constexpr (N == 64) detail::wgmma_rs_n64<TransB>(d, a, desc_b, accumulate);
  else if constexpr (N == 128) detail::wgmma_rs_n128<TransB>(d, a, desc_b, accumulate);
  else detail::wgmma_rs_n256<TransB>(d, a, desc_b, accumulate);
}

}  // namespace ptxb

// ptxb Blackwell (sm_100a) templates: the two descriptors tcgen05.mma reads.
//
// 1. The shared-memory (matrix) descriptor, 64 bits, for A/B operands in shared memory and for the
//    tcgen05.cp source. It is NOT Hopper's wgmma descriptor: bits 46..48 must hold the constant 0b001
//    (descriptor version) and the swizzle mode is 3 bits at 61..63 with different codes.
//      bits  0..13  start address >> 4        (address & 0x3FFFF, 16-byte aligned)
//      bits 16..29  leading-dimension byte offset (LBO) >> 4
//      bits 32..45  stride-dimension byte offset (SBO) >> 4
//      bits 46..48  0b001 (fixed)
//      bits 49..51  base offset (0 when the swizzle pattern starts on its natural boundary)
//      bit  52      LBO mode: 0 = relative offset (sm_100a; absolute mode is sm_103a only)
//      bits 53..60  0
//      bits 61..63  swizzle: 0 none, 1 128B with 32B atom, 2 128B, 4 64B, 6 32B (3, 5, 7 invalid)
//    K-major operands are built from core matrices of 8 rows x 16 bytes. SBO = bytes between
//    consecutive 8-row groups; LBO = bytes between K-adjacent core matrices when not swizzled
//    (unused when swizzled: encode 16, i.e. field value 1).
//    Swizzled tiles must start on the pattern boundary (128B: 1024 B, 64B: 512 B, 32B: 256 B) or set
//    the base offset. Advance along K inside a swizzled row by adding bytes to the start address.
//
// 2. The instruction descriptor, 32 bits, for .kind::f16 (also the layout of tf32/f8f6f4/i8):
//      bits 0..1 sparsity selector, 2 sparse, 3 saturate, 4..5 D type (0 f16, 1 f32), 6 reserved,
//      7..9 A type (0 f16, 1 bf16), 10..12 B type, 13 negate A, 14 negate B, 15 A major (0 K, 1 M),
//      16 B major (0 K, 1 N), 17..22 N >> 3, 23 reserved, 24..28 M >> 4, 29 reserved, 30..31 max shift (.ws)
#pragma once
#include <cstdint>

namespace ptxb {

/// Swizzle mode of a tcgen05 shared-memory descriptor (bits 61..63; differs from Hopper's 2-bit codes).
enum class Sm100Swizzle : uint32_t { none = 0, b128_atom32 = 1, b128 = 2, b64 = 4, b32 = 6 };

/// @brief Encode a tcgen05 shared-memory descriptor from a shared-window byte address (see file comment).
__host__ __device__ __forceinline__ constexpr uint64_t sm100_smem_desc(uint32_t smem_byte_addr, uint32_t lbo_bytes,
                                                                       uint32_t sbo_bytes, Sm100Swizzle swizzle,
                                                                       uint32_t base_offset = 0) {
  return static_cast<uint64_t>((smem_byte_addr & 0x3FFFFu) >> 4) |
         (static_cast<uint64_t>((lbo_bytes & 0x3FFFFu) >> 4) << 16) |
         (static_cast<uint64_t>((sbo_bytes & 0x3FFFFu) >> 4) << 32) | (uint64_t{1} << 46) |
         (static_cast<uint64_t>(base_offset & 7u) << 49) | (static_cast<uint64_t>(swizzle) << 61);
}

/// @brief sm100_smem_desc for a generic pointer into this CTA's shared memory (16-byte aligned).
__device__ __forceinline__ uint64_t make_sm100_smem_desc(const void* smem, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                                         Sm100Swizzle swizzle, uint32_t base_offset = 0) {
  return sm100_smem_desc(static_cast<uint32_t>(__cvta_generic_to_shared(smem)), lbo_bytes, sbo_bytes, swizzle,
                         base_offset);
}

/// Element types of A/B for .kind::f16, accumulator (D) types, and operand major-ness.
enum class MmaInput : uint32_t { f16 = 0, bf16 = 1 };
enum class MmaAccum : uint32_t { f16 = 0, f32 = 1 };
enum class MmaMajor : uint32_t { k = 0, mn = 1 };

/// Named fields of a dense .kind::f16 instruction descriptor; encode() packs them.
struct IdescF16 {
  uint32_t m = 128;                  ///< rows of A and D: 64 or 128 with cta_group::1
  uint32_t n = 256;                  ///< columns of B and D
  MmaInput a_type = MmaInput::bf16;  ///< bits 7..9
  MmaInput b_type = MmaInput::bf16;  ///< bits 10..12
  MmaAccum d_type = MmaAccum::f32;   ///< bits 4..5
  MmaMajor a_major = MmaMajor::k;    ///< bit 15 ("transpose A")
  MmaMajor b_major = MmaMajor::k;    ///< bit 16 ("transpose B")
  bool negate_a = false;             ///< bit 13
  bool negate_b = false;             ///< bit 14

  __host__ __device__ constexpr uint32_t encode() const {
    return (static_cast<uint32_t>(d_type) << 4) | (static_cast<uint32_t>(a_type) << 7) |
           (static_cast<uint32_t>(b_type) << 10) | (static_cast<uint32_t>(negate_a) << 13) |
           (static_cast<uint32_t>(negate_b) << 14) | (static_cast<uint32_t>(a_major) << 15) |
           (static_cast<uint32_t>(b_major) << 16) | ((n >> 3) << 17) | ((m >> 4) << 24);
  }
};

/// @brief True when `idesc` is a legal dense cta_group::1 .kind::f16 descriptor (M 64/128, N range,
/// f16 D only with f16 inputs, sparsity/saturate/reserved/shift bits zero).
__host__ __device__ __forceinline__ constexpr bool idesc_f16_valid(uint32_t idesc) {
  const uint32_t m = ((idesc >> 24) & 0x1Fu) << 4;
  const uint32_t n = ((idesc >> 17) & 0x3Fu) << 3;
  const uint32_t d = (idesc >> 4) & 3u, a = (idesc >> 7) & 7u, b = (idesc >> 10) & 7u;
  const bool zero_bits = (idesc & 0xFu) == 0 && (idesc & (1u << 6)) == 0 && (idesc & (1u << 23)) == 0 &&
                         (idesc & (1u << 29)) == 0 && (idesc >> 30) == 0;
  const bool shape = (m == 64 && n >= 8 && n <= 256 && n % 8 == 0) || (m == 128 && n >= 16 && n <= 256 && n % 16 == 0);
  const bool types = a <= 1 && b <= 1 && a == b && (d == 1 || (d == 0 && a == 0));
  return zero_bits && shape && types;
}

/// @brief Compile-time instruction descriptor for one M x N x 16 .kind::f16 MMA, checked for legality.
template <uint32_t M, uint32_t N, MmaInput AB = MmaInput::bf16, MmaAccum D = MmaAccum::f32,
          MmaMajor AMajor = MmaMajor::k, MmaMajor BMajor = MmaMajor::k>
__host__ __device__ __forceinline__ constexpr uint32_t make_idesc_f16() {
  static_assert(M == 64 || M == 128, "tcgen05.mma cta_group::1 kind::f16: M must be 64 or 128");
  static_assert(M != 64 || (N % 8 == 0 && N >= 8 && N <= 256), "M = 64 needs N in 8..256, step 8");
  static_assert(M != 128 || (N % 16 == 0 && N >= 16 && N <= 256), "M = 128 needs N in 16..256, step 16");
  static_assert(!(D == MmaAccum::f16 && AB == MmaInput::bf16), "bf16 inputs need an f32 accumulator");
  constexpr uint32_t idesc = IdescF16{M, N, AB, AB, D, AMajor, BMajor}.encode();
  static_assert(idesc_f16_valid(idesc), "illegal kind::f16 instruction descriptor");
  return idesc;
}

// Encoding self-checks (hand-computed from the PTX ISA tables above).
static_assert(make_idesc_f16<128, 256>() == 0x08400490u, "idesc: bf16 x bf16 -> f32, 128x256, K-major");
static_assert(make_idesc_f16<64, 8, MmaInput::f16, MmaAccum::f16>() == 0x04020000u, "idesc: f16 -> f16, 64x8");
static_assert(sm100_smem_desc(0x400, 16, 1024, Sm100Swizzle::b128) == 0x4000404000010040ull, "smem desc, 128B");
static_assert(sm100_smem_desc(0x100, 128, 256, Sm100Swizzle::none) == 0x0000401000080010ull, "smem desc, none");

}  // namespace ptxb

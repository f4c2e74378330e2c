// ptxb Hopper templates: per-warpgroup register reallocation (producer gives registers to consumers).
// Takes effect only when the kernel has a register cap at entry (__launch_bounds__(threads, 1) or
// -maxrregcount) and every warp of the warpgroup executes it; otherwise ptxas warns (C7508) and ignores it.
#pragma once

namespace ptxb {

/// @brief Raise this warpgroup's per-thread register count to `Regs` (after others released theirs).
template <int Regs>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(Regs % 8 == 0 && Regs >= 24 && Regs <= 256, "setmaxnreg: multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Regs));
}

/// @brief Lower this warpgroup's per-thread register count to `Regs` (e.g. a TMA producer warpgroup).
template <int Regs>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(Regs % 8 == 0 && Regs >= 24 && Regs <= 256, "setmaxnreg: multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Regs));
}

}  // namespace ptxb

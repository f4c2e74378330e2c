// ptxb Hopper templates: mbarrier (shared-memory transaction barriers), one function per operation.
// Barriers are 8-byte, 8-byte-aligned shared-memory words; pass their generic address.
#pragma once
#include <cstdint>

namespace ptxb {

/// @brief Shared-memory address (32-bit, .shared::cta window) of a generic pointer to shared memory.
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// @brief Initialise a barrier for `count` arrivals per phase (one thread; then fence_mbarrier_init + sync).
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

/// @brief Arrive once on the current phase.
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

/// @brief Arrive once and add `bytes` to the phase's expected transaction count (the TMA producer's arm).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

/// @brief Add `bytes` to the expected transaction count without arriving.
__device__ __forceinline__ void mbarrier_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

/// @brief True once the phase with parity `parity` (0 or 1) has completed. May time out spuriously: loop.
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

/// @brief Spin until the phase with parity `parity` completes. Phase k of a barrier has parity k & 1.
__device__ __forceinline__ void mbarrier_wait_parity(uint64_t* bar, uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

/// @brief Arrive on the barrier at the same shared-memory offset in CTA `cta` of this cluster.
/// @warning the target CTA must still be running: end kernels with cluster_sync().
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta) {
  asm volatile(
      "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
      " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
      "r"(cta)
      : "memory");
}

/// @brief mbarrier_arrive_cluster with the default semantics of a remote arrive (release at CTA scope,
/// CUTLASS's ClusterBarrier::arrive(cta_id)): no cluster-scope release fence on the way. Enough to hand
/// a consumed stage back to a peer's multicasting producer, whose only hazard is overwriting shared
/// memory that wgmma_wait_group has already retired; not enough to publish this thread's own writes.
/// @warning the target CTA must still be running: end kernels with cluster_sync().
__device__ __forceinline__ void mbarrier_arrive_peer(uint64_t* bar, uint32_t cta) {
  asm volatile(
      "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
      " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
      "r"(cta)
      : "memory");
}

}  // namespace ptxb

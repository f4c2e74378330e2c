// ptxb Hopper templates: thread-block clusters (launch with cudaLaunchKernelEx and a cluster dimension,
// or __cluster_dims__). CTAs of a cluster can read each other's shared memory and signal each other's
// barriers; a CTA must not exit while others may still access its shared memory.
#pragma once
#include <cstdint>

#include "sm90_mbarrier.cuh"

namespace ptxb {

/// @brief This CTA's rank in its cluster.
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

/// @brief Number of CTAs in the cluster.
__device__ __forceinline__ uint32_t cluster_nctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}

/// @brief Arrive on the cluster barrier (release: earlier writes are visible to waiting CTAs).
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }

/// @brief Wait for every thread of every CTA of the cluster to arrive (acquire).
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

/// @brief cluster_arrive then cluster_wait: all threads of all CTAs.
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

/// @brief The .shared::cluster address of the same shared variable in CTA `cta` (for ld/st.shared::cluster).
__device__ __forceinline__ uint32_t map_shared_to_cta(const void* smem, uint32_t cta) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(smem)), "r"(cta));
  return remote;
}

}  // namespace ptxb

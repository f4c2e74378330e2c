// ptxb Hopper templates: fences between the generic proxy (ordinary loads/stores) and the async
// proxy (TMA, wgmma operand reads), and for barrier initialisation.
#pragma once

namespace ptxb {

/// @brief Make mbarrier_init visible to the async proxy and the cluster (one thread, after init, before a sync).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// @brief Order this thread's ordinary shared-memory writes before later async-proxy reads (TMA store,
/// wgmma operands). Every writing thread fences, then the threads synchronise, then one thread issues.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// @brief The same ordering for global memory (e.g. ordinary writes later read by a TMA load).
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}

/// @brief Acquire-release fence at cluster scope.
__device__ __forceinline__ void fence_acq_rel_cluster() {
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
}

}  // namespace ptxb

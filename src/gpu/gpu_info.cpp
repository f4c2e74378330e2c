#include "gpu/gpu_info.h"

#include "gpu/cuda_call.h"

namespace ptxbench {

std::string GpuInfo::arch() const {
  std::string base = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  return (cc_major == 9 || cc_major == 10) && cc_minor == 0 ? base + "a" : base;
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

GpuInfo query_gpu(int device) {
  GpuInfo g;
  g.device = device;
  cudaDeviceProp p{};
  PTXB_CUDA_CALL(cudaGetDeviceProperties(&p, device));
  g.name = p.name;
  g.cc_major = p.major;
  g.cc_minor = p.minor;
  g.sm_count = p.multiProcessorCount;
  g.l2_bytes = p.l2CacheSize;
  g.global_mem_bytes = static_cast<long>(p.totalGlobalMem);
  PTXB_CUDA_CALL(cudaDriverGetVersion(&g.driver_version));
  PTXB_CUDA_CALL(cudaRuntimeGetVersion(&g.runtime_version));
  return g;
}

ordered_json to_json(const GpuInfo& g) {
  return {{"device", g.device},       {"name", g.name},
          {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
          {"sm_count", g.sm_count},   {"l2_bytes", g.l2_bytes},
          {"memory_bytes", g.global_mem_bytes}, {"cuda_driver", g.driver_version},
          {"cuda_runtime", g.runtime_version}};
}

}  // namespace ptxbench

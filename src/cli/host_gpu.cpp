#include "cli/host_gpu.h"

#include <cuda_runtime.h>

namespace ptxbench::cli {
namespace {

/// The device count, or the runtime's reason for none in `problem`.
int device_count(std::string& problem) {
  int n = 0;
  cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    problem = std::string("no CUDA device: ") + cudaGetErrorString(rc);
    return 0;
  }
  if (n == 0) problem = "no CUDA device: the driver lists none";
  return n;
}

}  // namespace

HostGpus host_gpus() {
  HostGpus h;
  int n = device_count(h.problem);
  for (int d = 0; d < n; ++d) {
    try {
      h.devices.push_back(query_gpu(d));
    } catch (const std::exception& e) {
      h.problem += (h.problem.empty() ? "" : "; ") + std::string("device ") + std::to_string(d) + ": " + e.what();
    }
  }
  return h;
}

std::string gpu_unusable_reason(int device, const std::string& arch) {
  std::string problem;
  int n = device_count(problem);
  if (n == 0) return problem;
  if (device < 0 || device >= n)
    return "no CUDA device " + std::to_string(device) + " (this host has " + std::to_string(n) + ")";
  try {
    GpuInfo g = query_gpu(device);
    if (g.arch() != arch) return "CUDA device " + std::to_string(device) + " is " + g.name + " (" + g.arch() + "), not " + arch;
  } catch (const std::exception& e) {
    return "CUDA device " + std::to_string(device) + " cannot be queried: " + e.what();
  }
  return "";
}

}  // namespace ptxbench::cli

// What the evaluation ran on: device properties and driver/runtime versions.
#pragma once

#include <string>

#include "common/json_check.h"

namespace ptxbench {

struct GpuInfo {
  int device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  long l2_bytes = 0;
  long global_mem_bytes = 0;
  int driver_version = 0;
  int runtime_version = 0;
  [[nodiscard]] std::string arch() const;  ///< "sm_90a" for 9.0, "sm_100a" for 10.0, else "sm_XY"
};

/// Number of usable CUDA devices; 0 (never an exception) when there is no driver or device.
int cuda_device_count();
GpuInfo query_gpu(int device);
ordered_json to_json(const GpuInfo& g);

}  // namespace ptxbench

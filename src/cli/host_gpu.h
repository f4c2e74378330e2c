// This host's CUDA devices as the command line reports them: the devices, or why there are none
// (`ptxbench env`), and whether evaluations can run on the chosen one (eval, suite run).
#pragma once

#include <string>
#include <vector>

#include "gpu/gpu_info.h"

namespace ptxbench::cli {

struct HostGpus {
  std::vector<GpuInfo> devices;
  /// "no CUDA device: <the driver's reason>" when there is none; "" otherwise.
  std::string problem;
};

/// Asks the CUDA runtime; never throws (a device that cannot be queried is left out, with why).
HostGpus host_gpus();

/// Why an evaluation for `arch` ("sm_90a") cannot run on CUDA device `device` here: no device (with
/// the driver's reason), no such index, or a GPU of another architecture. "" when it can.
std::string gpu_unusable_reason(int device, const std::string& arch);

}  // namespace ptxbench::cli

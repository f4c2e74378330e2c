// Roofline floors: the least time any correct implementation needs on a GPU, from datasheet
// peaks (dense bf16 tensor rate, HBM bandwidth). Peaks are upper bounds, so a measured time under
// the floor is impossible: a measurement bug or a cheat.
#pragma once

#include <optional>
#include <string>

namespace ptxbench {

struct GpuPeaks {
  std::string name;
  double bf16_dense_flops = 0;  ///< FLOP/s
  double hbm_bytes_per_s = 0;
};

/// Peaks for a device name as CUDA reports it ("NVIDIA H200"); nullopt for unknown devices.
std::optional<GpuPeaks> peaks_for(const std::string& device_name);

/// max(flops / peak, bytes / bandwidth) in microseconds.
double roofline_floor_us(const GpuPeaks& peaks, double flops, double bytes);

}  // namespace ptxbench

#include "timing/roofline.h"

#include <algorithm>

namespace ptxbench {

std::optional<GpuPeaks> peaks_for(const std::string& name) {
  // NVIDIA datasheets (SXM parts). Matched by substring, most specific first.
  static const GpuPeaks kTable[] = {
      {"GH200", 989.4e12, 4.0e12},
      {"H200", 989.4e12, 4.8e12},
      {"H100", 989.4e12, 3.35e12},
      {"B200", 2250e12, 8.0e12},
  };
  for (const auto& p : kTable)
    if (name.find(p.name) != std::string::npos) return p;
  return std::nullopt;
}

double roofline_floor_us(const GpuPeaks& p, double flops, double bytes) {
  double compute = p.bf16_dense_flops > 0 ? flops / p.bf16_dense_flops : 0.0;
  double memory = p.hbm_bytes_per_s > 0 ? bytes / p.hbm_bytes_per_s : 0.0;
  return std::max(compute, memory) * 1e6;
}

}  // namespace ptxbench

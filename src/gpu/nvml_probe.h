// GPU health readings through NVML, loaded with dlopen (no NVML header or link dependency): clock
// event (throttle) reasons, temperature, SM clock, power, utilization. Missing NVML is "unavailable", not an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json_check.h"

namespace ptxbench {

struct NvmlReading {
  bool available = false;
  std::string note;
  unsigned temperature_c = 0;
  unsigned sm_clock_mhz = 0;
  double power_w = 0;
  uint64_t event_reasons = 0;  ///< nvmlClocksEventReason* bit mask
  /// Share of the last sample period (1/6 s to 1 s) in which a kernel ran, from any process.
  std::optional<unsigned> utilization_percent;
};

/// Names of the set reason bits ("gpu_idle", "sw_power_cap", "hw_slowdown", ...).
std::vector<std::string> clock_event_reason_names(uint64_t reasons);
/// Empty when healthy; else why not: hardware slowdown, thermal throttling or power brake, or a
/// temperature at or above `max_temperature_c`. (Idle and the software power cap are normal.)
std::string health_problem(const NvmlReading& r, unsigned max_temperature_c = 90);

/// Reads the device with this PCI bus id ("0000:00:06.0", as cudaDeviceGetPCIBusId gives it).
NvmlReading read_nvml(const std::string& pci_bus_id);

ordered_json to_json(const NvmlReading& r);

}  // namespace ptxbench

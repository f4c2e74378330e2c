#include "gpu/nvml_probe.h"

#include <dlfcn.h>

#include <mutex>

namespace ptxbench {
namespace {

// The few NVML entry points we use, declared here (NVML's own header is not installed).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kTemperatureGpu = 0;
constexpr int kClockSm = 1;

struct NvmlUtilization {  // nvmlUtilization_t
  unsigned gpu;
  unsigned memory;
};

struct Nvml {
  void* lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, NvmlUtilization*) = nullptr;
  std::string error;
};

const Nvml& nvml() {
  static Nvml n;
  static std::once_flag once;
  std::call_once(once, [] {
    n.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n.lib) {
      n.error = std::string("libnvidia-ml.so.1 not loadable: ") + dlerror();
      return;
    }
    auto sym = [](const char* name) { return dlsym(n.lib, name); };
    n.init = reinterpret_cast<decltype(n.init)>(sym("nvmlInit_v2"));
    n.by_pci = reinterpret_cast<decltype(n.by_pci)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    n.temperature = reinterpret_cast<decltype(n.temperature)>(sym("nvmlDeviceGetTemperature"));
    n.clock = reinterpret_cast<decltype(n.clock)>(sym("nvmlDeviceGetClockInfo"));
    n.power = reinterpret_cast<decltype(n.power)>(sym("nvmlDeviceGetPowerUsage"));
    n.reasons = reinterpret_cast<decltype(n.reasons)>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
    if (!n.reasons) n.reasons = reinterpret_cast<decltype(n.reasons)>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
    n.utilization = reinterpret_cast<decltype(n.utilization)>(sym("nvmlDeviceGetUtilizationRates"));
    if (!n.init || !n.by_pci || !n.reasons) n.error = "NVML lacks the entry points we need";
    else if (n.init() != kNvmlSuccess) n.error = "nvmlInit failed";
  });
  return n;
}

struct ReasonBit {
  uint64_t bit;
  const char* name;
  bool bad;
};
constexpr ReasonBit kReasons[] = {
    {0x1, "gpu_idle", false},          {0x2, "applications_clocks", false}, {0x4, "sw_power_cap", false},
    {0x8, "hw_slowdown", true},        {0x10, "sync_boost", false},         {0x20, "sw_thermal_slowdown", true},
    {0x40, "hw_thermal_slowdown", true}, {0x80, "hw_power_brake_slowdown", true}, {0x100, "display_clock", false},
};

}  // namespace

std::vector<std::string> clock_event_reason_names(uint64_t reasons) {
  std::vector<std::string> out;
  for (const auto& r : kReasons)
    if (reasons & r.bit) out.push_back(r.name);
  return out;
}

std::string health_problem(const NvmlReading& r, unsigned max_temperature_c) {
  if (!r.available) return "";
  for (const auto& b : kReasons)
    if (b.bad && (r.event_reasons & b.bit)) return std::string("clocks held down: ") + b.name;
  if (r.temperature_c >= max_temperature_c) return "temperature " + std::to_string(r.temperature_c) + " C";
  return "";
}

NvmlReading read_nvml(const std::string& pci_bus_id) {
  NvmlReading r;
  const Nvml& n = nvml();
  if (!n.error.empty()) {
    r.note = n.error;
    return r;
  }
  nvmlDevice_t dev = nullptr;
  if (n.by_pci(pci_bus_id.c_str(), &dev) != kNvmlSuccess) {
    r.note = "no NVML device at " + pci_bus_id;
    return r;
  }
  unsigned long long reasons = 0;
  if (n.reasons(dev, &reasons) != kNvmlSuccess) {
    r.note = "clock event reasons unreadable";
    return r;
  }
  r.available = true;
  r.event_reasons = reasons;
  if (n.temperature) n.temperature(dev, kTemperatureGpu, &r.temperature_c);
  if (n.clock) n.clock(dev, kClockSm, &r.sm_clock_mhz);
  unsigned milliwatts = 0;
  if (n.power && n.power(dev, &milliwatts) == kNvmlSuccess) r.power_w = milliwatts / 1000.0;
  NvmlUtilization u{};
  if (n.utilization && n.utilization(dev, &u) == kNvmlSuccess) r.utilization_percent = u.gpu;
  return r;
}

ordered_json to_json(const NvmlReading& r) {
  if (!r.available) return {{"available", false}, {"note", r.note}};
  return {{"available", true},        {"temperature_c", r.temperature_c}, {"sm_clock_mhz", r.sm_clock_mhz},
          {"power_w", r.power_w},      {"clock_event_reasons", clock_event_reason_names(r.event_reasons)},
          {"utilization_percent", r.utilization_percent ? ordered_json(*r.utilization_percent) : ordered_json(nullptr)}};
}

}  // namespace ptxbench

#include "evaluator/triton_launch_calibration.h"

#include <fmt/format.h>

#include "common/fs.h"
#include "compile/ptxb_triton_package.h"
#include "timing/call_integrity.h"

namespace ptxbench {

std::string TritonLaunchKey::to_string() const {
  return fmt::format("triton-launch-path/python {}/torch {}/triton {}/driver {}/{} tensors/probe {}", python, torch,
                     triton, cuda_driver, nargs, probe_sha256.substr(0, 12));
}

std::string triton_launch_probe_source() { return std::string(ptxb_triton_module("launch_probe.py")); }

TritonLaunchCalibration::TritonLaunchCalibration(const std::string& gpu_key, const fs::path& root)
    : m_store(gpu_key, "triton_launch", root) {}

std::vector<double> TritonLaunchCalibration::recorded(const TritonLaunchKey& key) const {
  return m_store.read(key.to_string());
}

std::vector<double> TritonLaunchCalibration::record(const TritonLaunchKey& key, double excess_us) {
  return m_store.update(key.to_string(), kKept, [&](const std::vector<double>&) { return excess_us; });
}

bool wants_launch_measurement(std::size_t recorded, int wanted) {
  return wanted > 0 && recorded < static_cast<std::size_t>(wanted);
}

LaunchAllowanceRecord launch_allowance_record(const std::vector<double>& calibrations_us,
                                              std::optional<double> measured_us,
                                              const std::vector<double>& measured_trials_us,
                                              const TritonLaunchKey& key, const fs::path& store, double cap_us) {
  LaunchAllowance a = launch_allowance(calibrations_us, cap_us);
  LaunchAllowanceRecord r;
  r.allowance_us = a.allowance_us;
  r.cap_us = cap_us;
  r.capped = a.capped;
  r.calibrations_us = calibrations_us;
  r.source = measured_us ? "measured" : calibrations_us.empty() ? "uncalibrated" : "cached";
  r.measured_us = measured_us;
  r.measured_trials_us = measured_trials_us;
  r.key = key.to_string();
  r.store = store.string();
  return r;
}

}  // namespace ptxbench

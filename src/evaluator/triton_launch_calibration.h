// The calibration of Triton's own launch path (docs/triton.md, "What the timing means for a Triton
// candidate"): what a call of a trivial Triton kernel (our probe, src/python/ptxb_triton/launch_probe.py)
// costs the worker's clock beyond its device span and the baseline's overhead, when the worker times
// it through the same runner, shim and timing stage as a candidate. Kept per GPU like the baseline's
// calibration (calibration_store.h), keyed by what the path depends on; its median, capped, is the
// allowance a Triton candidate's host bound adds to its slack (timing/call_integrity.h). The
// measuring itself is the evaluator's (Evaluator::triton_launch_allowance); this is the pure part.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "evaluator/calibration_store.h"
#include "verdict/integrity_section.h"

namespace ptxbench {

/// What Triton's launch path depends on, beside the GPU (the store's file): the interpreter, torch,
/// Triton and the CUDA driver that run it, the number of tensors `run` takes (the shim binds each),
/// and the probe itself (a changed probe recalibrates).
struct TritonLaunchKey {
  std::string python, torch, triton;
  int cuda_driver = 0;
  int nargs = 0;
  std::string probe_sha256;
  [[nodiscard]] std::string to_string() const;
};

/// The probe's source: launch_probe.py of the package this binary embeds (ptxb_triton_package.h).
std::string triton_launch_probe_source();

class TritonLaunchCalibration {
 public:
  /// The store of the GPU named by `gpu_key` under `root` (default cache_root()/calibration).
  explicit TritonLaunchCalibration(const std::string& gpu_key, const fs::path& root = {});
  /// The probe's recorded excesses for `key`, oldest first.
  [[nodiscard]] std::vector<double> recorded(const TritonLaunchKey& key) const;
  /// Records one evaluation's probe excess; returns the recorded ones with it (the last kKept).
  std::vector<double> record(const TritonLaunchKey& key, double excess_us);
  [[nodiscard]] const fs::path& file() const noexcept { return m_store.file(); }

  static constexpr std::size_t kKept = 9;

 private:
  CalibrationStore m_store;
};

/// Whether an evaluation times the probe: while fewer than `wanted` excesses are recorded.
[[nodiscard]] bool wants_launch_measurement(std::size_t recorded, int wanted);

/// The verdict's record: the allowance from `calibrations_us` (launch_allowance, capped at
/// `cap_us`), where it came from, and this evaluation's own measurement when it made one.
LaunchAllowanceRecord launch_allowance_record(const std::vector<double>& calibrations_us,
                                              std::optional<double> measured_us,
                                              const std::vector<double>& measured_trials_us,
                                              const TritonLaunchKey& key, const fs::path& store, double cap_us);

}  // namespace ptxbench

// The baseline's time on each physical GPU, remembered across evaluations (docs/design.md §4b: "the
// baseline is checked against the GPU's calibration"). One JSON file per GPU under the cache
// folder, shared by the workers of a host under a lock. An evaluation whose baseline ran slower
// than the calibration by more than a margin is our problem (a sick, throttled or shared GPU, or
// device work someone left running), so it becomes INFRA_ERROR and is re-run: it never turns
// into a bigger speedup.
#pragma once

#include <optional>
#include <string>

#include "common/json_check.h"
#include "evaluator/calibration_store.h"

namespace ptxbench {

struct BaselineJudgement {
  std::optional<double> calibrated_us;  ///< the median of the recent accepted measurements, if any
  double measured_us = 0.0;
  double margin = 0.0;
  bool within = true;    ///< not slower than calibrated × (1 + margin)
  bool recorded = false; ///< this measurement joined the calibration
  [[nodiscard]] double ratio() const { return calibrated_us ? measured_us / *calibrated_us : 1.0; }
};
ordered_json to_json(const BaselineJudgement& j);

class BaselineCalibration {
 public:
  /// The store of the GPU named by `gpu_key` (model and PCI bus id) under `root`
  /// (default cache_root()/calibration).
  explicit BaselineCalibration(const std::string& gpu_key, const fs::path& root = {});
  /// Judges `measured_us` of the baseline for `workload_key`; a measurement within the margin
  /// (or the first one) is added to the record, which keeps the last kKept.
  BaselineJudgement judge(const std::string& workload_key, double measured_us, double margin);
  [[nodiscard]] const fs::path& file() const noexcept { return m_store.file(); }

  static constexpr std::size_t kKept = 9;

 private:
  CalibrationStore m_store;
};

}  // namespace ptxbench

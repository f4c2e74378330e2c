#include "evaluator/baseline_calibration.h"

#include "common/stats.h"

namespace ptxbench {

ordered_json to_json(const BaselineJudgement& j) {
  ordered_json o = {{"measured_us", j.measured_us}, {"margin", j.margin}, {"within", j.within}, {"recorded", j.recorded}};
  if (j.calibrated_us) {
    o["calibrated_us"] = *j.calibrated_us;
    o["ratio"] = j.ratio();
  } else {
    o["note"] = "first measurement on this GPU: it calibrates";
  }
  return o;
}

BaselineCalibration::BaselineCalibration(const std::string& gpu_key, const fs::path& root) : m_store(gpu_key, "", root) {}

BaselineJudgement BaselineCalibration::judge(const std::string& workload_key, double measured_us, double margin) {
  BaselineJudgement j;
  j.measured_us = measured_us;
  j.margin = margin;
  // Judged and recorded in one turn of the store's lock: several workers of one GPU share it.
  m_store.update(workload_key, kKept, [&](const std::vector<double>& kept) -> std::optional<double> {
    if (!kept.empty()) {
      j.calibrated_us = median(kept);
      j.within = measured_us <= *j.calibrated_us * (1.0 + margin);
    }
    j.recorded = j.within;
    if (!j.within) return std::nullopt;
    return measured_us;
  });
  return j;
}

}  // namespace ptxbench

#include "evaluator/baseline_calibration.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>

#include "common/error.h"
#include "common/fd.h"
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

BaselineCalibration::BaselineCalibration(const std::string& gpu_key, const fs::path& root) {
  std::string name;
  for (char c : gpu_key) name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  fs::path dir = root.empty() ? cache_root() / "calibration" : root;
  fs::create_directories(dir);
  m_file = dir / (name + ".json");
}

BaselineJudgement BaselineCalibration::judge(const std::string& workload_key, double measured_us, double margin) {
  // Several workers of one GPU judge and record through the same file: one at a time.
  fs::path lock_path = m_file.string() + ".lock";
  Fd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0)
    throw EnvironmentError("calibration", "cannot lock " + lock_path.string());
  ordered_json doc = ordered_json::object();
  if (fs::exists(m_file)) {
    try {
      doc = ordered_json::parse(read_file(m_file));
    } catch (const std::exception&) {
      doc = ordered_json::object();  // a damaged file recalibrates rather than stopping evaluations
    }
  }
  std::vector<double> kept;
  if (doc.contains(workload_key)) kept = doc[workload_key].get<std::vector<double>>();
  BaselineJudgement j;
  j.measured_us = measured_us;
  j.margin = margin;
  if (!kept.empty()) {
    j.calibrated_us = median(kept);
    j.within = measured_us <= *j.calibrated_us * (1.0 + margin);
  }
  if (j.within) {
    kept.push_back(measured_us);
    if (kept.size() > kKept) kept.erase(kept.begin(), kept.end() - kKept);
    doc[workload_key] = kept;
    write_file_atomic(m_file, doc.dump(1));
    j.recorded = true;
  }
  return j;
}

}  // namespace ptxbench

// The verdict's sanitize section: compute-sanitizer memcheck runs of the real workload (own seed
// each), whether they passed, and the report of the first that did not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "verdict/stage_record.h"

namespace ptxbench {

struct SanitizerRun {
  uint64_t seed = 0;
  std::string exit;  ///< how the run ended ("exited with code 0")
  bool timed_out = false;
  double wall_s = 0.0;
};
void json_fields(JsonIo& io, SanitizerRun& r);

struct SanitizeSection : StageRecord<SanitizeSection> {
  std::string tool;  ///< "compute-sanitizer --tool memcheck"
  std::vector<SanitizerRun> runs;
  std::optional<std::string> skipped;  ///< why the stage did not run (then `passed` is unset)
  std::optional<bool> passed;
  std::optional<std::string> report;  ///< the failing run's output (cut)

  /// Whether a run ended at its time limit.
  [[nodiscard]] bool timed_out() const;
};
void json_fields(JsonIo& io, SanitizeSection& s);

}  // namespace ptxbench

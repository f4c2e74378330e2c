#include "verdict/sanitize_section.h"

namespace ptxbench {

bool SanitizeSection::timed_out() const {
  for (const auto& r : runs)
    if (r.timed_out) return true;
  return false;
}

void json_fields(JsonIo& io, SanitizerRun& r) {
  io("seed", r.seed);
  io("exit", r.exit);
  io("timed_out", r.timed_out);
  io("wall_s", r.wall_s);
}

void json_fields(JsonIo& io, SanitizeSection& s) {
  io("tool", s.tool);
  io("runs", s.runs);
  io("skipped", s.skipped);
  io("passed", s.passed);
  io("report", s.report);
  stage_record_fields(io, s);
}

}  // namespace ptxbench

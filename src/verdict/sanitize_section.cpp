#include "verdict/sanitize_section.h"

namespace ptxbench {

bool SanitizeSection::timed_out() const {
  for (const auto& r : runs)
    if (r.timed_out) return true;
  return false;
}

void to_json(ordered_json& j, const SanitizerRun& r) {
  j = {{"seed", r.seed}, {"exit", r.exit}, {"timed_out", r.timed_out}, {"wall_s", r.wall_s}};
}

void from_json(const ordered_json& j, SanitizerRun& r) {
  require_json_object(j);
  read_field(j, "seed", r.seed);
  read_field(j, "exit", r.exit);
  read_field(j, "timed_out", r.timed_out);
  read_field(j, "wall_s", r.wall_s);
}

void to_json(ordered_json& j, const SanitizeSection& s) {
  j = {{"tool", s.tool}, {"runs", s.runs}};
  write_optional(j, "skipped", s.skipped);
  write_optional(j, "passed", s.passed);
  write_optional(j, "report", s.report);
  write_stage_record(j, s);
}

void from_json(const ordered_json& j, SanitizeSection& s) {
  require_json_object(j);
  read_field(j, "tool", s.tool);
  read_field(j, "runs", s.runs);
  read_field(j, "skipped", s.skipped);
  read_field(j, "passed", s.passed);
  read_field(j, "report", s.report);
  read_stage_record(j, s);
}

}  // namespace ptxbench

#include "verdict/sass_sections.h"

namespace ptxbench {

FamilyCounts family_counts(const OpcodeCounts& c) {
  return {family_count(c, "GMMA"), family_count(c, "TMA"), family_count(c, "TCGEN05")};
}

namespace {
// The family counts and the mechanisms they prove, side by side in both sections.
void write_counts(ordered_json& j, const FamilyCounts& c, const Mechanisms& m) {
  j["gmma"] = c.gmma;
  j["tma"] = c.tma;
  j["tcgen05"] = c.tcgen05;
  j["mechanisms"] = to_json(m);
}

void read_counts(const ordered_json& j, FamilyCounts& c, Mechanisms& m) {
  read_field(j, "gmma", c.gmma);
  read_field(j, "tma", c.tma);
  read_field(j, "tcgen05", c.tcgen05);
  if (!j.contains("mechanisms") || j["mechanisms"].is_null()) return;
  try {
    m = mechanisms_from_json(j["mechanisms"]);
  } catch (...) {
    detail::rethrow_in_field("mechanisms");
  }
}
}  // namespace

StaticSassSection static_sass_section(const StaticSass& s) {
  StaticSassSection out;
  out.available = s.available;
  out.note = s.note;
  if (!s.available) return out;
  out.counts = family_counts(s.total);
  out.mechanisms = s.mechanisms;
  out.opcodes = s.total;
  return out;
}

RuntimeSassSection runtime_sass_section(const RuntimeSass& r) {
  RuntimeSassSection out;
  out.available = r.available;
  out.note = r.note;
  if (!r.available) return out;
  out.source = r.source;
  out.kernels_profiled = r.kernels_profiled;
  out.counts = family_counts(r.thread_true);
  out.mechanisms = r.mechanisms;
  out.thread_true_opcodes = r.thread_true;
  out.warp_executed_opcodes = r.warp_executed;
  out.foreign_kernels = r.foreign_kernels;
  return out;
}

void to_json(ordered_json& j, const StaticSassSection& s) {
  j = ordered_json::object();
  j["available"] = s.available;
  if (!s.note.empty()) j["note"] = s.note;
  if (s.available) {
    write_counts(j, s.counts, s.mechanisms);
    j["opcodes"] = s.opcodes;
  }
  write_stage_record(j, s);
}

void from_json(const ordered_json& j, StaticSassSection& s) {
  require_json_object(j);
  read_field(j, "available", s.available);
  read_field(j, "note", s.note);
  read_counts(j, s.counts, s.mechanisms);
  read_field(j, "opcodes", s.opcodes);
  read_stage_record(j, s);
}

void to_json(ordered_json& j, const RuntimeSassSection& s) {
  j = ordered_json::object();
  write_optional(j, "available", s.available);
  if (!s.note.empty()) j["note"] = s.note;
  if (s.measured()) {
    j["source"] = s.source;
    j["kernels_profiled"] = s.kernels_profiled;
    write_counts(j, s.counts, s.mechanisms);
    j["thread_true_opcodes"] = s.thread_true_opcodes;
    j["warp_executed_opcodes"] = s.warp_executed_opcodes;
    if (!s.foreign_kernels.empty()) j["foreign_kernels"] = s.foreign_kernels;
    if (!s.launches.empty()) j["launches"] = s.launches;
    write_optional(j, "coverage", s.coverage);
  }
  write_stage_record(j, s);
}

void from_json(const ordered_json& j, RuntimeSassSection& s) {
  require_json_object(j);
  read_field(j, "available", s.available);
  read_field(j, "note", s.note);
  read_field(j, "source", s.source);
  read_field(j, "kernels_profiled", s.kernels_profiled);
  read_counts(j, s.counts, s.mechanisms);
  read_field(j, "thread_true_opcodes", s.thread_true_opcodes);
  read_field(j, "warp_executed_opcodes", s.warp_executed_opcodes);
  read_field(j, "foreign_kernels", s.foreign_kernels);
  read_field(j, "launches", s.launches);
  read_field(j, "coverage", s.coverage);
  read_stage_record(j, s);
}

}  // namespace ptxbench

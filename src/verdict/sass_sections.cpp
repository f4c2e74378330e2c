#include "verdict/sass_sections.h"

namespace ptxbench {

FamilyCounts family_counts(const OpcodeCounts& c) {
  return {family_count(c, "GMMA"), family_count(c, "TMA"), family_count(c, "TCGEN05")};
}

namespace {
// The family counts and the mechanisms they prove, side by side in both sections.
void counts_fields(JsonIo& io, FamilyCounts& c, Mechanisms& m) {
  io("gmma", c.gmma);
  io("tma", c.tma);
  io("tcgen05", c.tcgen05);
  io.convert("mechanisms", m, [](const Mechanisms& x) { return to_json(x); }, mechanisms_from_json);
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

void json_fields(JsonIo& io, StaticSassSection& s) {
  io("available", s.available);
  io.when(!s.note.empty(), "note", s.note);
  if (io.reading() || s.available) {
    counts_fields(io, s.counts, s.mechanisms);
    io("opcodes", s.opcodes);
  }
  stage_record_fields(io, s);
}

void json_fields(JsonIo& io, RuntimeSassSection& s) {
  io("available", s.available);
  io.when(!s.note.empty(), "note", s.note);
  if (io.reading() || s.measured()) {
    io("source", s.source);
    io("kernels_profiled", s.kernels_profiled);
    counts_fields(io, s.counts, s.mechanisms);
    io("thread_true_opcodes", s.thread_true_opcodes);
    io("warp_executed_opcodes", s.warp_executed_opcodes);
    io.when(!s.foreign_kernels.empty(), "foreign_kernels", s.foreign_kernels);
    io.when(!s.launches.empty(), "launches", s.launches);
    io("coverage", s.coverage);
  }
  stage_record_fields(io, s);
}

}  // namespace ptxbench

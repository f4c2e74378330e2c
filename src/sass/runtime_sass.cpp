#include "sass/runtime_sass.h"

namespace ptxbench {

ordered_json to_json(const RuntimeSass& r) {
  ordered_json j;
  j["available"] = r.available;
  if (!r.note.empty()) j["note"] = r.note;
  if (!r.available) return j;
  j["source"] = r.source;
  j["kernels_profiled"] = r.kernels_profiled;
  j["gmma"] = family_count(r.thread_true, "GMMA");
  j["tma"] = family_count(r.thread_true, "TMA");
  j["tcgen05"] = family_count(r.thread_true, "TCGEN05");
  j["mechanisms"] = to_json(r.mechanisms);
  j["thread_true_opcodes"] = to_json(r.thread_true);
  j["warp_executed_opcodes"] = to_json(r.warp_executed);
  if (!r.foreign_kernels.empty()) j["foreign_kernels"] = r.foreign_kernels;
  return j;
}

}  // namespace ptxbench

#include "evaluator/stages/static_sass.h"

#include <chrono>

#include "common/clock.h"

namespace ptxbench {

namespace {

// The static SASS of several cubins.
StaticSass merge_static_sass(const std::vector<StaticSass>& parts) {
  StaticSass out;
  out.available = !parts.empty();
  for (const auto& p : parts) {
    out.available = out.available && p.available;
    if (!p.note.empty()) out.note += (out.note.empty() ? "" : "; ") + p.note;
    for (const auto& [name, counts] : p.per_kernel) add_counts(out.per_kernel[name], counts);
    for (const auto& [name, pcs] : p.pc_opcodes) out.pc_opcodes[name].insert(pcs.begin(), pcs.end());
    for (const auto& [name, shapes] : p.mma_shapes) {
      auto& into = out.mma_shapes[name];
      into.insert(into.end(), shapes.begin(), shapes.end());
    }
    add_counts(out.total, p.total);
  }
  out.mechanisms = mechanisms_from(out.total);
  return out;
}

}  // namespace

void StaticSassOutcome::into(CandidateBuild& build) {
  build.listing = std::move(listing);
  build.mma_shapes = std::move(mma_shapes);
  build.static_mechanism_opcodes = mechanism_opcodes;
}

StaticSassOutcome static_sass(const std::vector<fs::path>& cubins) {
  auto start = std::chrono::steady_clock::now();
  StaticSass sass;
  if (cubins.size() == 1) {
    sass = disassemble_cubin(cubins.front().string());
  } else {
    std::vector<StaticSass> parts;
    for (const auto& cubin : cubins) parts.push_back(disassemble_cubin(cubin.string()));
    sass = merge_static_sass(parts);
  }
  StaticSassOutcome out;
  out.section = static_sass_section(sass);
  out.section->wall_s = seconds_since(start);
  out.listing = std::move(sass.pc_opcodes);
  out.mma_shapes = std::move(sass.mma_shapes);
  if (sass.available) out.mechanism_opcodes = has_mechanism_opcodes(sass.total);
  return out;
}

}  // namespace ptxbench

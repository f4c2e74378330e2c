#include "sass/mma_coverage.h"

#include <algorithm>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

namespace ptxbench {

std::map<std::string, std::vector<MmaShape>> parse_mma_shapes(const std::string& sass_text) {
  static const std::regex function_re(R"(^\s*Function\s*:\s*(\S+))");
  static const std::regex mma_re(R"(\b[A-Z]*GMMA\.(\d+)x(\d+)x(\d+)\b)");
  std::map<std::string, std::set<MmaShape>> found;
  std::set<MmaShape>* current = nullptr;
  std::istringstream in(sass_text);
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, function_re)) current = &found[m[1]];
    else if (current && std::regex_search(line, m, mma_re))
      current->insert({std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])});
  }
  std::map<std::string, std::vector<MmaShape>> out;
  for (auto& [fn, shapes] : found)
    if (!shapes.empty()) out[fn] = {shapes.begin(), shapes.end()};
  return out;
}

ordered_json to_json(const Coverage& c) {
  ordered_json j = {{"available", c.available}};
  if (c.available) {
    j["workload_flops"] = c.workload_flops;
    j["tensor_core_flops"] = c.tensor_flops_min;
    j["share"] = c.share_min();
    if (!c.exact()) {
      j["tensor_core_flops_max"] = c.tensor_flops_max;
      j["share_max"] = c.share_max();
    }
  }
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

namespace {

// The shape of an MMA opcode with its modifiers ("HGMMA.64x256x16.F32.BF16"); nullopt for others.
std::optional<MmaShape> shape_of(const std::string& opcode_with_modifiers) {
  static const std::regex opcode(R"(^[A-Z]*GMMA(\.|$))");
  static const std::regex re(R"(\.(\d+)x(\d+)x(\d+)(\.|$))");
  std::smatch m;
  if (!std::regex_search(opcode_with_modifiers, opcode) || !std::regex_search(opcode_with_modifiers, m, re)) return std::nullopt;
  return MmaShape{std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
}

// One kernel's tensor FLOPs from its shaped counts; nullopt when they do not account for every
// GMMA warp execution of the kernel (not collected, or another opcode spelling).
std::optional<double> shaped_flops(const std::string& kernel, double thread_true, const ShapedMmaCounts& shaped) {
  auto with = shaped.warp_with_modifiers_per_kernel.find(kernel);
  auto warps = shaped.warp_per_kernel.find(kernel);
  if (with == shaped.warp_with_modifiers_per_kernel.end() || warps == shaped.warp_per_kernel.end()) return std::nullopt;
  const double warp_total = static_cast<double>(family_count(warps->second, "GMMA"));
  if (warp_total <= 0) return std::nullopt;
  double shaped_warps = 0, flops = 0;
  for (const auto& [opcode, n] : with->second) {
    if (opcode.find("GMMA") == std::string::npos) continue;
    auto shape = shape_of(opcode);
    if (!shape) return std::nullopt;
    shaped_warps += static_cast<double>(n);
    flops += static_cast<double>(n) / 4.0 * shape->flops();
  }
  if (shaped_warps != warp_total) return std::nullopt;
  // Lanes predicated off did no work: the thread-true share of the kernel's GMMA (1 when all ran).
  return flops * std::min(1.0, thread_true / (32.0 * warp_total));
}

}  // namespace

Coverage tensor_core_coverage(const std::map<std::string, OpcodeCounts>& executed_per_kernel,
                              const std::map<std::string, std::vector<MmaShape>>& shapes, double workload_flops,
                              const ShapedMmaCounts& shaped) {
  Coverage c;
  c.workload_flops = workload_flops;
  bool ranged = false, resolved = true;
  for (const auto& [kernel, counts] : executed_per_kernel) {
    double threads = static_cast<double>(family_count(counts, "GMMA"));
    if (threads <= 0) continue;
    auto it = shapes.find(kernel);
    if (it == shapes.end() || it->second.empty()) {
      c.note = "kernel " + kernel + " executed wgmma, but its listing names no MMA shape";
      return c;
    }
    double instructions = threads / kThreadsPerWarpgroupMma;
    double lo = it->second.front().flops(), hi = lo;
    for (const auto& s : it->second) {
      lo = std::min(lo, s.flops());
      hi = std::max(hi, s.flops());
    }
    if (lo == hi) {
      c.tensor_flops_min += instructions * lo;
      c.tensor_flops_max += instructions * hi;
      continue;
    }
    ranged = true;
    // Several shapes: exact where each shape's executions were counted and agree with the range.
    std::optional<double> exact = shaped_flops(kernel, threads, shaped);
    const double slack = 1e-9 * instructions * hi;
    if (exact && *exact >= instructions * lo - slack && *exact <= instructions * hi + slack) {
      c.tensor_flops_min += *exact;
      c.tensor_flops_max += *exact;
    } else {
      resolved = false;
      c.tensor_flops_min += instructions * lo;
      c.tensor_flops_max += instructions * hi;
    }
  }
  c.available = true;
  if (ranged && resolved)
    c.note = "kernels with MMA instructions of several shapes: exact from each shape's executions (ncu " +
             std::string("opcode modifiers)");
  else if (!c.exact())
    c.note = "kernels with MMA instructions of several shapes: the share is a range (its lower end decides the strict rule)";
  return c;
}

}  // namespace ptxbench

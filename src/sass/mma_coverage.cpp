#include "sass/mma_coverage.h"

#include <algorithm>
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

Coverage tensor_core_coverage(const std::map<std::string, OpcodeCounts>& executed_per_kernel,
                              const std::map<std::string, std::vector<MmaShape>>& shapes, double workload_flops) {
  Coverage c;
  c.workload_flops = workload_flops;
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
    c.tensor_flops_min += instructions * lo;
    c.tensor_flops_max += instructions * hi;
  }
  c.available = true;
  if (!c.exact())
    c.note = "kernels with MMA instructions of several shapes: the share is a range (its lower end decides the strict rule)";
  return c;
}

}  // namespace ptxbench

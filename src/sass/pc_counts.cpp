#include "sass/pc_counts.h"

#include "common/error.h"

namespace ptxbench {

ordered_json to_json(const std::vector<PcCount>& counts) {
  ordered_json records = ordered_json::array();
  for (const auto& c : counts)
    records.push_back({{"function", c.function}, {"pc", c.pc}, {"warp", c.warp_executed}, {"thread_true", c.thread_true}});
  return {{"warp_metric", kCuptiWarpMetric}, {"thread_true_metric", kCuptiThreadTrueMetric}, {"records", records}};
}

std::vector<PcCount> pc_counts_from_json(const ordered_json& j) {
  if (!j.is_object() || !j.contains("records") || !j["records"].is_array())
    throw Error("runtime_sass", "the runner's SASS counts lack a records array");
  std::vector<PcCount> out;
  for (const auto& r : j["records"]) {
    if (!r.is_object() || !r.contains("function") || !r["function"].is_string() || !r.contains("pc") ||
        !r["pc"].is_number_unsigned() || !r.contains("warp") || !r["warp"].is_number_unsigned() ||
        !r.contains("thread_true") || !r["thread_true"].is_number_unsigned())
      throw Error("runtime_sass", "malformed SASS count record: " + r.dump().substr(0, 200));
    out.push_back({r["function"].get<std::string>(), r["pc"].get<uint32_t>(), r["warp"].get<uint64_t>(),
                   r["thread_true"].get<uint64_t>()});
  }
  return out;
}

RuntimeSass runtime_sass_from_pcs(const std::vector<PcCount>& counts, const PcOpcodes& listing,
                                  const std::set<std::string>& candidate_kernels, const std::string& ignore_prefix) {
  RuntimeSass r;
  r.source = std::string("CUPTI SASS metrics ") + kCuptiThreadTrueMetric;
  std::set<std::string> ran, foreign;
  for (const auto& c : counts) {
    if (!candidate_kernels.count(c.function)) {
      if (ignore_prefix.empty() || c.function.find(ignore_prefix) == std::string::npos) foreign.insert(c.function);
      continue;
    }
    auto function = listing.find(c.function);
    const std::string* opcode = nullptr;
    if (function != listing.end()) {
      auto at = function->second.find(c.pc);
      if (at != function->second.end()) opcode = &at->second;
    }
    if (!opcode) {
      r.note = "offset " + std::to_string(c.pc) + " of " + c.function + " is not an instruction of the cubin's listing";
      return r;
    }
    if (c.warp_executed > 0) ran.insert(c.function);
    r.warp_executed[*opcode] += static_cast<long long>(c.warp_executed);
    if (c.thread_true == 0) continue;
    r.thread_true[*opcode] += static_cast<long long>(c.thread_true);
    r.thread_true_per_kernel[c.function][*opcode] += static_cast<long long>(c.thread_true);
  }
  if (ran.empty() && foreign.empty()) {
    // Every correct candidate launches kernels: no count at all means the counting failed.
    r.note = "CUPTI counted no executed instruction of any kernel";
    return r;
  }
  r.available = true;
  r.kernels_profiled = static_cast<int>(ran.size());
  r.foreign_kernels.assign(foreign.begin(), foreign.end());
  r.mechanisms = mechanisms_from(r.thread_true);
  return r;
}

}  // namespace ptxbench

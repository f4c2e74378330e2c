#include "sass/pc_counts.h"

#include "common/error.h"

namespace ptxbench {

ordered_json to_json(const SassCounts& counts) {
  ordered_json records = ordered_json::array();
  for (const auto& c : counts.instructions)
    records.push_back({{"function", c.function}, {"pc", c.pc}, {"warp", c.warp_executed}, {"thread_true", c.thread_true}});
  return {{"warp_metric", kCuptiWarpMetric},
          {"thread_true_metric", kCuptiThreadTrueMetric},
          {"records", records},
          {"launched", counts.launched}};
}

SassCounts sass_counts_from_json(const ordered_json& j) {
  if (!j.is_object() || !j.contains("records") || !j["records"].is_array() || !j.contains("launched") ||
      !j["launched"].is_array())
    throw Error("runtime_sass", "the runner's SASS counts lack the records or launched arrays");
  SassCounts out;
  for (const auto& r : j["records"]) {
    if (!r.is_object() || !r.contains("function") || !r["function"].is_string() || !r.contains("pc") ||
        !r["pc"].is_number_unsigned() || !r.contains("warp") || !r["warp"].is_number_unsigned() ||
        !r.contains("thread_true") || !r["thread_true"].is_number_unsigned())
      throw Error("runtime_sass", "malformed SASS count record: " + r.dump().substr(0, 200));
    out.instructions.push_back({r["function"].get<std::string>(), r["pc"].get<uint32_t>(), r["warp"].get<uint64_t>(),
                                r["thread_true"].get<uint64_t>()});
  }
  for (const auto& k : j["launched"]) {
    if (!k.is_string()) throw Error("runtime_sass", "malformed launched kernel name: " + k.dump().substr(0, 200));
    out.launched.insert(k.get<std::string>());
  }
  return out;
}

RuntimeSass runtime_sass_from_counts(const SassCounts& counts, const PcOpcodes& listing,
                                     const std::set<std::string>& candidate_kernels, const std::string& ignore_prefix) {
  RuntimeSass r;
  r.source = std::string("CUPTI SASS metrics ") + kCuptiThreadTrueMetric;
  auto ours = [&](const std::string& f) { return !ignore_prefix.empty() && f.find(ignore_prefix) != std::string::npos; };
  std::set<std::string> ran, foreign;
  for (const auto& c : counts.instructions) {
    if (!candidate_kernels.count(c.function)) {
      if (!ours(c.function)) foreign.insert(c.function);
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
  std::size_t launched = 0;
  for (const auto& k : counts.launched) {
    if (ours(k)) continue;
    ++launched;
    if (!candidate_kernels.count(k)) {
      foreign.insert(k);
    } else if (!ran.count(k)) {
      r.note = "kernel " + k + " ran but CUPTI counted none of its instructions";
      return r;
    }
  }
  if (launched == 0) {
    // Every correct candidate launches kernels: seeing none means the recording failed.
    r.note = "no kernel launch of the candidate was seen";
    return r;
  }
  r.available = true;
  r.kernels_profiled = static_cast<int>(ran.size());
  r.foreign_kernels.assign(foreign.begin(), foreign.end());
  r.mechanisms = mechanisms_from(r.thread_true);
  return r;
}

}  // namespace ptxbench

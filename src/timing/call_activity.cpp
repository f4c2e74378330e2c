#include "timing/call_activity.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace ptxbench {

bool KernelLaunch::operator==(const KernelLaunch& o) const {
  return std::tie(name, grid, block, dynamic_smem) == std::tie(o.name, o.grid, o.block, o.dynamic_smem);
}

bool KernelLaunch::operator<(const KernelLaunch& o) const {
  return std::tie(name, grid, block, dynamic_smem) < std::tie(o.name, o.grid, o.block, o.dynamic_smem);
}

ordered_json to_json(const KernelLaunch& k) {
  return {{"name", k.name}, {"grid", k.grid}, {"block", k.block}, {"dynamic_smem", k.dynamic_smem}};
}

KernelLaunch kernel_launch_from_json(const ordered_json& j) {
  KernelLaunch k;
  k.name = j.at("name").get<std::string>();
  k.grid = j.at("grid").get<std::array<uint32_t, 3>>();
  k.block = j.at("block").get<std::array<uint32_t, 3>>();
  k.dynamic_smem = j.at("dynamic_smem").get<uint32_t>();
  return k;
}

std::string describe(const KernelLaunch& k) {
  auto dim = [](const std::array<uint32_t, 3>& d) {
    return "(" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + ")";
  };
  return k.name + "<<<" + dim(k.grid) + "," + dim(k.block) + "," + std::to_string(k.dynamic_smem) + ">>>";
}

ordered_json to_json(const CallActivity& a) {
  ordered_json kernels = ordered_json::array();
  for (const auto& k : a.kernels) kernels.push_back(to_json(k));
  return {{"index", a.index}, {"span_us", a.span_us}, {"empty", a.empty}, {"kernels", kernels}};
}

CallActivity call_activity_from_json(const ordered_json& j) {
  CallActivity a;
  a.index = j.at("index").get<uint64_t>();
  a.span_us = j.at("span_us").get<double>();
  a.empty = j.at("empty").get<bool>();
  for (const auto& k : j.at("kernels")) a.kernels.push_back(kernel_launch_from_json(k));
  return a;
}

Attribution attribute_records(const std::vector<DeviceRecord>& records, const std::vector<CallWindow>& windows) {
  Attribution out;
  std::vector<uint64_t> first(windows.size(), UINT64_MAX), last(windows.size(), 0);
  std::vector<std::vector<std::pair<uint64_t, KernelLaunch>>> kernels(windows.size());
  std::set<std::string> stray;
  for (const auto& r : records) {
    if (r.start_ns == 0 || r.end_ns < r.start_ns) continue;  // incomplete record
    auto it = std::find_if(windows.begin(), windows.end(),
                           [&](const CallWindow& w) { return r.start_ns >= w.begin_ns && r.start_ns < w.end_ns; });
    if (it == windows.end() && r.kind != DeviceRecord::Kind::memset)
      it = std::find_if(windows.begin(), windows.end(),
                        [&](const CallWindow& w) { return r.start_ns < w.end_ns && r.end_ns > w.begin_ns; });
    if (it == windows.end()) {
      if (r.kind != DeviceRecord::Kind::memset)
        stray.insert(r.kind == DeviceRecord::Kind::kernel ? r.name : std::string("(memcpy)"));
      continue;
    }
    auto i = static_cast<std::size_t>(it - windows.begin());
    first[i] = std::min(first[i], r.start_ns);
    last[i] = std::max(last[i], r.end_ns);
    if (r.kind == DeviceRecord::Kind::kernel)
      kernels[i].push_back({r.start_ns, KernelLaunch{r.name, r.grid, r.block, r.dynamic_smem}});
  }
  for (std::size_t i = 0; i < windows.size(); ++i) {
    CallActivity a;
    a.index = windows[i].index;
    a.empty = first[i] == UINT64_MAX;
    a.span_us = a.empty ? 0.0 : static_cast<double>(last[i] - first[i]) * 1e-3;
    std::sort(kernels[i].begin(), kernels[i].end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto& [t, k] : kernels[i]) a.kernels.push_back(std::move(k));
    out.calls.push_back(std::move(a));
  }
  out.stray.assign(stray.begin(), stray.end());
  return out;
}

}  // namespace ptxbench

#include "sass/ncu_report.h"

#include <array>
#include <cstdlib>
#include <map>
#include <sstream>

namespace ptxbench {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  fields.push_back(cur);
  return fields;
}

namespace {
// "(128, 1, 1)" -> {128, 1, 1}
std::array<uint32_t, 3> parse_dim3(const std::string& text) {
  std::array<uint32_t, 3> d{1, 1, 1};
  std::size_t i = 0;
  for (std::size_t pos = 0; i < 3 && pos < text.size(); ++pos) {
    if (!std::isdigit(static_cast<unsigned char>(text[pos]))) continue;
    std::size_t end = pos;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    d[i++] = static_cast<uint32_t>(std::stoul(text.substr(pos, end - pos)));
    pos = end;
  }
  return d;
}

// "1,024" (ncu's thousands separators) -> 1024
// The leading number of a value: "99,328 (0: 99,328)" (with --print-metric-instances details,
// the instances follow in parentheses) is 99328; thousands separators are dropped.
double parse_number(const std::string& text) {
  std::string digits;
  for (char c : text.substr(0, text.find('(')))
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') digits += c;
  return digits.empty() ? 0.0 : std::stod(digits);
}

// Nanoseconds in one of ncu's time units ("nsecond" with --print-units base; the others in case).
double ns_per_unit(const std::string& unit) {
  if (unit == "usecond" || unit == "us") return 1e3;
  if (unit == "msecond" || unit == "ms") return 1e6;
  if (unit == "second" || unit == "s") return 1e9;
  return 1.0;
}
}  // namespace

std::vector<std::string> ncu_command(const std::string& ncu, const std::string& log, const std::set<std::string>& refused,
                                     bool binding, const std::vector<std::string>& target) {
  std::string metrics = std::string(kNcuThreadTrueMetric) + "," + kNcuWarpMetric + "," + kNcuDynamicSmemMetric;
  if (binding) metrics += std::string(",") + kNcuDurationMetric;
  for (const char* m : kNcuOptionalMetrics)
    if (!refused.count(m) && (binding || m == kNcuWarpModifierMetric)) metrics += std::string(",") + m;
  std::vector<std::string> argv = {ncu, "--csv", "--log-file", log, "--print-metric-instances", "details", "--print-kernel-base",
                                   "mangled", "--print-units", "base", "--clock-control", "none", "--metrics", metrics};
  argv.insert(argv.end(), target.begin(), target.end());
  return argv;
}

bool ncu_rejected_metric(const std::string& output, const std::string& metric) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.find("==ERROR==") != std::string::npos && line.find(metric) != std::string::npos) return true;
  return false;
}

OpcodeCounts parse_instance_values(const std::string& value) {
  OpcodeCounts out;
  auto open = value.find('(');
  auto close = value.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return out;
  std::stringstream items(value.substr(open + 1, close - open - 1));
  std::string item;
  while (std::getline(items, item, ';')) {
    auto colon = item.find(':');
    if (colon == std::string::npos) continue;
    std::string name, digits;
    for (char c : item.substr(0, colon))
      if (!std::isspace(static_cast<unsigned char>(c))) name += c;
    for (char c : item.substr(colon + 1))
      if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
    if (name.empty() || digits.empty()) continue;
    out[name] += std::stoll(digits);
  }
  return out;
}

RuntimeSass parse_ncu_csv(const std::string& text, const std::set<std::string>& candidate_kernels,
                          const std::string& ignore_prefix) {
  RuntimeSass r;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  int col_id = -1, col_kernel = -1, col_metric = -1, col_value = -1, col_grid = -1, col_block = -1, col_unit = -1;
  std::set<std::string> launches, foreign;
  std::map<long, KernelLaunch> by_id;
  while (std::getline(in, line)) {
    if (header.empty()) {
      if (line.rfind("\"ID\"", 0) != 0) continue;
      header = split_csv_line(line);
      for (int i = 0; i < static_cast<int>(header.size()); ++i) {
        if (header[i] == "ID") col_id = i;
        if (header[i] == "Kernel Name") col_kernel = i;
        if (header[i] == "Metric Name") col_metric = i;
        if (header[i] == "Metric Value") col_value = i;
        if (header[i] == "Grid Size") col_grid = i;
        if (header[i] == "Block Size") col_block = i;
        if (header[i] == "Metric Unit") col_unit = i;
      }
      if (col_id < 0 || col_kernel < 0 || col_metric < 0 || col_value < 0) {
        r.note = "ncu CSV header lacks the expected columns";
        return r;
      }
      r.available = true;
      continue;
    }
    auto f = split_csv_line(line);
    if (static_cast<int>(f.size()) <= col_value) continue;
    const std::string& kernel = f[col_kernel];
    long id = std::atol(f[col_id].c_str());
    KernelLaunch& launch = by_id[id];
    launch.name = kernel;
    if (col_grid >= 0) launch.grid = parse_dim3(f[col_grid]);
    if (col_block >= 0) launch.block = parse_dim3(f[col_block]);
    if (f[col_metric] == kNcuDynamicSmemMetric) launch.dynamic_smem = static_cast<uint32_t>(parse_number(f[col_value]));
    if (!candidate_kernels.count(kernel)) {
      if (ignore_prefix.empty() || kernel.find(ignore_prefix) == std::string::npos) foreign.insert(kernel);
      continue;
    }
    launches.insert(f[col_id]);
    const std::string& metric = f[col_metric];
    if (metric == kNcuDurationMetric) {
      const double ns = parse_number(f[col_value]) * ns_per_unit(col_unit >= 0 ? f[col_unit] : "");
      r.duration_ns_per_kernel[kernel] += ns;
      r.duration_ns += ns;
      r.durations_measured = true;
      continue;
    }
    if (metric == kNcuGmmaPipeMetric || metric == kNcuTmaPipeMetric) {
      auto& total = metric == kNcuGmmaPipeMetric ? r.hw_gmma_warp_inst : r.hw_tma_inst;
      total = total.value_or(0.0) + parse_number(f[col_value]);
      continue;
    }
    OpcodeCounts counts = parse_instance_values(f[col_value]);
    if (metric == kNcuThreadTrueMetric) {
      add_counts(r.thread_true_per_kernel[kernel], counts);
      add_counts(r.thread_true, counts);
    } else if (metric == kNcuWarpMetric) {
      add_counts(r.warp_executed, counts);
      add_counts(r.warp_per_kernel[kernel], counts);
    } else if (metric == kNcuWarpModifierMetric) {
      add_counts(r.warp_with_modifiers_per_kernel[kernel], counts);
    }
  }
  if (!r.available && r.note.empty()) r.note = "no ncu CSV output found";
  r.kernels_profiled = static_cast<int>(launches.size());
  for (auto& [id, launch] : by_id) r.launches.push_back(std::move(launch));
  r.foreign_kernels.assign(foreign.begin(), foreign.end());
  r.source = std::string("ncu ") + kNcuThreadTrueMetric;
  r.mechanisms = mechanisms_from(r.thread_true);
  return r;
}

}  // namespace ptxbench

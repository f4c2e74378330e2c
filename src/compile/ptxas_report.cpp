#include "compile/ptxas_report.h"

#include <map>
#include <regex>
#include <sstream>

namespace ptxbench {

PtxasReport parse_ptxas_report(const std::string& log) {
  static const std::regex entry_re(R"(Compiling entry function '([^']+)')");
  static const std::regex props_re(R"(Function properties for (\S+))");
  static const std::regex frame_re(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used_re(R"(Used (\d+) registers)");
  static const std::regex barriers_re(R"(used (\d+) barriers)");
  static const std::regex smem_re(R"((\d+) bytes smem)");
  static const std::regex cmem_re(R"((\d+) bytes cmem\[0\])");

  PtxasReport report;
  std::map<std::string, std::size_t> index;
  auto kernel = [&](const std::string& name) -> KernelResources& {
    auto it = index.find(name);
    if (it != index.end()) return report.kernels[it->second];
    index[name] = report.kernels.size();
    report.kernels.push_back(KernelResources{name});
    return report.kernels.back();
  };
  std::string current_entry, current_props;
  std::istringstream in(log);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.find("ptxas warning") != std::string::npos) report.warnings.push_back(line);
    if (std::regex_search(line, m, entry_re)) {
      current_entry = m[1];
      kernel(current_entry);
    } else if (std::regex_search(line, m, props_re)) {
      current_props = m[1];
    } else if (std::regex_search(line, m, frame_re)) {
      if (index.count(current_props)) {
        auto& k = kernel(current_props);
        k.stack_frame_bytes = std::stol(m[1]);
        k.spill_store_bytes = std::stol(m[2]);
        k.spill_load_bytes = std::stol(m[3]);
      }
    } else if (std::regex_search(line, m, used_re) && !current_entry.empty()) {
      auto& k = kernel(current_entry);
      k.registers = std::stoi(m[1]);
      if (std::regex_search(line, m, barriers_re)) k.barriers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem_re)) k.smem_bytes = std::stol(m[1]);
      if (std::regex_search(line, m, cmem_re)) k.cmem0_bytes = std::stol(m[1]);
    }
  }
  return report;
}

}  // namespace ptxbench

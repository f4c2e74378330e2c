#include "common/cpu_affinity.h"

#include <sched.h>

#include <cctype>
#include <fstream>

#include "common/text.h"

namespace ptxbench {

std::optional<std::vector<int>> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::string item;
  auto number = [](const std::string& s) -> std::optional<int> {
    if (s.empty() || s.size() > 6) return std::nullopt;
    for (char c : s)
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    return std::stoi(s);
  };
  std::string trimmed;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) trimmed += c;
  if (trimmed.empty()) return std::nullopt;
  std::size_t start = 0;
  while (start <= trimmed.size()) {
    std::size_t comma = trimmed.find(',', start);
    item = trimmed.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::size_t dash = item.find('-');
    auto lo = number(item.substr(0, dash));
    auto hi = dash == std::string::npos ? lo : number(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) return std::nullopt;
    for (int c = *lo; c <= *hi; ++c) cpus.push_back(c);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cpus;
}

std::string pin_to_local_cpus(const std::string& pci_bus_id, const std::string& sysfs) {
  std::string path = sysfs + "/" + lower(pci_bus_id) + "/local_cpulist";
  std::ifstream in(path);
  std::string text;
  if (!in || !std::getline(in, text)) return "not pinned: " + path + " unreadable";
  auto local = parse_cpu_list(text);
  if (!local) return "not pinned: " + path + " reads '" + text + "'";
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return "not pinned: sched_getaffinity failed";
  cpu_set_t wanted;
  CPU_ZERO(&wanted);
  int count = 0;
  for (int c : *local)
    if (c < CPU_SETSIZE && CPU_ISSET(c, &allowed)) {
      CPU_SET(c, &wanted);
      ++count;
    }
  if (count == 0) return "not pinned: none of the GPU's local CPUs (" + text + ") is allowed";
  if (count == CPU_COUNT(&allowed)) return "all " + std::to_string(count) + " allowed CPUs are local to the GPU (" + text + ")";
  if (sched_setaffinity(0, sizeof wanted, &wanted) != 0) return "not pinned: sched_setaffinity failed";
  return "pinned to the " + std::to_string(count) + " allowed CPUs local to the GPU (" + text + ")";
}

}  // namespace ptxbench

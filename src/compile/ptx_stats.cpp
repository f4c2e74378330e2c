#include "compile/ptx_stats.h"

#include <sstream>
#include <vector>

namespace ptxbench {
namespace {

// First matching prefix wins, so longer prefixes come first.
const std::vector<std::pair<const char*, const char*>> kFamilies = {
    {"wgmma.mma_async", "wgmma.mma_async"},
    {"wgmma.fence", "wgmma.fence"},
    {"wgmma.commit_group", "wgmma.commit_group"},
    {"wgmma.wait_group", "wgmma.wait_group"},
    {"cp.async.bulk.tensor", "cp.async.bulk.tensor"},
    {"cp.reduce.async.bulk.tensor", "cp.reduce.async.bulk.tensor"},
    {"cp.async.bulk.prefetch.tensor", "cp.async.bulk.prefetch.tensor"},
    {"cp.async.bulk", "cp.async.bulk"},
    {"cp.reduce.async.bulk", "cp.async.bulk"},
    {"cp.async", "cp.async"},
    {"mbarrier", "mbarrier"},
    {"fence.proxy.async", "fence.proxy.async"},
    {"fence.mbarrier_init", "fence.mbarrier_init"},
    {"setmaxnreg", "setmaxnreg"},
    {"stmatrix", "stmatrix"},
    {"ldmatrix", "ldmatrix"},
    {"mma.sync", "mma"},
    {"mma.sp", "mma"},
    {"tcgen05.mma", "tcgen05.mma"},
    {"tcgen05.ld", "tcgen05.ld"},
    {"tcgen05.st", "tcgen05.st"},
    {"tcgen05.cp", "tcgen05.cp"},
    {"tcgen05.alloc", "tcgen05.alloc"},
    {"tcgen05.dealloc", "tcgen05.dealloc"},
    {"tcgen05.commit", "tcgen05.commit"},
    {"tcgen05.", "tcgen05.other"},
    {"barrier.cluster", "barrier.cluster"},
    {"elect.sync", "elect.sync"},
    {"multimem", "multimem"},
};

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool is_instruction(const std::string& stmt) {
  if (stmt.empty()) return false;
  char c = stmt[0];
  if (c == '.' || c == '{' || c == '}' || c == ')' || c == '(' || c == '"') return false;
  // labels ("$L__BB0_1:") and parameter lists are not instructions
  std::string first = stmt.substr(0, stmt.find_first_of(" \t"));
  if (!first.empty() && first.back() == ':') return false;
  return std::isalpha(static_cast<unsigned char>(c)) || c == '@';
}

}  // namespace

int PtxStats::count(const std::string& family) const {
  auto it = families.find(family);
  return it == families.end() ? 0 : it->second;
}

PtxStats analyze_ptx(const std::string& ptx) {
  PtxStats stats;
  std::istringstream in(ptx);
  std::string line;
  bool in_block_comment = false;
  while (std::getline(in, line)) {
    if (in_block_comment) {
      auto end = line.find("*/");
      if (end == std::string::npos) continue;
      line = line.substr(end + 2);
      in_block_comment = false;
    }
    if (auto c = line.find("//"); c != std::string::npos) line.resize(c);
    if (auto c = line.find("/*"); c != std::string::npos) {
      in_block_comment = line.find("*/", c) == std::string::npos;
      line.resize(c);
    }
    std::stringstream statements(line);
    std::string stmt;
    while (std::getline(statements, stmt, ';')) {
      stmt = trim(stmt);
      while (!stmt.empty() && (stmt[0] == '{' || stmt[0] == '}')) stmt = trim(stmt.substr(1));
      if (!is_instruction(stmt)) continue;
      if (stmt[0] == '@') {  // guard predicate "@%p1 op" / "@!p op"
        auto sp = stmt.find_first_of(" \t");
        if (sp == std::string::npos) continue;
        stmt = trim(stmt.substr(sp));
      }
      std::string opcode = stmt.substr(0, stmt.find_first_of(" \t"));
      ++stats.instructions;
      for (const auto& [prefix, family] : kFamilies) {
        if (opcode.rfind(prefix, 0) != 0) continue;
        ++stats.families[family];
        if (std::string(family) == "cp.async.bulk.tensor")
          ++stats.families[opcode.find(".global.shared") != std::string::npos
                               ? "cp.async.bulk.tensor:store"
                               : "cp.async.bulk.tensor:load"];
        break;
      }
    }
  }
  return stats;
}

}  // namespace ptxbench

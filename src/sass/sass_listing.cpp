#include "sass/sass_listing.h"

#include <regex>
#include <sstream>

#include "common/cuda_tools.h"
#include "common/subprocess.h"

namespace ptxbench {

PcOpcodes parse_sass_pcs(const std::string& text) {
  static const std::regex function_re(R"(^\s*Function\s*:\s*(\S+))");
  // "/*0130*/   @!P0 HGMMA.64x128x16.F32.BF16 R24, ..." (the encoding lines hold only a comment)
  static const std::regex inst_re(R"(^\s*/\*([0-9a-fA-F]+)\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)[.\s;])");
  PcOpcodes out;
  std::map<uint32_t, std::string>* current = nullptr;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, function_re)) {
      current = &out[m[1]];
    } else if (current && std::regex_search(line, m, inst_re)) {
      (*current)[static_cast<uint32_t>(std::stoul(m[1].str(), nullptr, 16))] = m[2];
    }
  }
  return out;
}

std::map<std::string, OpcodeCounts> count_opcodes(const PcOpcodes& listing) {
  std::map<std::string, OpcodeCounts> out;
  for (const auto& [function, pcs] : listing) {
    OpcodeCounts& counts = out[function];
    for (const auto& [pc, opcode] : pcs) ++counts[opcode];
  }
  return out;
}

std::map<std::string, OpcodeCounts> parse_sass_listing(const std::string& text) {
  return count_opcodes(parse_sass_pcs(text));
}

StaticSass disassemble_cubin(const std::string& cubin_path) {
  StaticSass s;
  std::string tool = find_cuda_tool("cuobjdump");
  if (tool.empty()) {
    s.note = "cuobjdump not found on this host; static SASS skipped";
    return s;
  }
  ProcessSpec spec;
  spec.argv = {tool, "-sass", cubin_path};
  spec.output_cap_bytes = 64 << 20;
  auto r = run_process(spec, 120);
  if (!r.status.success() || r.out.truncated()) {
    s.note = "cuobjdump " + r.status.describe() + ": " + r.err.text.substr(0, 500);
    return s;
  }
  s.available = true;
  s.pc_opcodes = parse_sass_pcs(r.out.text);
  s.mma_shapes = parse_mma_shapes(r.out.text);
  s.per_kernel = count_opcodes(s.pc_opcodes);
  for (const auto& [name, counts] : s.per_kernel) add_counts(s.total, counts);
  s.mechanisms = mechanisms_from(s.total);
  return s;
}

ordered_json to_json(const StaticSass& s) {
  ordered_json j;
  j["available"] = s.available;
  if (!s.note.empty()) j["note"] = s.note;
  if (!s.available) return j;
  j["gmma"] = family_count(s.total, "GMMA");
  j["tma"] = family_count(s.total, "TMA");
  j["tcgen05"] = family_count(s.total, "TCGEN05");
  j["mechanisms"] = to_json(s.mechanisms);
  j["opcodes"] = to_json(s.total);
  return j;
}

}  // namespace ptxbench

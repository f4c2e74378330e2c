#include "sass/sass_listing.h"

#include <regex>
#include <sstream>

#include "common/cuda_tools.h"
#include "common/subprocess.h"

namespace ptxbench {

std::map<std::string, OpcodeCounts> parse_sass_listing(const std::string& text) {
  static const std::regex function_re(R"(^\s*Function\s*:\s*(\S+))");
  // "/*0130*/   @!P0 HGMMA.64x128x16.F32.BF16 R24, ..." (the encoding lines hold only a comment)
  static const std::regex inst_re(R"(^\s*/\*[0-9a-fA-F]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)[.\s;])");
  std::map<std::string, OpcodeCounts> out;
  std::string current;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, function_re)) {
      current = m[1];
      out[current];
    } else if (!current.empty() && std::regex_search(line, m, inst_re)) {
      ++out[current][m[1]];
    }
  }
  return out;
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
  s.per_kernel = parse_sass_listing(r.out.text);
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

// Static SASS: runs cuobjdump on a cubin and counts opcodes per kernel.
#pragma once

#include <map>
#include <string>

#include "sass/opcode_counts.h"

namespace ptxbench {

/// Function name -> static opcode counts, parsed from `cuobjdump -sass` text.
std::map<std::string, OpcodeCounts> parse_sass_listing(const std::string& text);

struct StaticSass {
  bool available = false;  ///< false when cuobjdump is missing or failed (see note)
  std::string note;
  std::map<std::string, OpcodeCounts> per_kernel;
  OpcodeCounts total;
  Mechanisms mechanisms;  ///< what the code *could* do; runtime counts decide the verdict
};

/// Disassembles `cubin` with cuobjdump (when present) and counts.
StaticSass disassemble_cubin(const std::string& cubin_path);

ordered_json to_json(const StaticSass& s);

}  // namespace ptxbench

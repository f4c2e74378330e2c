// Static SASS: runs cuobjdump on a cubin and counts opcodes per kernel.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sass/mma_coverage.h"
#include "sass/opcode_counts.h"

namespace ptxbench {

/// Function name -> (instruction offset within the function -> base opcode), parsed from
/// `cuobjdump -sass` text. The offsets are the ones run-time PC samples report.
using PcOpcodes = std::map<std::string, std::map<uint32_t, std::string>>;
PcOpcodes parse_sass_pcs(const std::string& text);

/// Function name -> static opcode counts (one per instruction of the listing).
std::map<std::string, OpcodeCounts> count_opcodes(const PcOpcodes& listing);
/// Function name -> static opcode counts, parsed from `cuobjdump -sass` text.
std::map<std::string, OpcodeCounts> parse_sass_listing(const std::string& text);

struct StaticSass {
  bool available = false;  ///< false when cuobjdump is missing or failed (see note)
  std::string note;
  std::map<std::string, OpcodeCounts> per_kernel;
  PcOpcodes pc_opcodes;  ///< maps run-time per-instruction counts (sass/pc_counts.h) to opcodes
  std::map<std::string, std::vector<MmaShape>> mma_shapes;  ///< per kernel (tensor-core coverage)
  OpcodeCounts total;
  Mechanisms mechanisms;  ///< what the code *could* do; runtime counts decide the verdict
};

/// Disassembles `cubin` with cuobjdump (when present) and counts.
StaticSass disassemble_cubin(const std::string& cubin_path);

ordered_json to_json(const StaticSass& s);

}  // namespace ptxbench

// Checks on the built candidate library: it exports the ABI entry point, imports no banned
// symbol, and needs no library beyond the CUDA runtime/driver and the C/C++ runtime.
#pragma once

#include <string>
#include <vector>

#include "compile/elf_symbols.h"

namespace ptxbench {

struct BinaryFinding {
  std::string rule;
  std::string reason;
  std::string symbol;  ///< the imported symbol or needed library
};

struct BinaryCheckResult {
  std::string abi_error;               ///< empty when ptxb_run is exported correctly
  std::vector<BinaryFinding> banned;   ///< banned imports or libraries
};

BinaryCheckResult check_candidate_library(const ElfInfo& library);

}  // namespace ptxbench

// A minimal ELF64 reader: the symbols and needed libraries of a candidate's shared library, and
// the kernel entry points of its cubin (CUDA marks them with st_other bit 0x10).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench {

struct ElfSymbol {
  std::string name;
  uint8_t type = 0;     ///< STT_*: 0 notype, 1 object, 2 func
  uint8_t binding = 0;  ///< STB_*: 0 local, 1 global, 2 weak
  uint8_t other = 0;    ///< st_other: visibility, and CUDA's entry flag (0x10)
  bool defined = false;
  [[nodiscard]] bool is_function() const noexcept { return type == 2; }
  [[nodiscard]] bool is_cuda_entry() const noexcept { return type == 2 && (other & 0x10) != 0; }
};

struct ElfInfo {
  std::vector<ElfSymbol> dynamic_symbols;  ///< .dynsym
  std::vector<ElfSymbol> symbols;          ///< .symtab
  std::vector<std::string> needed;         ///< DT_NEEDED
};

/// Parses an ELF64 little-endian image; throws InputError("elf", ...) when malformed.
ElfInfo read_elf(const std::string& image, const std::string& name);

/// Names of the kernel entry points in a cubin.
std::vector<std::string> cubin_kernels(const ElfInfo& cubin);

}  // namespace ptxbench

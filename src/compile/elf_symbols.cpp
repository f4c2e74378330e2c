#include "compile/elf_symbols.h"

#include <cstring>

#include "common/error.h"

namespace ptxbench {
namespace {

struct Ehdr {
  unsigned char ident[16];
  uint16_t type, machine;
  uint32_t version;
  uint64_t entry, phoff, shoff;
  uint32_t flags;
  uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
struct Shdr {
  uint32_t name, type;
  uint64_t flags, addr, offset, size;
  uint32_t link, info;
  uint64_t addralign, entsize;
};
struct Sym {
  uint32_t name;
  unsigned char info, other;
  uint16_t shndx;
  uint64_t value, size;
};
struct Dyn {
  int64_t tag;
  uint64_t val;
};
static_assert(sizeof(Ehdr) == 64 && sizeof(Shdr) == 64 && sizeof(Sym) == 24 && sizeof(Dyn) == 16);

class Reader {
 public:
  Reader(const std::string& image, const std::string& name) : m_image(image), m_name(name) {}
  template <typename T>
  T at(uint64_t offset) const {
    if (offset > m_image.size() || m_image.size() - offset < sizeof(T)) fail("truncated");
    T v;
    std::memcpy(&v, m_image.data() + offset, sizeof(T));
    return v;
  }
  std::string str(const Shdr& strtab, uint32_t index) const {
    if (index >= strtab.size) fail("string index out of range");
    uint64_t start = strtab.offset + index;
    if (start >= m_image.size()) fail("truncated string table");
    const char* p = m_image.data() + start;
    std::size_t max = std::min<uint64_t>(m_image.size() - start, strtab.size - index);
    return std::string(p, strnlen(p, max));
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("elf", m_name + ": malformed ELF: " + what);
  }

 private:
  const std::string& m_image;
  const std::string& m_name;
};

}  // namespace

ElfInfo read_elf(const std::string& image, const std::string& name) {
  Reader r(image, name);
  auto eh = r.at<Ehdr>(0);
  if (std::memcmp(eh.ident, "\x7f" "ELF", 4) != 0) r.fail("bad magic");
  if (eh.ident[4] != 2 || eh.ident[5] != 1) r.fail("not ELF64 little-endian");
  if (eh.shentsize != sizeof(Shdr)) r.fail("unexpected section header size");
  std::vector<Shdr> sections;
  for (uint16_t i = 0; i < eh.shnum; ++i) sections.push_back(r.at<Shdr>(eh.shoff + uint64_t(i) * sizeof(Shdr)));

  ElfInfo info;
  for (const auto& sh : sections) {
    if (sh.type == 2 /*SHT_SYMTAB*/ || sh.type == 11 /*SHT_DYNSYM*/) {
      if (sh.link >= sections.size()) r.fail("symbol table links no string table");
      const Shdr& strtab = sections[sh.link];
      auto& out = sh.type == 2 ? info.symbols : info.dynamic_symbols;
      for (uint64_t off = sizeof(Sym); off + sizeof(Sym) <= sh.size; off += sizeof(Sym)) {
        auto s = r.at<Sym>(sh.offset + off);
        ElfSymbol e;
        e.name = r.str(strtab, s.name);
        e.type = s.info & 0xf;
        e.binding = s.info >> 4;
        e.other = s.other;
        e.defined = s.shndx != 0;
        out.push_back(std::move(e));
      }
    } else if (sh.type == 6 /*SHT_DYNAMIC*/) {
      if (sh.link >= sections.size()) r.fail(".dynamic links no string table");
      const Shdr& strtab = sections[sh.link];
      for (uint64_t off = 0; off + sizeof(Dyn) <= sh.size; off += sizeof(Dyn)) {
        auto d = r.at<Dyn>(sh.offset + off);
        if (d.tag == 0) break;
        if (d.tag == 1 /*DT_NEEDED*/) info.needed.push_back(r.str(strtab, static_cast<uint32_t>(d.val)));
      }
    }
  }
  return info;
}

std::vector<std::string> cubin_kernels(const ElfInfo& cubin) {
  std::vector<std::string> out;
  for (const auto& s : cubin.symbols)
    if (s.defined && s.is_cuda_entry()) out.push_back(s.name);
  return out;
}

}  // namespace ptxbench

// Checks on the built candidate library: it exports the ABI entry point with C linkage, imports
// only symbols on the import allowlist (knowledge/abi/allowed_imports.json, docs/imports.md), and
// needs no library beyond the CUDA runtime/driver and the C/C++ runtime.
#pragma once

#include <regex>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/fs.h"
#include "compile/elf_symbols.h"

namespace ptxbench {

/// One named group of the allowlist file: exact names (optionally with the file's variant
/// suffixes) and whole-name regular expressions, with the reason shown to people and models.
struct ImportGroup {
  std::string name;
  std::string reason;
  bool variants = false;  ///< each exact name also admits name + variant suffix (_v2, _ptsz, ...)
  std::unordered_set<std::string> symbols;
  std::vector<std::string> pattern_text;
  std::vector<std::regex> patterns;
};

/// How the allowlist judges one imported symbol.
struct ImportVerdict {
  bool allowed = false;
  const ImportGroup* group = nullptr;  ///< the allowing group, or the denying one; null: on no list
};

/// The import allowlist: a symbol is allowed when an allowed group matches it and no denied group
/// does. Denied groups exist to name the reason; a symbol on no list is banned all the same.
class ImportAllowlist {
 public:
  /// Parses the JSON text; throws InputError naming `document` and the field for a malformed file.
  static ImportAllowlist parse(const std::string& text, const std::string& document);
  /// Reads and parses a file (InputError when it cannot).
  static ImportAllowlist load(const fs::path& file);
  /// The list in `file`, loaded once per process and path (the compile stage checks every
  /// candidate against it; compiling its regular expressions each time would be waste).
  static const ImportAllowlist& shared(const fs::path& file);

  [[nodiscard]] ImportVerdict classify(const std::string& symbol) const;
  [[nodiscard]] const std::vector<ImportGroup>& allowed_groups() const noexcept { return m_allowed; }
  [[nodiscard]] const std::vector<ImportGroup>& denied_groups() const noexcept { return m_denied; }

 private:
  [[nodiscard]] bool matches(const ImportGroup& group, const std::string& symbol) const;
  std::vector<ImportGroup> m_allowed;
  std::vector<ImportGroup> m_denied;
  std::regex m_variant_suffix;
};

/// knowledge/abi/allowed_imports.json under data_root(), beside ptxbench_abi.h.
fs::path default_import_allowlist_path();

inline constexpr const char* kNotAllowedRule = "not-allowed";
inline constexpr const char* kLibraryRule = "library";

struct BinaryFinding {
  std::string rule;       ///< allowlist group, kNotAllowedRule, or kLibraryRule
  std::string reason;
  std::string symbol;     ///< the imported symbol or needed library
  std::string demangled;  ///< readable C++ name; empty for C symbols and libraries
};

struct BinaryCheckResult {
  std::string abi_error;               ///< empty when ptxb_run is exported correctly
  std::vector<BinaryFinding> banned;   ///< banned imports or libraries, grouped by rule in list order
};

BinaryCheckResult check_candidate_library(const ElfInfo& library, const ImportAllowlist& allowlist);

/// The feedback paragraph for banned findings: per rule, its symbols (at most eight, readable
/// C++ names) and then its reason.
std::string describe_banned(const std::vector<BinaryFinding>& banned);

}  // namespace ptxbench

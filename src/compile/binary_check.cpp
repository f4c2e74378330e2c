#include "compile/binary_check.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "common/error.h"
#include "common/json_check.h"

namespace ptxbench {
namespace {

// NOTES: DT_NEEDED must be exactly one of these sonames (optionally versioned). A name with a
// '/' would be loaded as a path, so a prefix match ("libc.so.6/../x.so") is not enough.
const std::regex kAllowedLibrary(
    R"((libcudart|libcuda|libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt)\.so(\.[0-9]+)*|ld-linux(-[a-z0-9_-]+)?\.so\.[0-9]+)");

constexpr const char* kNotAllowedReason =
    "a candidate may call only the C/C++ runtime and the CUDA runtime/driver functions of "
    "allowed_imports.json, summarised in ABI.md (\"What your library may import\")";
constexpr const char* kLibraryReason = "links a library other than the CUDA runtime/driver and the C/C++ runtime";

ImportGroup parse_group(const JsonChecker& check, const ordered_json& j, const std::string& path) {
  check.require_object(j, path);
  check.only_fields(j, path, {"group", "reason", "variants", "symbols", "patterns"});
  ImportGroup g;
  g.name = check.string_field(j, path, "group");
  g.reason = check.string_field(j, path, "reason");
  if (j.contains("variants")) g.variants = check.bool_field(j, path, "variants");
  for (auto& s : check.string_list(j, path, "symbols"))
    if (!g.symbols.insert(s).second) check.fail(JsonChecker::join(path, "symbols"), "'" + s + "' is listed twice");
  g.pattern_text = check.string_list(j, path, "patterns");
  for (const auto& p : g.pattern_text) {
    try {
      g.patterns.emplace_back(p, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      check.fail(JsonChecker::join(path, "patterns"), "'" + p + "' is not a regular expression: " + e.what());
    }
  }
  if (g.symbols.empty() && g.patterns.empty()) check.fail(path, "lists no symbols and no patterns");
  return g;
}

std::vector<ImportGroup> parse_groups(const JsonChecker& check, const ordered_json& doc, const char* key,
                                      std::vector<std::string>& names) {
  const ordered_json& list = check.member(doc, "", key);
  if (!list.is_array()) check.fail(key, "must be an array of groups");
  std::vector<ImportGroup> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string path = std::string(key) + "[" + std::to_string(i) + "]";
    out.push_back(parse_group(check, list[i], path));
    if (std::find(names.begin(), names.end(), out.back().name) != names.end())
      check.fail(path + ".group", "'" + out.back().name + "' names two groups");
    names.push_back(out.back().name);
  }
  return out;
}

std::string demangle(const std::string& symbol) {
  if (symbol.rfind("_Z", 0) != 0) return {};
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : std::string();
}

}  // namespace

ImportAllowlist ImportAllowlist::parse(const std::string& text, const std::string& document) {
  JsonChecker check(document);
  ordered_json doc = check.parse(text);
  check.require_object(doc, "");
  check.only_fields(doc, "", {"schema", "schema_version", "description", "variant_suffix", "allowed", "denied"});
  if (check.string_field(doc, "", "schema") != "ptxbench.allowed_imports")
    check.fail("schema", "expected \"ptxbench.allowed_imports\"");
  if (check.int_field(doc, "", "schema_version") != 1) check.fail("schema_version", "only version 1 is known");
  ImportAllowlist list;
  std::string suffix = check.string_field(doc, "", "variant_suffix");
  try {
    list.m_variant_suffix = std::regex(suffix, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    check.fail("variant_suffix", std::string("not a regular expression: ") + e.what());
  }
  std::vector<std::string> names;
  list.m_allowed = parse_groups(check, doc, "allowed", names);
  list.m_denied = parse_groups(check, doc, "denied", names);
  return list;
}

ImportAllowlist ImportAllowlist::load(const fs::path& file) { return parse(read_file(file), file.string()); }

const ImportAllowlist& ImportAllowlist::shared(const fs::path& file) {
  static std::mutex mutex;
  static std::map<fs::path, std::unique_ptr<ImportAllowlist>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[file];
  if (!slot) slot = std::make_unique<ImportAllowlist>(load(file));
  return *slot;
}

bool ImportAllowlist::matches(const ImportGroup& group, const std::string& symbol) const {
  if (group.symbols.count(symbol)) return true;
  if (group.variants) {
    // A variant is an exact name followed by a suffix that starts with '_' (_v2, _ptsz, _v2_ptds).
    for (std::size_t cut = symbol.find('_', 1); cut != std::string::npos; cut = symbol.find('_', cut + 1))
      if (group.symbols.count(symbol.substr(0, cut)) && std::regex_match(symbol.substr(cut), m_variant_suffix))
        return true;
  }
  for (const auto& re : group.patterns)
    if (std::regex_match(symbol, re)) return true;
  return false;
}

ImportVerdict ImportAllowlist::classify(const std::string& symbol) const {
  for (const auto& g : m_denied)
    if (matches(g, symbol)) return {false, &g};
  for (const auto& g : m_allowed)
    if (matches(g, symbol)) return {true, &g};
  return {false, nullptr};
}

fs::path default_import_allowlist_path() { return data_root() / "knowledge" / "abi" / "allowed_imports.json"; }

BinaryCheckResult check_candidate_library(const ElfInfo& lib, const ImportAllowlist& allowlist) {
  BinaryCheckResult r;
  bool exported = false, mangled = false;
  for (const auto& s : lib.dynamic_symbols) {
    if (s.name == "ptxb_run" && s.defined && s.is_function() && s.binding != 0) exported = true;
    if (s.name.rfind("_Z8ptxb_run", 0) == 0 && s.defined) mangled = true;
  }
  if (!exported) {
    r.abi_error = mangled ? "ptxb_run is exported with C++ linkage (a mangled name); declare it with "
                            "PTXB_EXPORT from ptxbench_abi.h so it has C linkage"
                          : "the library does not export ptxb_run; declare `PTXB_EXPORT int "
                            "ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream)`, or export "
                            "your function with TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, ...) from <tvm/ffi/tvm_ffi.h> "
                            "(ABI.md)";
  }

  // Findings are grouped by rule in the list's order (denied groups, then unlisted symbols) so the
  // message reads one line per reason.
  std::map<std::size_t, std::vector<std::string>> by_rule;
  const std::size_t unlisted = allowlist.denied_groups().size();
  for (const auto& s : lib.dynamic_symbols) {
    if (s.defined || s.name.empty()) continue;
    ImportVerdict v = allowlist.classify(s.name);
    if (v.allowed) continue;
    std::size_t index = v.group ? static_cast<std::size_t>(v.group - allowlist.denied_groups().data()) : unlisted;
    by_rule[index].push_back(s.name);
  }
  for (auto& [index, symbols] : by_rule) {
    std::sort(symbols.begin(), symbols.end());
    symbols.erase(std::unique(symbols.begin(), symbols.end()), symbols.end());
    for (const auto& name : symbols) {
      if (index == unlisted) r.banned.push_back({kNotAllowedRule, kNotAllowedReason, name, demangle(name)});
      else {
        const ImportGroup& g = allowlist.denied_groups()[index];
        r.banned.push_back({g.name, g.reason, name, demangle(name)});
      }
    }
  }
  for (const auto& lib_name : lib.needed)
    if (!std::regex_match(lib_name, kAllowedLibrary)) r.banned.push_back({kLibraryRule, kLibraryReason, lib_name, ""});
  return r;
}

std::string describe_banned(const std::vector<BinaryFinding>& banned) {
  constexpr std::size_t kShownPerRule = 8;
  constexpr std::size_t kNameWidth = 160;  // demangled stream internals run to hundreds of characters
  std::string out = "The built library imports symbols a candidate may not use:";
  for (std::size_t i = 0; i < banned.size();) {
    std::size_t end = i;
    while (end < banned.size() && banned[end].rule == banned[i].rule) ++end;
    std::string names;
    for (std::size_t k = i; k < end && k - i < kShownPerRule; ++k) {
      std::string name = banned[k].demangled.empty() ? banned[k].symbol : banned[k].demangled;
      if (name.size() > kNameWidth) name = name.substr(0, kNameWidth - 3) + "...";
      names += (k == i ? "" : ", ") + name;
    }
    if (end - i > kShownPerRule) names += ", and " + std::to_string(end - i - kShownPerRule) + " more";
    std::string label = banned[i].rule == kNotAllowedRule ? "not on the allowlist" : banned[i].rule;
    out += "\n  " + label + ": " + names + "\n    " + banned[i].reason;
    i = end;
  }
  return out;
}

}  // namespace ptxbench

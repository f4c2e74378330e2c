// Strict reading of JSON documents from users and models: every error names the document and the
// field path ("definitions/gemm.json: inputs.A.shape[1]: unknown axis 'Q'").
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/error.h"

namespace ptxbench {

using ordered_json = nlohmann::ordered_json;

class JsonChecker {
 public:
  /// `document` names the source in messages (a file path, "request body", ...).
  explicit JsonChecker(std::string document) : m_document(std::move(document)) {}

  /// Parses text; a syntax error becomes an InputError with the document name and byte offset.
  [[nodiscard]] ordered_json parse(const std::string& text) const;

  [[noreturn]] void fail(const std::string& path, const std::string& message) const;

  void require_object(const ordered_json& j, const std::string& path) const;
  /// Fails on any member not in `allowed`.
  void only_fields(const ordered_json& j, const std::string& path,
                   std::initializer_list<const char*> allowed) const;
  [[nodiscard]] const ordered_json& member(const ordered_json& j, const std::string& path,
                                           const char* key) const;
  [[nodiscard]] std::string string_field(const ordered_json& j, const std::string& path,
                                         const char* key) const;
  [[nodiscard]] std::string optional_string(const ordered_json& j, const std::string& path,
                                            const char* key, const std::string& fallback) const;
  [[nodiscard]] int64_t int_field(const ordered_json& j, const std::string& path,
                                  const char* key) const;
  /// An integer in [lo, hi].
  [[nodiscard]] int64_t int_in(const ordered_json& j, const std::string& path, const char* key, int64_t lo,
                               int64_t hi) const;
  /// A finite number in [lo, hi] (lo itself excluded when `lo_open`); hi may be infinite.
  [[nodiscard]] double number_in(const ordered_json& j, const std::string& path, const char* key, double lo,
                                 double hi = std::numeric_limits<double>::infinity(), bool lo_open = false) const;
  /// Any finite number.
  [[nodiscard]] double number_field(const ordered_json& j, const std::string& path, const char* key) const {
    return number_in(j, path, key, -std::numeric_limits<double>::infinity());
  }
  [[nodiscard]] bool bool_field(const ordered_json& j, const std::string& path, const char* key) const;
  /// A list of non-empty strings; an absent key is an empty list.
  [[nodiscard]] std::vector<std::string> string_list(const ordered_json& j, const std::string& path,
                                                     const char* key) const;
  /// A string read by `parse` (an enum's parse function, which throws InputError for a bad name);
  /// its complaint is reported at the field's path.
  template <class Parse>
  [[nodiscard]] auto enum_field(const ordered_json& j, const std::string& path, const char* key, Parse parse) const {
    std::string text = string_field(j, path, key);
    try {
      return parse(text);
    } catch (const InputError& e) {
      fail(join(path, key), message_of(e));
    }
  }

  [[nodiscard]] static std::string join(const std::string& path, const std::string& key);
  /// An error's message without its "library: " prefix.
  [[nodiscard]] static std::string message_of(const Error& e);
  [[nodiscard]] const std::string& document() const noexcept { return m_document; }

 private:
  std::string m_document;
};

/// Reads and parses a JSON file: a file that cannot be read or is not JSON is an InputError naming
/// it (never the parser's bare message, which names no file). Use it wherever a file is read.
[[nodiscard]] ordered_json read_json_file(const std::filesystem::path& path);

}  // namespace ptxbench

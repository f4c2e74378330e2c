// Strict reading of JSON documents from users and models: every error names the document and the
// field path ("definitions/gemm.json: inputs.A.shape[1]: unknown axis 'Q'").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

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

  [[nodiscard]] static std::string join(const std::string& path, const std::string& key);
  [[nodiscard]] const std::string& document() const noexcept { return m_document; }

 private:
  std::string m_document;
};

}  // namespace ptxbench

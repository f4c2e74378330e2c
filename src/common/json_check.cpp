#include "common/json_check.h"

#include "common/error.h"

namespace ptxbench {

ordered_json JsonChecker::parse(const std::string& text) const {
  try {
    return ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError("json", m_document + ": malformed JSON at byte " + std::to_string(e.byte) +
                                 ": " + e.what());
  }
}

void JsonChecker::fail(const std::string& path, const std::string& message) const {
  throw InputError("json", m_document + ": " + (path.empty() ? "(top level)" : path) + ": " + message);
}

void JsonChecker::require_object(const ordered_json& j, const std::string& path) const {
  if (!j.is_object()) fail(path, std::string("expected an object, got ") + j.type_name());
}

void JsonChecker::only_fields(const ordered_json& j, const std::string& path,
                              std::initializer_list<const char*> allowed) const {
  require_object(j, path);
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || it.key() == a;
    if (!ok) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(join(path, it.key()), "unknown field (allowed: " + list + ")");
    }
  }
}

const ordered_json& JsonChecker::member(const ordered_json& j, const std::string& path,
                                        const char* key) const {
  require_object(j, path);
  auto it = j.find(key);
  if (it == j.end()) fail(join(path, key), "missing required field");
  return *it;
}

std::string JsonChecker::string_field(const ordered_json& j, const std::string& path,
                                      const char* key) const {
  const auto& v = member(j, path, key);
  if (!v.is_string()) fail(join(path, key), std::string("expected a string, got ") + v.type_name());
  return v.get<std::string>();
}

std::string JsonChecker::optional_string(const ordered_json& j, const std::string& path,
                                         const char* key, const std::string& fallback) const {
  if (!j.contains(key)) return fallback;
  return string_field(j, path, key);
}

int64_t JsonChecker::int_field(const ordered_json& j, const std::string& path,
                               const char* key) const {
  const auto& v = member(j, path, key);
  if (!v.is_number_integer()) fail(join(path, key), std::string("expected an integer, got ") + v.dump());
  return v.get<int64_t>();
}

std::string JsonChecker::join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

}  // namespace ptxbench

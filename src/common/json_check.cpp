#include "common/json_check.h"

#include <fmt/format.h>

#include <cmath>

#include "common/fs.h"

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

int64_t JsonChecker::int_in(const ordered_json& j, const std::string& path, const char* key, int64_t lo,
                            int64_t hi) const {
  int64_t x = int_field(j, path, key);
  if (x < lo || x > hi)
    fail(join(path, key), "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(x));
  return x;
}

double JsonChecker::number_in(const ordered_json& j, const std::string& path, const char* key, double lo, double hi,
                              bool lo_open) const {
  const auto& v = member(j, path, key);
  if (!v.is_number()) fail(join(path, key), "expected a number, got " + v.dump());
  double x = v.get<double>();
  if (std::isfinite(x) && x <= hi && (lo_open ? x > lo : x >= lo)) return x;
  std::string range = std::isinf(hi) ? (lo_open ? fmt::format("greater than {}", lo) : fmt::format("at least {}", lo))
                                     : fmt::format("in {}{}, {}]", lo_open ? "(" : "[", lo, hi);
  fail(join(path, key), "must be " + range + ", got " + v.dump());
}

bool JsonChecker::bool_field(const ordered_json& j, const std::string& path, const char* key) const {
  const auto& v = member(j, path, key);
  if (!v.is_boolean()) fail(join(path, key), "expected true or false, got " + v.dump());
  return v.get<bool>();
}

std::vector<std::string> JsonChecker::string_list(const ordered_json& j, const std::string& path, const char* key) const {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  const auto& list = j[key];
  if (!list.is_array()) fail(join(path, key), "expected a list of strings");
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string() || list[i].get<std::string>().empty())
      fail(join(path, key) + "[" + std::to_string(i) + "]", "expected a non-empty string");
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

std::string JsonChecker::message_of(const Error& e) {
  std::string what = e.what();
  return what.rfind(e.library() + ": ", 0) == 0 ? what.substr(e.library().size() + 2) : what;
}

ordered_json read_json_file(const std::filesystem::path& path) {
  return JsonChecker(path.string()).parse(read_file(path));
}

std::string JsonChecker::join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

}  // namespace ptxbench

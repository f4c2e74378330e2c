// The fields of typed documents (verdict sections): a struct's to_json/from_json pair names each key
// once through these calls. Reading is lenient about absence (an absent or null key leaves the
// field's default: older documents lack newer keys) and strict about types: a wrong type is a
// JsonFieldError that names the field's path ("stages.timing.candidate.mean_us: ...").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json_check.h"

namespace ptxbench {

class JsonFieldError : public InputError {
 public:
  JsonFieldError(std::string path, std::string reason)
      : InputError("json", (path.empty() ? "(top level)" : path) + ": " + reason), m_path(std::move(path)),
        m_reason(std::move(reason)) {}
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }
  [[nodiscard]] const std::string& reason() const noexcept { return m_reason; }

 private:
  std::string m_path, m_reason;
};

/// Throws JsonFieldError unless `j` is an object (the start of every from_json of a section).
void require_json_object(const ordered_json& j);

namespace detail {
/// Inside a catch block: rethrows the exception in flight as a JsonFieldError whose path starts at `key`.
[[noreturn]] void rethrow_in_field(const std::string& key);

/// `value` as a T; an error's path starts at `key`.
template <class T>
T get_in_field(const ordered_json& value, const std::string& key) {
  try {
    return value.template get<T>();
  } catch (...) {
    rethrow_in_field(key);
  }
}
}  // namespace detail

/// Reads j[key] into `out` when present and not null; otherwise `out` keeps its value.
template <class T>
void read_field(const ordered_json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) out = detail::get_in_field<T>(*it, key);
}

/// Reads j[key] into `out`; absent or null is nullopt.
template <class T>
void read_field(const ordered_json& j, const char* key, std::optional<T>& out) {
  out.reset();
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) out = detail::get_in_field<T>(*it, key);
}

/// Reads a list, naming the failing element's index in the error path.
template <class T>
void read_field(const ordered_json& j, const char* key, std::vector<T>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_array()) throw JsonFieldError(key, std::string("expected a list, got ") + it->type_name());
  std::vector<T> items;
  items.reserve(it->size());
  for (std::size_t i = 0; i < it->size(); ++i)
    items.push_back(detail::get_in_field<T>((*it)[i], std::string(key) + "[" + std::to_string(i) + "]"));
  out = std::move(items);
}

/// Reads an optional list, naming the failing element's index in the error path.
template <class T>
void read_field(const ordered_json& j, const char* key, std::optional<std::vector<T>>& out) {
  out.reset();
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  std::vector<T> items;
  read_field(j, key, items);
  out = std::move(items);
}

/// Reads a string field through `parse` (an enum's parse function, which throws for a bad name);
/// absent or null leaves `out`.
template <class E, class Parse>
void read_enum(const ordered_json& j, const char* key, E& out, Parse parse) {
  std::optional<std::string> text;
  read_field(j, key, text);
  if (!text) return;
  try {
    out = parse(*text);
  } catch (...) {
    detail::rethrow_in_field(key);
  }
}

/// Writes `value` under `key` only when set.
template <class T>
void write_optional(ordered_json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

/// The value, or null (keys that are always present).
template <class T>
ordered_json value_or_null(const std::optional<T>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

}  // namespace ptxbench

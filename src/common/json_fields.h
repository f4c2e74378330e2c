// The fields of typed documents (verdict sections): a struct names each key once, in
// `void json_fields(JsonIo& io, T& x)`, and that one list serves both to_json and from_json (below).
// Reading is lenient about absence (an absent or null key leaves the field's default: older
// documents lack newer keys) and strict about types: a wrong type is a JsonFieldError that names
// the field's path ("stages.timing.candidate.mean_us: ...").
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
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

/// Checks a document's "schema" (when present) and "schema_version" (1 when absent) against what
/// this build reads; `what` names the kind of document in the error ("a verdict").
void check_schema(const ordered_json& j, const char* schema, int max_version, const char* what);

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

/// Reads j[key] through `convert` (a function of the JSON value) when present and not null;
/// otherwise `out` keeps its value. An error's path starts at `key`.
template <class T, class Convert>
void read_with(const ordered_json& j, const char* key, T& out, Convert convert) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = convert(*it);
  } catch (...) {
    detail::rethrow_in_field(key);
  }
}

/// Reads a string field through `parse` (an enum's parse function, which throws for a bad name);
/// absent or null leaves `out`.
template <class E, class Parse>
void read_enum(const ordered_json& j, const char* key, E& out, Parse parse) {
  read_with(j, key, out, [&](const ordered_json& name) { return parse(name.get<std::string>()); });
}

/// Reads the object j[key], when the key is present, with `read(object)`; an error's path starts at `key`.
template <class Read>
void read_object(const ordered_json& j, const char* key, Read read) {
  auto it = j.find(key);
  if (it == j.end()) return;
  try {
    require_json_object(*it);
    read(*it);
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

/// One pass over a struct's fields, in one direction: writing a document from the struct, or
/// reading one into it. A struct's `json_fields(JsonIo&, T&)` calls it once per key, in the order
/// the keys are written; writing only reads the struct.
class JsonIo {
 public:
  /// Writes into `out`, which becomes an object.
  static JsonIo writer(ordered_json& out) {
    out = ordered_json::object();
    return JsonIo(&out, nullptr);
  }
  /// Reads from `in`, which must be an object (JsonFieldError otherwise).
  static JsonIo reader(const ordered_json& in) {
    require_json_object(in);
    return JsonIo(nullptr, &in);
  }

  [[nodiscard]] bool writing() const noexcept { return m_out != nullptr; }
  [[nodiscard]] bool reading() const noexcept { return m_in != nullptr; }
  /// Reading: whether the document has `key` (null included); writing: false.
  [[nodiscard]] bool has(const char* key) const { return m_in && m_in->contains(key); }

  /// A field, written as it is; read with read_field (absent or null leaves it).
  template <class T>
  void operator()(const char* key, T& value) {
    if (writing()) (*m_out)[key] = value;
    else read(key, value);
  }
  /// An optional field: written only when set; absent or null reads as unset.
  template <class T>
  void operator()(const char* key, std::optional<T>& value) {
    if (writing()) write_optional(*m_out, key, value);
    else read(key, value);
  }
  /// A shared part: written only when set; absent or null reads as unset.
  template <class T>
  void operator()(const char* key, std::shared_ptr<const T>& value) {
    if (writing()) {
      if (value) (*m_out)[key] = *value;
      return;
    }
    std::optional<T> part;
    read(key, part);
    value = part ? std::make_shared<const T>(std::move(*part)) : nullptr;
  }

  /// A field written only when `written` holds (an empty or default value the document leaves out);
  /// read whenever present.
  template <class T>
  void when(bool written, const char* key, T& value) {
    if (reading() || written) (*this)(key, value);
  }
  /// An optional field that is always written, null when unset.
  template <class T>
  void nullable(const char* key, std::optional<T>& value) {
    if (writing()) (*m_out)[key] = value_or_null(value);
    else read(key, value);
  }

  /// An enum, written as its to_string name and read through `parse` (which refuses a bad name).
  template <class E, class Parse>
  void name(const char* key, E& value, Parse parse) {
    if (writing()) {
      (*m_out)[key] = to_string(value);
      return;
    }
    seen(key);
    read_enum(*m_in, key, value, parse);
  }
  /// An optional enum: written only when set; absent or null reads as unset.
  template <class E, class Parse>
  void name(const char* key, std::optional<E>& value, Parse parse) {
    if (writing()) {
      if (value) (*m_out)[key] = to_string(*value);
      return;
    }
    value.reset();
    seen(key);
    read_enum(*m_in, key, value, parse);
  }

  /// A field of a type with conversions of its own: written as to(value), read as from(json) when
  /// present and not null.
  template <class T, class To, class From>
  void convert(const char* key, T& value, To to, From from) {
    if (writing()) {
      (*m_out)[key] = to(value);
      return;
    }
    seen(key);
    read_with(*m_in, key, value, from);
  }

  /// A part whose keys sit among this document's own (no key of its own): written when set; read
  /// when the document has any of its keys (null included), unset otherwise.
  template <class T>
  void inline_part(std::optional<T>& part) {
    if (writing()) {
      if (part) json_fields(*this, *part);
      return;
    }
    JsonIo probe(nullptr, m_in);
    json_fields(probe, part.emplace());
    if (probe.m_keys_seen == 0) part.reset();
  }

 private:
  JsonIo(ordered_json* out, const ordered_json* in) : m_out(out), m_in(in) {}

  // Reading: counts `key` when the document has it (inline_part asks whether any was there).
  void seen(const char* key) { m_keys_seen += m_in->contains(key) ? 1 : 0; }

  template <class T>
  void read(const char* key, T& value) {
    seen(key);
    read_field(*m_in, key, value);
  }

  ordered_json* m_out;
  const ordered_json* m_in;
  int m_keys_seen = 0;
};

namespace detail {
/// Whether T's fields are listed once, by a `void json_fields(JsonIo&, T&)` beside it. (A trait, not
/// a concept: CUDA sources include this header as C++17.)
template <class T, class = void>
struct has_json_fields : std::false_type {};
template <class T>
struct has_json_fields<T, std::void_t<decltype(json_fields(std::declval<JsonIo&>(), std::declval<T&>()))>>
    : std::true_type {};
}  // namespace detail

/// Writes `x` through a field list: `fields(JsonIo&, T&)`, as json_fields.
template <class T, class Fields>
void write_fields(ordered_json& j, const T& x, Fields fields) {
  JsonIo io = JsonIo::writer(j);
  fields(io, const_cast<T&>(x));  // writing only reads x
}

/// Reads `x` through a field list; JsonFieldError unless `j` is an object.
template <class T, class Fields>
void read_fields(const ordered_json& j, T& x, Fields fields) {
  JsonIo io = JsonIo::reader(j);
  fields(io, x);
}

// The conversions of every type with a field list, found by nlohmann::json like any to_json/from_json
// (by argument-dependent lookup: a type in another namespace brings them in with `using ptxbench::to_json;`
// and `using ptxbench::from_json;` beside its json_fields).
template <class T, std::enable_if_t<detail::has_json_fields<T>::value, int> = 0>
void to_json(ordered_json& j, const T& x) {
  write_fields(j, x, [](JsonIo& io, T& y) { json_fields(io, y); });
}

template <class T, std::enable_if_t<detail::has_json_fields<T>::value, int> = 0>
void from_json(const ordered_json& j, T& x) {
  read_fields(j, x, [](JsonIo& io, T& y) { json_fields(io, y); });
}

}  // namespace ptxbench

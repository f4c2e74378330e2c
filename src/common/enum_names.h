// One table of names per enum, read by both directions: to_string and parse cannot disagree, and a
// bad name is refused with the list of the good ones ("unknown SASS tool 'nvprof' (expected ncu or
// cupti)").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

namespace detail {
[[noreturn]] void throw_unknown_name(const char* what, std::string_view text, const std::vector<const char*>& names,
                                     const char* library = nullptr);
}  // namespace detail

/// The name of `value` in `table` ("?" for a value the table lacks: a programming error), as a
/// view of the table's own text.
template <class E, std::size_t N>
constexpr std::string_view enum_name_view(const EnumName<E> (&table)[N], E value) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return "?";
}

/// The name of `value` in `table` ("?" for a value the table lacks: a programming error).
template <class E, std::size_t N>
std::string enum_name(const EnumName<E> (&table)[N], E value) {
  return std::string(enum_name_view(table, value));
}

/// The value named `text`, or nullopt.
template <class E, std::size_t N>
std::optional<E> find_enum(const EnumName<E> (&table)[N], std::string_view text) {
  for (const auto& e : table)
    if (text == e.name) return e.value;
  return std::nullopt;
}

/// The value named `text`; InputError naming `what` and every allowed name otherwise, from
/// `library` (the component reading the name; `what` when unset).
template <class E, std::size_t N>
E parse_enum(const EnumName<E> (&table)[N], std::string_view text, const char* what, const char* library = nullptr) {
  if (auto v = find_enum(table, text)) return *v;
  std::vector<const char*> names;
  for (const auto& e : table) names.push_back(e.name);
  detail::throw_unknown_name(what, text, names, library);
}

}  // namespace ptxbench

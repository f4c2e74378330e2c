// Small text helpers shared across layers: ASCII lower case, and cutting long text with a marker.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench {

/// ASCII lower case (header names, hosts, fence languages); other bytes are kept.
std::string lower(std::string s);

/// The first `n` characters of `s`, then `marker` when anything was cut (nothing is added to a
/// text that fits). A "{}" in the marker becomes the number of characters cut.
std::string cut(const std::string& s, std::size_t n, std::string_view marker = "\n[...]");

}  // namespace ptxbench

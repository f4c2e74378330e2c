#include "common/text.h"

#include <algorithm>
#include <cctype>

namespace ptxbench {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string cut(const std::string& s, std::size_t n, std::string_view marker) {
  if (s.size() <= n) return s;
  std::string m(marker);
  if (auto pos = m.find("{}"); pos != std::string::npos) m.replace(pos, 2, std::to_string(s.size() - n));
  return s.substr(0, n) + m;
}

}  // namespace ptxbench

#include "prompt/token_estimate.h"

#include <cctype>

namespace ptxbench {

std::size_t estimate_tokens(std::string_view text) {
  std::size_t tokens = 0, i = 0, n = text.size();
  auto is = [&](std::size_t k, int (*pred)(int)) { return k < n && pred(static_cast<unsigned char>(text[k])); };
  while (i < n) {
    std::size_t start = i;
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (std::isalpha(c) || c >= 0x80) {
      while (i < n && (is(i, isalpha) || static_cast<unsigned char>(text[i]) >= 0x80)) ++i;
      tokens += 1 + (i - start - 1) / 6;
    } else if (std::isdigit(c)) {
      while (is(i, isdigit)) ++i;
      tokens += (i - start + 2) / 3;
    } else if (std::isspace(c)) {
      bool newline = false;
      for (; is(i, isspace); ++i)
        if (text[i] == '\n') newline = true;
      std::size_t run = i - start;
      if (newline) tokens += 1;
      else if (run >= 4) tokens += run / 4;
    } else {
      ++i;
      ++tokens;
    }
  }
  return tokens;
}

}  // namespace ptxbench

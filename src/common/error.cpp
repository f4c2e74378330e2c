#include "common/error.h"

#include <string>

namespace ptxbench::detail {

std::string where(const char* file, int line) {
  std::string f(file);
  auto pos = f.rfind("/src/");
  if (pos != std::string::npos) f = f.substr(pos + 1);
  return f + ":" + std::to_string(line);
}

void throw_call_error(const char* library, long code, const char* code_text, const char* call,
                      const char* file, int line) {
  throw LibraryCallError(library, code,
                         where(file, line) + ": " + call + " failed: " + code_text + " (" +
                             std::to_string(code) + ")");
}

}  // namespace ptxbench::detail

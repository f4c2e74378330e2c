#include "common/enum_names.h"

#include "common/error.h"

namespace ptxbench::detail {

void throw_unknown_name(const char* what, std::string_view text, const std::vector<const char*>& names,
                        const char* library) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += std::string(i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ")) + names[i];
  throw InputError(library ? library : what,
                   "unknown " + std::string(what) + " '" + std::string(text) + "' (expected " + list + ")");
}

}  // namespace ptxbench::detail

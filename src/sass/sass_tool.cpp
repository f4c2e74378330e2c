#include "sass/sass_tool.h"

#include "common/enum_names.h"

namespace ptxbench {
namespace {
constexpr EnumName<SassTool> kNames[] = {{SassTool::ncu, "ncu"}, {SassTool::cupti, "cupti"}};
}  // namespace

std::string to_string(SassTool t) { return enum_name(kNames, t); }
SassTool parse_sass_tool(std::string_view text) { return parse_enum(kNames, text, "SASS tool"); }

}  // namespace ptxbench

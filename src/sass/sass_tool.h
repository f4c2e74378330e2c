// The tools that count a candidate's executed SASS at run time (docs/verdict.md, "Runtime SASS tools").
#pragma once

#include <string>
#include <string_view>

namespace ptxbench {

enum class SassTool {
  ncu,    ///< Nsight Compute on one call (the default)
  cupti,  ///< CUPTI SASS metrics inside the runner (experimental: sass/pc_counts.h)
};

std::string to_string(SassTool t);
/// "ncu" or "cupti"; InputError naming both otherwise.
SassTool parse_sass_tool(std::string_view text);

}  // namespace ptxbench

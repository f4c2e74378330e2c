// Static source checks run before nvcc: banned libraries and escape hatches, on the source with
// comments stripped (string literals are kept: dlopen("libcublas.so") must be caught).
#pragma once

#include <string>
#include <vector>

namespace ptxbench {

struct SourceFinding {
  std::string rule;     ///< short id: "cublas", "dynamic-loading", ...
  std::string reason;   ///< what the model is told
  int line = 0;         ///< 1-based
  std::string excerpt;  ///< the matching text
};

/// Replaces // and /* */ comments by spaces, keeping line breaks, strings and character literals.
std::string strip_comments(const std::string& source);

/// Every banned use in the source (comments ignored). Empty means the source passed.
std::vector<SourceFinding> scan_source(const std::string& source);

}  // namespace ptxbench

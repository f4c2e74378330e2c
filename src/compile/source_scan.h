// Static source checks run before nvcc: banned libraries, escape hatches out of the sandbox, and
// preprocessor tricks that read host files. They run on the source as the compiler reads it
// (backslash-newlines spliced, comments stripped; string literals kept: dlopen("libcublas.so")
// must be caught). This is the early, precise message; the import allowlist on the built library
// (binary_check) and the runner's sandbox are the real defences.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ptxbench {

struct SourceFinding {
  std::string rule;     ///< short id: "cublas", "dynamic-loading", ...
  std::string reason;   ///< what the model is told
  int line = 0;         ///< 1-based line of the original source
  std::string excerpt;  ///< the matching text
};

/// Replaces // and /* */ comments by spaces, keeping line breaks, strings, character literals and
/// raw strings (R"d(...)d"); a ' inside a number (1'000) is a digit separator, not a literal.
std::string strip_comments(const std::string& source);

/// The most findings scan_source reports: enough to fix a file, few enough for a feedback message.
inline constexpr std::size_t kMaxSourceFindings = 100;

/// The banned uses in the source (comments ignored), in line order, at most kMaxSourceFindings.
/// Empty means the source passed.
std::vector<SourceFinding> scan_source(const std::string& source);

}  // namespace ptxbench

#include "compile/source_scan.h"

#include <regex>

namespace ptxbench {
namespace {

struct Rule {
  const char* id;
  const char* pattern;
  const char* reason;
};

// NOTES: the symbol check on the built library (binary_check) backs these up for names built by
// macros; this scan exists to give the model a precise line and reason.
const Rule kRules[] = {
    {"cublas", R"(cublas\w*)", "cuBLAS/cuBLASLt are banned: the kernel must be your own code"},
    {"cudnn", R"(cudnn\w*)", "cuDNN is banned: the kernel must be your own code"},
    {"cutlass", R"(\bcutlass\b|cutlass/)", "CUTLASS is banned as a library: write the PTX yourself"},
    {"cute", R"(\bcute\s*::|[<"]cute/)", "CuTe is banned as a library: write the PTX yourself"},
    {"vendor-library", R"(\bcusparse\w*|\bcufft\w*|\bcusolver\w*|\bnccl\w*)",
     "vendor math libraries are banned"},
    {"framework", R"(\btorch\b|\bATen/|\bc10::|\bat::)", "framework calls are banned"},
    {"dynamic-loading", R"(\bdl(open|sym|mopen|vsym)\b)",
     "loading code at run time is banned (it would bypass the library checks)"},
    {"process-creation", R"(\b(fork|vfork|popen|system|posix_spawnp?|exec[lv]p?e?)\s*\()",
     "creating processes is not allowed in a candidate"},
    {"file-io", R"(\b(fopen|freopen|fdopen|creat|open|openat|ofstream|fstream)\s*[\(<]|\bstd::(of|f)stream\b)",
     "file access is not allowed in a candidate (print to stdout instead)"},
    {"include-path", R"(#\s*include\s*[<"](/|[^>"]*\.\./))",
     "#include of absolute or parent-relative paths is not allowed: the candidate is one file"},
};

}  // namespace

std::string strip_comments(const std::string& s) {
  std::string out = s;
  enum { code, line_comment, block_comment, str, chr } state = code;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    char next = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (state) {
      case code:
        if (c == '/' && next == '/') {
          state = line_comment;
          out[i] = out[i + 1] = ' ';
          ++i;
        } else if (c == '/' && next == '*') {
          state = block_comment;
          out[i] = out[i + 1] = ' ';
          ++i;
        } else if (c == '"') {
          state = str;
        } else if (c == '\'') {
          state = chr;
        }
        break;
      case line_comment:
        if (c == '\n') state = code;
        else out[i] = ' ';
        break;
      case block_comment:
        if (c == '*' && next == '/') {
          out[i] = out[i + 1] = ' ';
          ++i;
          state = code;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
      case str:
      case chr:
        if (c == '\\') ++i;
        else if ((state == str && c == '"') || (state == chr && c == '\'') || c == '\n') state = code;
        break;
    }
  }
  return out;
}

std::vector<SourceFinding> scan_source(const std::string& source) {
  std::string text = strip_comments(source);
  std::vector<SourceFinding> found;
  for (const auto& rule : kRules) {
    std::regex re(rule.pattern, std::regex::icase | std::regex::ECMAScript);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
      auto pos = static_cast<std::size_t>(it->position());
      int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + pos, '\n'));
      found.push_back({rule.id, rule.reason, line, it->str()});
    }
  }
  std::sort(found.begin(), found.end(),
            [](const SourceFinding& a, const SourceFinding& b) { return a.line < b.line; });
  return found;
}

}  // namespace ptxbench

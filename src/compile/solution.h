// A FlashInfer-Bench Solution (the FlashInfer-Trace schema's kernel record: `name`, `definition`,
// `spec` {language, entry_point, binding, ...}, `sources` [{path, content}]) accepted wherever a
// candidate file is: `ptxbench eval`/`compile`, suites, the service's requests, the MCP tools.
// A Solution becomes the one source file ptxbench compiles (docs/verdict.md, "Bindings"):
//   CUDA: the translation units (.cu/.cpp/.cc/.cxx) are joined into one, the entry point's file
//         last; a quoted #include that names another source is replaced by that source's text
//         (once: a later include of it is dropped, like #pragma once); other includes stay.
//   Triton: the one Python file, whose `run` is the entry point.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/fs.h"
#include "common/json_check.h"
#include "compile/triton_check.h"

namespace ptxbench {

struct SolutionSource {
  std::string path;  ///< relative, normalized ("src/kernel.cu")
  std::string content;
};

struct Solution {
  std::string name;
  std::string definition;
  std::string description;
  std::string author;
  std::string language;  ///< spec.language: "cuda" or "triton" (python and cpp are refused)
  std::vector<std::string> target_hardware;
  std::vector<std::string> dependencies;
  std::string entry_file;      ///< spec.entry_point before "::"
  std::string entry_function;  ///< after "::"
  /// spec.binding for CUDA: "tvm-ffi" (the default, TVM_FFI_DLL_EXPORT_TYPED_FUNC) or "ptxb" (the
  /// file defines ptxb_run itself; entry function ptxb_run). "torch" is refused.
  std::string binding = "tvm-ffi";
  std::vector<SolutionSource> sources;
};

/// Reads a Solution; InputError naming `document` and the field (unknown fields, a missing
/// required field, an entry point that names no source, a refused language or binding, ...).
Solution solution_from_json(const ordered_json& j, const std::string& document);
Solution parse_solution(const std::string& text, const std::string& document);
ordered_json to_json(const Solution& s);

/// The one file ptxbench compiles, made from a Solution.
struct SolutionCandidate {
  std::string source;
  CandidateLanguage language = CandidateLanguage::cuda;
};

/// Joins the sources (see the file comment). InputError naming `document` and the field when the
/// entry point's function is not what the sources export.
SolutionCandidate materialize_solution(const Solution& s, const std::string& document);

/// A candidate as given on the command line or in a suite: a .cu (CUDA), a .py (Triton) or a
/// Solution .json, read into the file ptxbench compiles.
struct CandidateFile {
  std::string source;
  CandidateLanguage language = CandidateLanguage::cuda;
  std::optional<Solution> solution;  ///< set for a Solution file
};

/// Throws InputError for an unreadable or malformed Solution.
CandidateFile read_candidate_file(const fs::path& file);

/// InputError unless the Solution's definition is `definition` (naming `document`).
void require_solution_definition(const Solution& s, const std::string& definition, const std::string& document);

}  // namespace ptxbench

#include "compile/solution.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "common/error.h"
#include "compile/candidate_binding.h"
#include "compile/source_scan.h"

namespace ptxbench {
namespace {

bool has_extension(const std::string& path, std::initializer_list<const char*> extensions) {
  const std::string ext = fs::path(path).extension().string();
  return std::any_of(extensions.begin(), extensions.end(), [&](const char* e) { return ext == e; });
}

bool is_translation_unit(const std::string& path) { return has_extension(path, {".cu", ".cpp", ".cc", ".cxx"}); }

// A source path as the solution's folder would hold it: relative, inside it, '/'-separated.
std::string normalized_path(const JsonChecker& check, const std::string& field, const std::string& path) {
  if (path.empty()) check.fail(field, "an empty path");
  if (fs::path(path).is_absolute()) check.fail(field, "'" + path + "' must be relative to the solution's folder");
  std::string n = fs::path(path).lexically_normal().generic_string();
  if (n == ".." || n.rfind("../", 0) == 0) check.fail(field, "'" + path + "' leaves the solution's folder");
  if (n.empty() || n == "." || n.back() == '/') check.fail(field, "'" + path + "' names a folder, not a file");
  return n;
}

// The joined translation unit of a CUDA solution.
class Joiner {
 public:
  explicit Joiner(const Solution& s) : m_solution(s) {
    for (const auto& src : s.sources) m_by_path[src.path] = &src;
  }

  std::string join() {
    std::string out;
    // The other translation units first, in the listed order; the entry point's file last, so that
    // what it defines after them (its exported function) sees their declarations.
    for (const auto& src : m_solution.sources)
      if (src.path != m_solution.entry_file && is_translation_unit(src.path) && !m_included.count(src.path))
        out += expand(src);
    out += expand(*m_by_path.at(m_solution.entry_file));
    return out;
  }

 private:
  std::string expand(const SolutionSource& src) {
    m_included.insert(src.path);
    static const std::regex include_line(R"re(^[ \t]{0,64}(?:#|%:)[ \t]{0,64}include[ \t]{0,64}"([^"\n]{1,1024})")re");
    static const std::regex pragma_once(R"(^[ \t]{0,64}(?:#|%:)[ \t]{0,64}pragma[ \t]{1,64}once\b)");
    const std::string stripped = strip_comments(src.content);  // same lines, comments blanked
    std::istringstream lines(src.content), code(stripped);
    std::string line, code_line, out = "// ---- solution source: " + src.path + " ----\n";
    const fs::path folder = fs::path(src.path).parent_path();
    while (std::getline(lines, line)) {
      std::getline(code, code_line);
      std::smatch m;
      if (std::regex_search(code_line, m, pragma_once)) {  // inlined once already: in one file it only warns
        out += "\n";
        continue;
      }
      if (std::regex_search(code_line, m, include_line)) {
        std::string target = (folder / m[1].str()).lexically_normal().generic_string();
        auto it = m_by_path.find(target);
        if (it != m_by_path.end()) {
          out += m_included.count(target) ? "// (" + target + " is included above)\n" : expand(*it->second);
          continue;
        }
      }
      out += line + "\n";
    }
    return out;
  }

  const Solution& m_solution;
  std::map<std::string, const SolutionSource*> m_by_path;
  std::set<std::string> m_included;
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

Solution solution_from_json(const ordered_json& j, const std::string& document) {
  JsonChecker check(document);
  check.only_fields(j, "", {"name", "definition", "description", "author", "spec", "sources"});
  Solution s;
  s.name = check.string_field(j, "", "name");
  s.definition = check.string_field(j, "", "definition");
  s.description = check.optional_string(j, "", "description", "");
  s.author = check.optional_string(j, "", "author", "");

  const ordered_json& spec = check.member(j, "", "spec");
  check.only_fields(spec, "spec",
                    {"language", "target_hardware", "entry_point", "destination_passing_style", "binding", "dependencies"});
  s.language = check.string_field(spec, "spec", "language");
  if (s.language != "cuda" && s.language != "triton")
    check.fail("spec.language", "'" + s.language + "': ptxbench evaluates \"cuda\" and \"triton\" solutions");
  s.target_hardware = check.string_list(spec, "spec", "target_hardware");
  s.dependencies = check.string_list(spec, "spec", "dependencies");
  if (spec.contains("destination_passing_style") && !check.bool_field(spec, "spec", "destination_passing_style"))
    check.fail("spec.destination_passing_style",
               "false (outputs returned) is not supported: the evaluator passes the outputs after the inputs and "
               "the function writes them");
  if (s.language == "cuda") {
    s.binding = check.optional_string(spec, "spec", "binding", "tvm-ffi");
    if (s.binding != "tvm-ffi" && s.binding != "ptxb")
      check.fail("spec.binding", "'" + s.binding + "' is not supported: \"tvm-ffi\" (TVM_FFI_DLL_EXPORT_TYPED_FUNC) or "
                                 "\"ptxb\" (the file's own ptxb_run)" +
                                     (s.binding == "torch" ? "; PyTorch C++ extensions are not built here" : ""));
  } else if (spec.contains("binding")) {
    (void)check.string_field(spec, "spec", "binding");  // ignored for Triton, as FlashInfer-Bench does
    s.binding.clear();
  } else {
    s.binding.clear();
  }

  const std::string entry = check.string_field(spec, "spec", "entry_point");
  const std::size_t cut = entry.rfind("::");
  if (cut == std::string::npos || cut == 0 || cut + 2 == entry.size())
    check.fail("spec.entry_point", "'" + entry + "' is not {file_path}::{function_name}, e.g. kernel.cu::run");
  s.entry_file = normalized_path(check, "spec.entry_point", entry.substr(0, cut));
  s.entry_function = entry.substr(cut + 2);
  static const std::regex identifier(R"([A-Za-z_][A-Za-z0-9_]{0,255})");
  if (!std::regex_match(s.entry_function, identifier))
    check.fail("spec.entry_point", "'" + s.entry_function + "' is not a function name");

  const ordered_json& sources = check.member(j, "", "sources");
  if (!sources.is_array() || sources.empty()) check.fail("sources", "expected a non-empty array of {path, content}");
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const std::string path = "sources[" + std::to_string(i) + "]";
    check.only_fields(sources[i], path, {"path", "content"});
    SolutionSource src;
    src.path = normalized_path(check, path + ".path", check.string_field(sources[i], path, "path"));
    src.content = check.string_field(sources[i], path, "content");
    if (std::find(paths.begin(), paths.end(), src.path) != paths.end())
      check.fail(path + ".path", "'" + src.path + "' is listed twice");
    paths.push_back(src.path);
    s.sources.push_back(std::move(src));
  }
  if (std::find(paths.begin(), paths.end(), s.entry_file) == paths.end())
    check.fail("spec.entry_point", "names '" + s.entry_file + "', which is not among the sources (" + joined(paths) + ")");

  if (s.language == "cuda") {
    if (!is_translation_unit(s.entry_file))
      check.fail("spec.entry_point", "'" + s.entry_file + "' is not a .cu, .cpp, .cc or .cxx file");
    if (s.binding == "ptxb" && s.entry_function != "ptxb_run")
      check.fail("spec.entry_point", "with binding \"ptxb\" the entry point is the file's ptxb_run, not " + s.entry_function);
  } else {
    if (!has_extension(s.entry_file, {".py"})) check.fail("spec.entry_point", "'" + s.entry_file + "' is not a .py file");
    if (s.sources.size() != 1)
      check.fail("sources", "a Triton solution is one Python file here (the Triton track imports one module); got " +
                                std::to_string(s.sources.size()));
    if (s.entry_function != "run")
      check.fail("spec.entry_point", "the Triton track calls `run` (docs/triton.md), not " + s.entry_function);
  }
  return s;
}

Solution parse_solution(const std::string& text, const std::string& document) {
  return solution_from_json(JsonChecker(document).parse(text), document);
}

ordered_json to_json(const Solution& s) {
  ordered_json spec = {{"language", s.language}, {"target_hardware", s.target_hardware},
                       {"entry_point", s.entry_file + "::" + s.entry_function}, {"destination_passing_style", true}};
  if (!s.binding.empty()) spec["binding"] = s.binding;
  if (!s.dependencies.empty()) spec["dependencies"] = s.dependencies;
  ordered_json sources = ordered_json::array();
  for (const auto& src : s.sources) sources.push_back({{"path", src.path}, {"content", src.content}});
  ordered_json j = {{"name", s.name}, {"definition", s.definition}};
  if (!s.description.empty()) j["description"] = s.description;
  if (!s.author.empty()) j["author"] = s.author;
  j["spec"] = spec;
  j["sources"] = sources;
  return j;
}

SolutionCandidate materialize_solution(const Solution& s, const std::string& document) {
  JsonChecker check(document);
  SolutionCandidate out;
  if (s.language == "triton") {
    out.language = CandidateLanguage::triton;
    out.source = s.sources.front().content;
    return out;
  }
  out.language = CandidateLanguage::cuda;
  std::string head = "// ptxbench: FlashInfer-Bench solution \"" + s.name + "\" for " + s.definition + ", entry point " +
                     s.entry_file + "::" + s.entry_function + "\n";
  // Several exports: ptxb_run calls the one the entry point names (knowledge/abi/tvm/ffi/function.h).
  if (s.binding == "tvm-ffi" && s.entry_function != "run")
    head += "#define PTXB_TVM_FFI_ENTRY \"" + s.entry_function + "\"\n";
  out.source = head + Joiner(s).join();
  if (s.binding == "tvm-ffi") {
    std::vector<std::string> exports = tvm_ffi_exports(out.source);
    if (std::find(exports.begin(), exports.end(), s.entry_function) == exports.end())
      check.fail("spec.entry_point",
                 "'" + s.entry_function + "' is not exported: " +
                     (exports.empty() ? std::string("the sources export no function with TVM_FFI_DLL_EXPORT_TYPED_FUNC")
                                      : "the sources export " + joined(exports) + " with TVM_FFI_DLL_EXPORT_TYPED_FUNC"));
  }
  return out;
}

CandidateFile read_candidate_file(const fs::path& file) {
  CandidateFile out;
  if (file.extension() == ".json") {
    out.solution = parse_solution(read_file(file), file.string());
    SolutionCandidate c = materialize_solution(*out.solution, file.string());
    out.source = std::move(c.source);
    out.language = c.language;
    return out;
  }
  out.source = read_file(file);
  out.language = language_of_path(file);
  return out;
}

void require_solution_definition(const Solution& s, const std::string& definition, const std::string& document) {
  if (s.definition != definition)
    throw InputError("solution", document + ": definition: the solution is for '" + s.definition + "', not '" +
                                     definition + "'");
}

}  // namespace ptxbench

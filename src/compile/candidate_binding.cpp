#include "compile/candidate_binding.h"

#include <regex>

#include "common/enum_names.h"
#include "compile/source_scan.h"

namespace ptxbench {
namespace {

// Bounded repetitions: libstdc++'s std::regex recurses per repetition (see source_scan.cpp).
const std::regex& export_macro() {
  static const std::regex re(R"(\bTVM_FFI_DLL_EXPORT_TYPED_FUNC[ \t\r\n]{0,64}\([ \t\r\n]{0,64}([A-Za-z_]\w{0,127}))");
  return re;
}

}  // namespace

std::string to_string(CandidateBinding binding) {
  return binding == CandidateBinding::tvm_ffi ? "tvm-ffi" : "ptxb";
}

CandidateBinding parse_candidate_binding(std::string_view text) {
  if (text == "ptxb") return CandidateBinding::ptxb;
  if (text == "tvm-ffi") return CandidateBinding::tvm_ffi;
  detail::throw_unknown_name("binding", text, {"ptxb", "tvm-ffi"});
}

std::vector<std::string> tvm_ffi_exports(const std::string& source) {
  const std::string code = strip_comments(source);
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), export_macro()); it != std::sregex_iterator(); ++it) {
    // `#define TVM_FFI_DLL_EXPORT_TYPED_FUNC(ExportName, ...)` defines the macro, it exports nothing.
    const std::size_t line_start = code.rfind('\n', static_cast<std::size_t>(it->position(0)));
    const std::string before = code.substr(line_start == std::string::npos ? 0 : line_start + 1,
                                           static_cast<std::size_t>(it->position(0)) -
                                               (line_start == std::string::npos ? 0 : line_start + 1));
    if (before.find("define") != std::string::npos) continue;
    names.push_back((*it)[1].str());
  }
  return names;
}

CandidateBinding detect_binding(const std::string& source) {
  // Any use counts, also one inside a macro of the file's own (#define EXPORT(f) TVM_FFI_...(run, f)).
  static const std::regex use(R"(\bTVM_FFI_DLL_EXPORT_TYPED_FUNC\b)");
  return std::regex_search(strip_comments(source), use) ? CandidateBinding::tvm_ffi : CandidateBinding::ptxb;
}

std::string binding_problem(const std::string& source) {
  if (detect_binding(source) == CandidateBinding::tvm_ffi) return "";
  const std::string code = strip_comments(source);
  static const std::regex tvm_include(R"((?:#|%:)[ \t]{0,64}include[ \t]{0,64}[<"]tvm/ffi/)");
  static const std::regex own_entry(R"(\bptxb_run\b)");
  if (!std::regex_search(code, tvm_include) || std::regex_search(code, own_entry)) return "";
  return "the file includes the TVM-FFI headers but exports no function: end it with "
         "TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, <your function>), whose parameters are the definition's tensors "
         "(inputs, then outputs) as tvm::ffi::TensorView (ABI.md, \"The TVM-FFI binding\")";
}

}  // namespace ptxbench

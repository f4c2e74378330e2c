// How a CUDA candidate meets the ABI (docs/verdict.md, "Bindings"): "ptxb", its own ptxb_run
// (ptxbench_abi.h), or "tvm-ffi", a function exported with TVM_FFI_DLL_EXPORT_TYPED_FUNC as the
// field's kernels are written (PTXBench, FlashInfer-Bench), whose ptxb_run comes from ptxbench's
// TVM-FFI headers (knowledge/abi/tvm/ffi/function.h). Read from the source as the compiler sees it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ptxbench {

enum class CandidateBinding { ptxb, tvm_ffi };
/// "ptxb", "tvm-ffi"
std::string to_string(CandidateBinding binding);
/// InputError naming both names otherwise.
CandidateBinding parse_candidate_binding(std::string_view text);

/// The names the source exports with TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, function), in order
/// (comments ignored).
std::vector<std::string> tvm_ffi_exports(const std::string& source);

/// tvm_ffi when the source exports a function with TVM_FFI_DLL_EXPORT_TYPED_FUNC, else ptxb.
CandidateBinding detect_binding(const std::string& source);

/// Why the source cannot meet the ABI through its binding, before anything is built (an
/// ABI_ERROR message), or "": it includes the TVM-FFI headers but exports no function and defines
/// no ptxb_run of its own.
std::string binding_problem(const std::string& source);

}  // namespace ptxbench

// The verdict's compile section: the compile stage's status and message, and what the nvcc build
// reported (absent for a trusted prebuilt library, which is not compiled).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compile/compiler.h"
#include "compile/ptxas_report.h"
#include "verdict/stage_record.h"

namespace ptxbench {

/// CompileStatus from its to_string name; InputError naming every name otherwise.
CompileStatus parse_compile_status(std::string_view text);

struct PtxCounts {
  int instructions = 0;
  std::map<std::string, int> families;  ///< family -> static occurrences (compile/ptx_stats.h)
};
void json_fields(JsonIo& io, PtxCounts& p);

/// ptxas's report of the build's kernels (compile/ptxas_report.h), as the verdict keeps it: every
/// kernel's resources but cmem0_bytes.
using PtxasKernel = KernelResources;
using PtxasSummary = PtxasReport;
void json_fields(JsonIo& io, PtxasKernel& k);
void json_fields(JsonIo& io, PtxasSummary& s);

/// A banned use: found in the source (line and text) or in the built library (symbol).
struct BannedUse {
  std::string rule;
  std::optional<int> line;  ///< source findings: 1-based line, with `text`
  std::string text;
  std::optional<std::string> symbol;  ///< library findings: the imported symbol or needed library
  std::string reason;
};
void json_fields(JsonIo& io, BannedUse& b);

struct CompileBuild {
  std::string arch;
  std::string key;  ///< content hash (compile cache key)
  bool cache_hit = false;
  double seconds = 0.0;
  std::vector<std::string> kernels;  ///< mangled entry points in the cubin
  PtxCounts ptx;
  PtxasSummary ptxas;
  std::vector<BannedUse> banned;
  std::string log;  ///< nvcc's output, cut at kCompileLogLimit
};
void json_fields(JsonIo& io, CompileBuild& b);

struct CompileSection : StageRecord<CompileSection> {
  CompileStatus status = CompileStatus::compile_error;
  std::string message;
  /// How a CUDA candidate meets the ABI: "ptxb" (its own ptxb_run) or "tvm-ffi" (a function
  /// exported with TVM_FFI_DLL_EXPORT_TYPED_FUNC). Absent for Triton candidates, trusted libraries
  /// and verdicts written before bindings were recorded.
  std::optional<CandidateBinding> binding;
  std::optional<CompileBuild> build;  ///< its keys sit beside the status in the document
};
void json_fields(JsonIo& io, CompileSection& s);

/// The log is kept up to this many characters in the verdict.
inline constexpr std::size_t kCompileLogLimit = 16384;

CompileSection compile_section(const CompileResult& r);

}  // namespace ptxbench

// The compile stage (CPU side): nvcc with the fixed candidate flags, a content-hash cache,
// a time limit and the full log; banned-API checks on the source and on the built library;
// PTX family counts, the ptxas resource report and the cubin's kernel names.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/fs.h"
#include "common/json_check.h"
#include "compile/binary_check.h"
#include "compile/candidate_binding.h"
#include "compile/ptx_stats.h"
#include "compile/ptxas_report.h"
#include "compile/source_scan.h"
#include "sandbox/host_paths.h"

namespace ptxbench {

/// The target a candidate is built for ("sm_90a" Hopper, "sm_100a" Blackwell).
struct ArchTarget {
  std::string name;
  std::string gencode;  ///< "arch=compute_90a,code=sm_90a"
  std::string pack;     ///< knowledge pack folder: "hopper", "blackwell"
};
/// Throws InputError for an unknown name.
ArchTarget arch_target(const std::string& name);

struct CompileOptions {
  std::string arch = "sm_90a";
  double timeout_s = 180.0;     ///< wall-clock limit for nvcc
  std::size_t max_source_bytes = 1 << 20;
  fs::path cache_dir;           ///< empty: cache_root()/compile
  bool use_cache = true;
  /// nvcc runs sandboxed (docs/sandbox.md): no network, an unprivileged user, and a read-only view
  /// of only the toolkit, the system compiler, the ABI and pack headers and the candidate's own
  /// folder, so no #include trick can read a host file into the log a model sees.
  Enforcement sandbox = sandbox_enforcement_setting();
  uint64_t memory_bytes = uint64_t{16} << 30;  ///< host memory of nvcc and its children
};

enum class CompileStatus { ok, compile_error, banned_api, abi_error, timeout };
std::string to_string(CompileStatus s);

struct CompileResult {
  CompileStatus status = CompileStatus::compile_error;
  std::string message;  ///< one-paragraph summary for the feedback text
  std::string log;      ///< nvcc's full output (stdout + stderr)
  std::string key;      ///< content hash of compiler version, flags, ABI header and source
  bool cache_hit = false;
  double seconds = 0.0;  ///< compile time when it ran (0 on a cache hit)
  std::string arch;
  std::string nvcc_version;
  std::vector<std::string> command;
  fs::path dir;  ///< artifact folder: candidate.cu, candidate.so, candidate.cubin, candidate.ptx
  std::vector<SourceFinding> source_findings;
  /// How the file meets the ABI: its own ptxb_run, or a TVM-FFI export (set for CUDA sources).
  std::optional<CandidateBinding> binding;
  BinaryCheckResult binary;
  PtxStats ptx;
  PtxasReport ptxas;
  std::vector<std::string> kernels;  ///< mangled entry-point names in the cubin

  [[nodiscard]] bool ok() const noexcept { return status == CompileStatus::ok; }
  [[nodiscard]] fs::path library() const { return dir / "candidate.so"; }
  [[nodiscard]] fs::path cubin() const { return dir / "candidate.cubin"; }
  [[nodiscard]] fs::path ptx_file() const { return dir / "candidate.ptx"; }
};

class Compiler {
 public:
  explicit Compiler(CompileOptions options = {});
  /// Never throws for a bad candidate: every failure is a status with a message. Throws
  /// EnvironmentError when nvcc is missing.
  [[nodiscard]] CompileResult compile(const std::string& source) const;
  [[nodiscard]] const CompileOptions& options() const noexcept { return m_options; }
  [[nodiscard]] const std::string& nvcc_version() const;
  /// The sandbox nvcc runs in for a build in `work` (docs/sandbox.md, "The compile stage").
  [[nodiscard]] SandboxPolicy compile_sandbox_policy(const fs::path& work) const;
  [[nodiscard]] const std::string& nvcc_path() const noexcept { return m_nvcc; }

 private:
  [[nodiscard]] std::vector<std::string> flags(const fs::path& keep_dir) const;
  /// Content hash of compiler version, flags, the ABI and pack headers, and the source.
  [[nodiscard]] std::string cache_key(const std::string& source) const;
  /// Runs nvcc in a build folder under the cache and publishes it to `final_dir` (when caching).
  void build(const std::string& source, const fs::path& final_dir, CompileResult& r) const;
  void analyze(CompileResult& r) const;
  CompileOptions m_options;
  std::string m_nvcc;
  fs::path m_abi_dir;
  fs::path m_pack_include;  ///< knowledge/<pack>/include: the PTX templates candidates may include
  mutable std::string m_nvcc_version;
};

}  // namespace ptxbench

// The compile stage of a Triton candidate (docs/triton.md): our trusted checker
// (src/python/ptxb_triton/triton_check.py) parses the file with Python's `ast`, never importing or running it,
// and reports the entry point, the @triton.jit kernels and every banned use; this runs it (isolated,
// sandboxed, time-limited) and maps its report to the CompileResult the CUDA stage gives.
//
// NOTES: the kernels are not compiled here. Triton compiles a kernel for a signature (argument
// dtypes, pointer alignment, constexpr values and launch options) that exists only once `run` is
// called with real tensors, and running `run` means running the candidate; so Triton builds the
// kernels for sm_90a at the first calls, in the build pass on the GPU host (compile/triton_build.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/fs.h"
#include "common/json_check.h"
#include "compile/compiler.h"
#include "sandbox/host_paths.h"

namespace ptxbench {

/// The language of a candidate file.
enum class CandidateLanguage { cuda, triton };
std::string to_string(CandidateLanguage language);
/// "cuda" or "triton"; InputError naming both otherwise.
CandidateLanguage parse_candidate_language(std::string_view text);
/// By extension: ".py" is Triton, anything else CUDA.
CandidateLanguage language_of_path(const fs::path& file);

/// One finding of the checker. `kind` decides the status: "syntax" (COMPILE_ERROR), "banned"
/// (BANNED_API), "abi" (ABI_ERROR).
struct TritonFinding {
  std::string rule;    ///< "torch-compute", "dunder", "entry", ... (docs/triton.md lists them)
  std::string kind;
  int line = 0;        ///< 1-based; 0 when the finding is about the whole file
  int col = 0;         ///< 1-based
  std::string text;    ///< the source of the offending expression, on one line, at most 120 characters
  std::string reason;  ///< what the model is told
};

/// The entry point as the checker read it.
struct TritonEntry {
  std::string name = "run";
  std::vector<std::string> params;  ///< positional parameters; "*args" last for a variadic run
  bool varargs = false;
  int line = 0;
};

/// The checker's report (its stdout, one JSON object).
struct TritonReport {
  std::string checker;  ///< "ptxbench-triton-check"
  int version = 0;
  std::string python;   ///< the interpreter's version that parsed the file ("3.11.7")
  bool ok = false;
  std::string reason;   ///< the first finding, or "ok"
  std::optional<TritonEntry> entry;
  std::vector<std::string> kernels;   ///< @triton.jit functions, in source order
  std::vector<std::string> launches;  ///< kernels launched as kernel[grid](...)
  std::vector<std::string> imports;   ///< imported modules
  std::vector<TritonFinding> findings;  ///< in line order, at most 100
  int truncated = 0;                    ///< findings left out past the first 100

  /// syntax → compile_error; else banned → banned_api; else abi → abi_error; else ok.
  [[nodiscard]] CompileStatus status() const;
};

/// The checker's name and report version this build reads.
inline constexpr const char* kTritonCheckerName = "ptxbench-triton-check";
inline constexpr int kTritonCheckerVersion = 1;

void to_json(ordered_json& j, const TritonFinding& f);
void from_json(const ordered_json& j, TritonFinding& f);
void to_json(ordered_json& j, const TritonEntry& e);
void from_json(const ordered_json& j, TritonEntry& e);
void to_json(ordered_json& j, const TritonReport& r);
/// Also checks what the fields cannot say alone: the checker's name and version, the kinds, and
/// `ok` agreeing with the findings; JsonFieldError otherwise.
void from_json(const ordered_json& j, TritonReport& r);

/// The compile result of a report: status by the findings' kinds, a message listing every finding
/// (line:col, text, reason), the findings as source findings, the kernels. No artifacts.
CompileResult triton_compile_result(const TritonReport& report, const std::string& arch);

/// The interpreter that runs the checker (and, on the GPU host, the candidate).
struct PythonInterpreter {
  std::string command;     ///< as asked for: "python3", a path
  std::string executable;  ///< sys.executable: the real binary behind a shim (pyenv)
  std::string prefix;      ///< sys.prefix and sys.base_prefix: the standard library lives there
  std::string base_prefix;
  std::string version;     ///< "3.11.7"
};

/// `command` probed once per process (`-I -S -c`, unsandboxed: it runs no candidate code).
/// Throws EnvironmentError when it cannot run or is older than Python 3.9.
const PythonInterpreter& python_interpreter(const std::string& command);
/// $PTXBENCH_PYTHON, else "python3".
std::string default_python_command();
/// The Triton version that `command` imports here (`import triton`, with its site-packages),
/// probed once per process; nullopt when it has none.
std::optional<std::string> installed_triton_version(const std::string& command);

/// triton_check.py in the package this binary embeds (ptxb_triton_package_dir(), written to the
/// cache): the checker always matches the C++ that reads its report.
fs::path default_triton_checker_path();

struct TritonCheckOptions {
  std::string arch = "sm_90a";  ///< recorded in the result; the kernels are built for it on the GPU host
  double timeout_s = 30.0;      ///< wall-clock limit of the checker (a 256 KiB file takes ~1 s)
  std::size_t max_source_bytes = std::size_t{256} << 10;
  /// The definition's inputs + outputs: run must accept this many positional tensors.
  std::optional<int> expected_args;
  fs::path checker;    ///< empty: default_triton_checker_path()
  std::string python;  ///< empty: default_python_command()
  /// The checker runs sandboxed like nvcc (docs/sandbox.md): no network, unprivileged, a read-only
  /// view of the system, the interpreter's prefix and the checker; only its scratch folder writable.
  Enforcement sandbox = sandbox_enforcement_setting();
  uint64_t memory_bytes = uint64_t{2} << 30;
};

/// A check's compile result with the report it came from.
struct TritonCheck {
  CompileResult result;                ///< status, message, findings, kernels, key, command, seconds
  std::optional<TritonReport> report;  ///< nullopt: the file was over the size limit or the checker timed out
};

class TritonChecker {
 public:
  /// Throws EnvironmentError when the interpreter or the checker script is missing.
  explicit TritonChecker(TritonCheckOptions options = {});
  /// The compile stage for a Triton candidate. Never throws for a bad candidate: an oversized file
  /// is compile_error, a checker past its time limit timeout. Throws Error when the checker itself
  /// fails (no report: our bug, an INFRA_ERROR).
  [[nodiscard]] TritonCheck run(const std::string& source) const;
  /// run(source).result.
  [[nodiscard]] CompileResult check(const std::string& source) const { return run(source).result; }
  [[nodiscard]] const TritonCheckOptions& options() const noexcept { return m_options; }
  [[nodiscard]] const PythonInterpreter& python() const noexcept { return *m_python; }
  /// What the checker runs under for a check in `work`.
  [[nodiscard]] SandboxPolicy sandbox_policy(const fs::path& work) const;

 private:
  struct Process {
    std::optional<TritonReport> report;  ///< nullopt: timed out
    std::vector<std::string> command;
    double seconds = 0.0;
  };
  [[nodiscard]] Process run_checker(const std::string& source) const;
  TritonCheckOptions m_options;
  const PythonInterpreter* m_python = nullptr;
};

}  // namespace ptxbench

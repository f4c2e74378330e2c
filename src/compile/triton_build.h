// The build pass of a Triton candidate (docs/triton.md, "The GPU side"): Triton compiles a kernel at
// its first call, with processes (ptxas, the C compiler for its launcher) that the runner's
// system-call filter forbids. So, on the GPU host, a trusted script (src/python/ptxb_triton/triton_build.py)
// imports the candidate in a sandbox and calls run() on the workload's shapes, filling a private
// Triton cache; the runner then runs from that cache only. The artifact folder it leaves is what
// the runner loads, like a CUDA candidate's build folder:
//
//   candidate.py         the checked source
//   candidate.so         a copy of the trusted shim (libptxb_triton_shim.so, src/runner/triton_shim.cpp)
//   triton_runtime.json  what the shim embeds: libpython, sys.path, Triton's environment
//   triton_cache/        TRITON_CACHE_DIR: every compiled kernel (cubin, metadata) and launcher
//   build.json           the build pass's report (meta: present only once complete)
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/fs.h"
#include "common/json_check.h"
#include "common/subprocess.h"
#include "compile/python_runtime.h"

namespace ptxbench {

enum class TritonBuildStatus { ok, compile_error, runtime_error, timeout };
std::string to_string(TritonBuildStatus s);
TritonBuildStatus parse_triton_build_status(const std::string& s);

/// One kernel Triton compiled for the candidate (its metadata file in the cache).
struct TritonKernel {
  std::string name;   ///< the cubin's entry point (the @triton.jit function's name)
  std::string cubin;  ///< path relative to the cache folder
  std::optional<int> num_warps;
  std::optional<long> shared;
};

struct TritonBuildResult {
  TritonBuildStatus status = TritonBuildStatus::runtime_error;
  std::string message;  ///< for the verdict (a traceback with the artifact folder cut out)
  std::string log;      ///< the build pass's output
  std::string key;
  bool cache_hit = false;
  double seconds = 0.0;
  fs::path dir;  ///< the artifact folder (layout above)
  std::vector<TritonKernel> kernels;
  std::string python, torch, triton;  ///< versions the build pass imported
  std::vector<std::string> command;

  [[nodiscard]] bool ok() const noexcept { return status == TritonBuildStatus::ok; }
  [[nodiscard]] fs::path library() const { return dir / "candidate.so"; }
  [[nodiscard]] fs::path cache_dir() const { return dir / "triton_cache"; }
  /// Absolute paths of the kernels' cubins.
  [[nodiscard]] std::vector<fs::path> cubins() const;
  /// The kernels' distinct entry-point names.
  [[nodiscard]] std::vector<std::string> kernel_names() const;
};
ordered_json to_json(const TritonBuildResult& r);

/// Reads the build script's output (its last "PTXB-BUILD {...}" line) into status, message,
/// versions and kernels; JsonFieldError when there is none or it is malformed. `infra` is set when
/// the script says the failure is the host's (torch missing, tensors not allocatable).
void read_triton_build_report(const std::string& output, TritonBuildResult& r, bool& infra);

/// A Triton kernel name that a foreign kernel could share (a mangled C++ name, our own prefix):
/// the kernel-origin checks go by name, so such a candidate is refused (ABI). Empty: fine.
std::string suspicious_triton_kernel_name(const std::string& name);

struct TritonBuildOptions {
  std::string python;    ///< empty: default_python_command()
  fs::path cache_dir;    ///< empty: cache_root()/triton
  fs::path shim;         ///< empty: lib/libptxb_triton_shim.so beside bin/ of this executable
  fs::path script;       ///< empty: triton_build.py of ptxb_triton_package_dir(); platform_key.py beside it
  double timeout_s = 300.0;
  bool use_cache = true;
  int device = 0;  ///< the CUDA device the build pass runs on (the evaluation's)
  /// The runner's TRITON_LIBCUDA_PATH (a folder with libcuda.so.1), so that Triton never runs
  /// ldconfig under the filter; empty: unset. Not set in the build pass.
  std::string libcuda_dir;
  /// Makes the sandboxed process (the evaluator's: the GPU devices visible, `readable` read-only,
  /// `writable` writable, cwd `work`). Unset: an unsandboxed process (tests).
  std::function<ProcessSpec(const std::vector<std::string>& argv, const fs::path& work,
                            const std::vector<fs::path>& readable, const std::vector<fs::path>& writable)>
      sandboxed;
};

/// The shim's configuration for one runtime (triton_runtime.json).
ordered_json triton_runtime_config(const PythonRuntime& runtime, const std::string& libcuda_dir);

class TritonBuilder {
 public:
  /// Throws EnvironmentError when the interpreter cannot run Triton (require_triton_runtime), or
  /// the shim or the script is missing.
  explicit TritonBuilder(TritonBuildOptions options = {});
  /// Builds `source` (already through the static checks) for `tensors` ({"tensors": [TensorSpec]}
  /// as the runner's spec file; `spec_key` is part of the cache key). Never throws for a bad
  /// candidate; throws EnvironmentError when the build pass could not run (ours).
  [[nodiscard]] TritonBuildResult build(const std::string& source, const ordered_json& tensors) const;
  [[nodiscard]] const PythonRuntime& runtime() const noexcept { return *m_runtime; }
  [[nodiscard]] const TritonBuildOptions& options() const noexcept { return m_options; }

 private:
  void install_runtime_files(const fs::path& dir, const std::string& source) const;
  TritonBuildOptions m_options;
  const PythonRuntime* m_runtime = nullptr;
};

}  // namespace ptxbench

// The Python that runs Triton candidates on the GPU host (docs/triton.md, "The GPU side"): probed
// once per process for what the build pass and the runner's shim need to embed it — the shared
// libpython, the interpreter's sys.path (a venv's site-packages included) and the torch and Triton
// it imports. Nothing here needs Python headers, torch or a GPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json_check.h"

namespace ptxbench {

struct PythonRuntime {
  std::string command;     ///< as asked for: "python3", $PTXBENCH_PYTHON
  std::string executable;  ///< sys.executable (a venv's python: its site-packages come with it)
  std::string version;     ///< "3.12.3"
  std::string prefix, base_prefix;
  bool shared = false;     ///< Py_ENABLE_SHARED: the interpreter has a libpython to embed
  std::string libpython;   ///< the shared library (LIBDIR/INSTSONAME, ...); empty: none found
  std::vector<std::string> sys_path;  ///< the interpreter's sys.path under -I (no cwd, no PYTHONPATH)
  std::optional<std::string> torch;   ///< torch.__version__ when `import torch` works
  std::optional<std::string> torch_cuda;  ///< torch.version.cuda
  std::optional<std::string> triton;  ///< triton.__version__ when `import triton` works
  std::string torch_error, triton_error;  ///< the last line of a failed import

  /// Why this interpreter cannot run Triton candidates ("" when it can): no shared libpython, no
  /// torch, no Triton.
  [[nodiscard]] std::string missing() const;
  /// Folders a sandbox must show read-only for it to run: the prefixes and every sys.path folder
  /// outside the system folders.
  [[nodiscard]] std::vector<std::string> readable_dirs() const;
};

void to_json(ordered_json& j, const PythonRuntime& r);
/// Reads the probe's output (one JSON object); JsonFieldError when it is malformed.
PythonRuntime parse_python_runtime_probe(const std::string& command, const std::string& probe_output);

/// `command` probed once per process (`-I -c`, unsandboxed: it imports only torch and Triton,
/// never candidate code; up to two minutes the first time, for `import torch`). Throws
/// EnvironmentError when the interpreter cannot run.
const PythonRuntime& python_runtime(const std::string& command);

/// Throws EnvironmentError naming what is missing (see PythonRuntime::missing).
void require_triton_runtime(const PythonRuntime& runtime);

/// The probe script (Python, standard library plus optional torch/Triton imports).
const char* python_runtime_probe_script();

}  // namespace ptxbench

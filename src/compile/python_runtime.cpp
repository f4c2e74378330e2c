#include "compile/python_runtime.h"

#include <map>
#include <mutex>

#include "common/error.h"
#include "common/fs.h"
#include "common/json_fields.h"
#include "common/subprocess.h"
#include "common/text.h"
#include "sandbox/host_paths.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "python runtime";

// Standard library only, then optional imports; prints one JSON object. `-I`: no PYTHONPATH, no
// user site, no script folder, but the interpreter's own site-packages (a venv's) stay.
constexpr const char* kProbe = R"PY(
import json, os, sys, sysconfig
out = {"executable": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3],
       "prefix": sys.prefix, "base_prefix": sys.base_prefix, "sys_path": [p for p in sys.path if p],
       "shared": bool(sysconfig.get_config_var("Py_ENABLE_SHARED")), "libpython": ""}
names = [sysconfig.get_config_var(n) for n in ("INSTSONAME", "LDLIBRARY")]
dirs = [sysconfig.get_config_var("LIBDIR"), os.path.join(sys.base_prefix, "lib"),
        os.path.join(sys.base_prefix, "lib", sysconfig.get_config_var("MULTIARCH") or "")]
for d in dirs:
    for n in names:
        if out["libpython"] or not d or not n or not n.endswith((".so",)) and ".so." not in n:
            continue
        if os.path.isfile(os.path.join(d, n)):
            out["libpython"] = os.path.join(d, n)
def last_line(e):
    return (type(e).__name__ + ": " + str(e)).strip().splitlines()[-1][:300]
try:
    import torch
    out["torch"] = torch.__version__
    out["torch_cuda"] = getattr(getattr(torch, "version", None), "cuda", None)
except BaseException as e:
    out["torch_error"] = last_line(e)
try:
    import triton
    out["triton"] = triton.__version__
except BaseException as e:
    out["triton_error"] = last_line(e)
sys.stdout.write("\nPTXB-PROBE " + json.dumps(out) + "\n")
)PY";

bool under_system_path(const std::string& dir) {
  for (const auto& s : system_paths())
    if (dir == s || dir.rfind(s + "/", 0) == 0) return true;
  return false;
}

}  // namespace

const char* python_runtime_probe_script() { return kProbe; }

std::string PythonRuntime::missing() const {
  if (!shared || libpython.empty())
    return "the Python at " + executable + " (" + version + ") has no shared libpython" +
           (shared ? " where sysconfig says it is" : " (built without --enable-shared)") +
           "; the Triton runner embeds CPython from it";
  if (!torch) return "the Python at " + executable + " cannot import torch" + (torch_error.empty() ? "" : " (" + torch_error + ")");
  if (!triton) return "the Python at " + executable + " cannot import triton" + (triton_error.empty() ? "" : " (" + triton_error + ")");
  return "";
}

std::vector<std::string> PythonRuntime::readable_dirs() const {
  std::vector<std::string> out;
  auto add = [&](const std::string& d) {
    if (d.empty() || d[0] != '/' || under_system_path(d)) return;
    for (const auto& o : out)
      if (d == o || d.rfind(o + "/", 0) == 0) return;
    out.push_back(d);
  };
  add(prefix);
  add(base_prefix);
  for (const auto& p : sys_path) add(p);
  if (!libpython.empty()) add(fs::path(libpython).parent_path().string());
  return out;
}

void to_json(ordered_json& j, const PythonRuntime& r) {
  j = {{"command", r.command}, {"executable", r.executable}, {"version", r.version}, {"prefix", r.prefix},
       {"base_prefix", r.base_prefix}, {"shared", r.shared}, {"libpython", r.libpython}, {"sys_path", r.sys_path}};
  j["torch"] = r.torch ? ordered_json(*r.torch) : ordered_json(nullptr);
  j["torch_cuda"] = r.torch_cuda ? ordered_json(*r.torch_cuda) : ordered_json(nullptr);
  j["triton"] = r.triton ? ordered_json(*r.triton) : ordered_json(nullptr);
  if (!r.torch_error.empty()) j["torch_error"] = r.torch_error;
  if (!r.triton_error.empty()) j["triton_error"] = r.triton_error;
}

PythonRuntime parse_python_runtime_probe(const std::string& command, const std::string& probe_output) {
  // Imports may print; the report is the line after our marker.
  const std::string marker = "PTXB-PROBE ";
  auto at = probe_output.rfind("\n" + marker);
  if (at == std::string::npos) throw JsonFieldError("probe", "no report line in the interpreter's output");
  std::string line = probe_output.substr(at + 1 + marker.size());
  line = line.substr(0, line.find('\n'));
  ordered_json j = JsonChecker("python runtime probe").parse(line);
  PythonRuntime r;
  r.command = command;
  require_json_object(j);
  read_field(j, "executable", r.executable);
  read_field(j, "version", r.version);
  read_field(j, "prefix", r.prefix);
  read_field(j, "base_prefix", r.base_prefix);
  read_field(j, "shared", r.shared);
  read_field(j, "libpython", r.libpython);
  read_field(j, "sys_path", r.sys_path);
  read_field(j, "torch", r.torch);
  read_field(j, "torch_cuda", r.torch_cuda);
  read_field(j, "triton", r.triton);
  read_field(j, "torch_error", r.torch_error);
  read_field(j, "triton_error", r.triton_error);
  if (r.executable.empty() || r.version.empty()) throw JsonFieldError("executable", "missing from the probe");
  return r;
}

const PythonRuntime& python_runtime(const std::string& command) {
  static std::mutex mutex;
  static std::map<std::string, PythonRuntime> known;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(command); it != known.end()) return it->second;
  ProcessSpec spec;
  spec.argv = {command, "-I", "-c", kProbe};
  spec.output_cap_bytes = 1 << 20;
  ProcessResult r;
  try {
    r = run_process(spec, 180);
  } catch (const Error& e) {
    throw EnvironmentError(kLib, "cannot run the Python interpreter '" + command + "' (set PTXBENCH_PYTHON): " + e.what());
  }
  if (r.timed_out || !r.status.success())
    throw EnvironmentError(kLib, "the Python interpreter '" + command + "' " + (r.timed_out ? "timed out" : r.status.describe()) +
                                     " while probed: " + cut(r.err.text, 1000));
  try {
    return known[command] = parse_python_runtime_probe(command, r.out.text);
  } catch (const InputError& e) {
    throw EnvironmentError(kLib, std::string("unreadable probe of '") + command + "': " + e.what());
  }
}

void require_triton_runtime(const PythonRuntime& runtime) {
  std::string why = runtime.missing();
  if (!why.empty())
    throw EnvironmentError(kLib, why + "; Triton candidates need the GPU host's Python with torch and Triton "
                                       "(set PTXBENCH_PYTHON to it)");
}

}  // namespace ptxbench

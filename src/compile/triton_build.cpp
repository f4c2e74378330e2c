#include "compile/triton_build.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "common/enum_names.h"
#include "common/error.h"
#include "common/fd.h"
#include "common/json_fields.h"
#include "common/sha256.h"
#include "common/text.h"
#include "compile/ptxb_triton_package.h"
#include "compile/triton_check.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "triton build";
constexpr const char* kReportMarker = "PTXB-BUILD ";

constexpr EnumName<TritonBuildStatus> kStatuses[] = {{TritonBuildStatus::ok, "ok"},
                                                      {TritonBuildStatus::compile_error, "compile_error"},
                                                      {TritonBuildStatus::runtime_error, "runtime_error"},
                                                      {TritonBuildStatus::timeout, "timeout"}};

// Serialises builds of one key across the workers of a host (they share the cache folder).
class FolderLock {
 public:
  explicit FolderLock(const fs::path& path) {
    m_fd = Fd(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600));
    if (!m_fd.valid()) throw EnvironmentError(kLib, "cannot open the lock " + path.string() + ": " + std::strerror(errno));
    while (::flock(m_fd.get(), LOCK_EX) != 0)
      if (errno != EINTR) throw EnvironmentError(kLib, "flock " + path.string() + ": " + std::strerror(errno));
  }

 private:
  Fd m_fd;
};

}  // namespace

std::string to_string(TritonBuildStatus s) { return enum_name(kStatuses, s); }
TritonBuildStatus parse_triton_build_status(const std::string& s) { return parse_enum(kStatuses, s, "triton build status"); }

std::vector<fs::path> TritonBuildResult::cubins() const {
  std::vector<fs::path> out;
  for (const auto& k : kernels) out.push_back(cache_dir() / k.cubin);
  return out;
}

std::vector<std::string> TritonBuildResult::kernel_names() const {
  std::vector<std::string> out;
  for (const auto& k : kernels)
    if (std::find(out.begin(), out.end(), k.name) == out.end()) out.push_back(k.name);
  return out;
}

ordered_json to_json(const TritonBuildResult& r) {
  ordered_json kernels = ordered_json::array();
  for (const auto& k : r.kernels) {
    ordered_json j = {{"name", k.name}, {"cubin", k.cubin}};
    j["num_warps"] = k.num_warps ? ordered_json(*k.num_warps) : ordered_json(nullptr);
    j["shared"] = k.shared ? ordered_json(*k.shared) : ordered_json(nullptr);
    kernels.push_back(j);
  }
  return {{"status", to_string(r.status)}, {"message", r.message}, {"key", r.key}, {"cache_hit", r.cache_hit},
          {"seconds", r.seconds}, {"python", r.python}, {"torch", r.torch}, {"triton", r.triton},
          {"kernels", kernels}};
}

void read_triton_build_report(const std::string& output, TritonBuildResult& r, bool& infra) {
  auto at = output.rfind(std::string("\n") + kReportMarker);
  if (at == std::string::npos) throw JsonFieldError("report", "the build pass printed no report");
  std::string line = output.substr(at + 1 + std::strlen(kReportMarker));
  line = line.substr(0, line.find('\n'));
  ordered_json j = JsonChecker("triton build report").parse(line);
  require_json_object(j);
  std::string status;
  read_field(j, "status", status);
  try {
    r.status = parse_triton_build_status(status);
  } catch (const InputError& e) {
    throw JsonFieldError("status", e.what());
  }
  read_field(j, "message", r.message);
  read_field(j, "python", r.python);
  read_field(j, "torch", r.torch);
  read_field(j, "triton", r.triton);
  infra = j.value("infra", false);
  r.kernels.clear();
  if (auto it = j.find("kernels"); it != j.end()) {
    if (!it->is_array()) throw JsonFieldError("kernels", "expected a list");
    for (const auto& k : *it) {
      TritonKernel t;
      read_field(k, "name", t.name);
      read_field(k, "cubin", t.cubin);
      read_field(k, "num_warps", t.num_warps);
      read_field(k, "shared", t.shared);
      if (t.name.empty() || t.cubin.empty() || fs::path(t.cubin).is_absolute() || t.cubin.find("..") != std::string::npos)
        throw JsonFieldError("kernels", "a kernel without a name or with a cubin outside the cache");
      r.kernels.push_back(t);
    }
  }
}

std::string suspicious_triton_kernel_name(const std::string& name) {
  if (name.rfind("_Z", 0) == 0)
    return "the Triton kernel '" + name + "' is named like a mangled C++ symbol (a library kernel's name); rename it";
  if (name.rfind("ptxb_internal_", 0) == 0)
    return "the Triton kernel '" + name + "' uses the evaluator's reserved prefix ptxb_internal_; rename it";
  return "";
}

ordered_json triton_runtime_config(const PythonRuntime& runtime, const std::string& libcuda_dir) {
  // One field per line (dump(2)): the shim reads "libpython" and "python_home" before Python runs.
  ordered_json env = {{"TRITON_CACHE_AUTOTUNING", "1"}};
  if (!libcuda_dir.empty()) env["TRITON_LIBCUDA_PATH"] = libcuda_dir;
  return {{"libpython", runtime.libpython}, {"python_home", runtime.base_prefix}, {"python", runtime.executable},
          {"version", runtime.version},     {"sys_path", runtime.sys_path},       {"env", env}};
}

TritonBuilder::TritonBuilder(TritonBuildOptions options) : m_options(std::move(options)) {
  if (m_options.python.empty()) m_options.python = default_python_command();
  if (m_options.cache_dir.empty()) m_options.cache_dir = cache_root() / "triton";
  if (m_options.shim.empty()) m_options.shim = executable_dir().parent_path() / "lib" / "libptxb_triton_shim.so";
  if (m_options.script.empty()) m_options.script = ptxb_triton_package_dir() / "triton_build.py";
  if (!fs::is_regular_file(m_options.shim))
    throw EnvironmentError(kLib, "the Triton shim " + m_options.shim.string() + " is missing (build ptxb_triton_shim)");
  if (!fs::is_regular_file(m_options.script))
    throw EnvironmentError(kLib, "the build script " + m_options.script.string() + " is missing");
  m_runtime = &python_runtime(m_options.python);
  require_triton_runtime(*m_runtime);
}

void TritonBuilder::install_runtime_files(const fs::path& dir, const std::string& source) const {
  // Written after the build pass, which ran candidate code with this folder writable: what the
  // runner loads is the checked source, our shim and our configuration, whatever that code wrote.
  write_file_atomic(dir / "candidate.py", source);
  write_file_atomic(dir / "candidate.so", read_file(m_options.shim));
  fs::permissions(dir / "candidate.so", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                            fs::perms::others_read | fs::perms::others_exec);
  write_file_atomic(dir / "triton_runtime.json", triton_runtime_config(*m_runtime, m_options.libcuda_dir).dump(2) + "\n");
}

TritonBuildResult TritonBuilder::build(const std::string& source, const ordered_json& tensors) const {
  TritonBuildResult r;
  Sha256 h;
  h.field("ptxbench-triton-build-v1").field(read_file(m_options.script));
  // The module the script loads from its folder (the platform key it pins) is part of the pass too.
  fs::path key_module = m_options.script.parent_path() / "platform_key.py";
  h.field(fs::is_regular_file(key_module) ? read_file(key_module) : std::string("-"));
  h.field(m_runtime->executable).field(m_runtime->version).field(m_runtime->torch.value_or("-")).field(m_runtime->triton.value_or("-"));
  h.field(m_options.libcuda_dir).field(tensors.dump()).field(source);
  r.key = h.hex_digest();
  r.dir = m_options.cache_dir / r.key.substr(0, 2) / r.key;
  fs::create_directories(r.dir.parent_path());
  FolderLock lock(r.dir.string() + ".lock");
  fs::path meta = r.dir / "build.json";
  if (m_options.use_cache && fs::is_regular_file(meta)) {
    bool infra = false;
    read_triton_build_report(std::string("\n") + kReportMarker + read_file(meta), r, infra);
    r.cache_hit = true;
    install_runtime_files(r.dir, source);  // the shim of this build of ptxbench
    return r;
  }
  std::error_code ec;
  fs::remove_all(r.dir, ec);  // an earlier build that did not finish
  fs::create_directories(r.dir / "triton_cache");
  write_file_atomic(r.dir / "candidate.py", source);
  fs::path spec_file = r.dir / "tensors.json";
  write_file_atomic(spec_file, tensors.dump());
  TempDir work("triton-build", m_options.cache_dir / "tmp");

  r.command = {m_runtime->executable, "-I", "-B", fs::absolute(m_options.script).string(), fs::absolute(r.dir).string(),
               fs::absolute(spec_file).string(), std::to_string(m_options.device)};
  std::vector<fs::path> readable;
  for (const auto& d : m_runtime->readable_dirs()) readable.emplace_back(d);
  readable.push_back(fs::absolute(m_options.script).parent_path());
  std::vector<fs::path> writable = {fs::absolute(r.dir)};
  ProcessSpec spec;
  if (m_options.sandboxed) {
    spec = m_options.sandboxed(r.command, work.path(), readable, writable);
  } else {
    spec.argv = r.command;
    spec.cwd = work.path().string();
  }
  spec.output_cap_bytes = 1 << 20;
  for (std::string e : {"HOME=" + work.path().string(), "TMPDIR=" + work.path().string(),
                        "TRITON_CACHE_DIR=" + fs::absolute(r.dir / "triton_cache").string(), std::string("TRITON_CACHE_AUTOTUNING=1"),
                        std::string("PYTHONDONTWRITEBYTECODE=1"), std::string("PYTHONNOUSERSITE=1")})
    spec.env_overrides.push_back(e);
  // No TRITON_LIBCUDA_PATH here: Triton's own search (ldconfig) finds a libcuda it can link its
  // launchers with; only the runner, which must not start ldconfig, gets the folder (the launchers'
  // cache keys do not depend on it).
  auto start = std::chrono::steady_clock::now();
  ProcessResult p = run_process(spec, m_options.timeout_s);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.log = cut(p.out.text + p.err.text, 64 << 10);
  install_runtime_files(r.dir, source);
  if (p.timed_out) {
    r.status = TritonBuildStatus::timeout;
    r.message = fmt::format("the build pass (importing candidate.py and the first calls of run, where Triton compiles "
                            "the kernels) did not finish within {:g} s",
                            m_options.timeout_s);
    return r;
  }
  bool infra = false;
  try {
    read_triton_build_report(p.out.text, r, infra);
  } catch (const InputError& e) {
    // No report: the process died (a crash, the memory limit) with candidate code running in it.
    r.status = TritonBuildStatus::runtime_error;
    r.message = "the build pass " + p.status.describe() + " without a report (" + e.what() + "):\n" + cut(p.err.text, 3000);
    return r;
  }
  if (infra) throw EnvironmentError(kLib, r.message);
  if (r.ok()) write_file_atomic(meta, to_json(r).dump());
  return r;
}

}  // namespace ptxbench

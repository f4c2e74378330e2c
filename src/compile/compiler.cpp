#include "compile/compiler.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "common/cuda_tools.h"
#include "common/error.h"
#include "common/sha256.h"
#include "common/subprocess.h"
#include "sandbox/sandbox.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "compile";

std::string first_error_lines(const std::string& log, int max_lines) {
  std::istringstream in(log);
  std::string line, out;
  int n = 0;
  while (std::getline(in, line) && n < max_lines) {
    if (line.find("error") == std::string::npos) continue;
    out += line + "\n";
    ++n;
  }
  return out.empty() ? log.substr(0, 2000) : out;
}

// nvcc names the source by its path in the build folder, which is renamed into the cache (or
// removed) right after the build: a user would look for a file that is gone, and a model would see
// a random folder name. The log names it "candidate.cu" instead, the same for every build and cache
// hit (the CLI puts the user's file name in its place).
std::string without_build_dir(std::string log, const fs::path& cache_dir) {
  const std::string prefix = (cache_dir / "tmp").string() + "/build-";
  for (std::size_t at = log.find(prefix); at != std::string::npos; at = log.find(prefix, at)) {
    std::size_t slash = log.find('/', at + prefix.size());
    if (slash == std::string::npos) break;
    log.erase(at, slash + 1 - at);
  }
  return log;
}

fs::path find_with_extension(const fs::path& dir, const std::string& ext, const std::string& avoid) {
  if (!fs::is_directory(dir)) return {};
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (e.path().extension() == ext && name.find(avoid) == std::string::npos) return e.path();
  }
  return {};
}

/// The checks before nvcc: size, banned APIs in the source, the ABI binding. True (with the status
/// and message in `r`) when the source is refused.
bool refuse_source(const std::string& source, std::size_t max_bytes, CompileResult& r) {
  if (source.size() > max_bytes) {
    r.status = CompileStatus::compile_error;
    r.message = "source is " + std::to_string(source.size()) + " bytes; the limit is " + std::to_string(max_bytes);
    return true;
  }
  r.binding = detect_binding(source);
  r.source_findings = scan_source(source);
  if (!r.source_findings.empty()) {
    r.status = CompileStatus::banned_api;
    r.message = "The source uses banned APIs:";
    for (const auto& f : r.source_findings)
      r.message += "\n  line " + std::to_string(f.line) + ": '" + f.excerpt + "': " + f.reason;
    return true;
  }
  if (std::string problem = binding_problem(source); !problem.empty()) {
    r.status = CompileStatus::abi_error;
    r.message = problem;
    return true;
  }
  return false;
}

/// meta.json of a build: nvcc's outcome, which a cache hit reads back (read_cached).
ordered_json meta_json(const CompileResult& r) {
  return {{"status", r.status == CompileStatus::ok ? "ok" : "compile_error"},
          {"message", r.message},
          {"seconds", r.seconds},
          {"command", r.command}};
}

/// A cached build's outcome, command and log (meta.json, compile.log in `dir`).
void read_cached(const fs::path& dir, const fs::path& cache_dir, CompileResult& r) {
  auto meta = read_json_file(dir / "meta.json");
  r.status = meta.at("status").get<std::string>() == "ok" ? CompileStatus::ok : CompileStatus::compile_error;
  r.message = meta.at("message").get<std::string>();
  r.command = meta.at("command").get<std::vector<std::string>>();
  r.log = without_build_dir(read_file(dir / "compile.log"), cache_dir);
  if (r.status != CompileStatus::ok) r.message = without_build_dir(r.message, cache_dir);
  r.cache_hit = true;
}

/// Moves a finished build folder to `final_dir` in the cache (atomically; a concurrent build of the
/// same key may win), or keeps it where it is when not caching.
void publish(TempDir& work, const fs::path& final_dir, bool use_cache, CompileResult& r) {
  if (use_cache) {
    fs::create_directories(final_dir.parent_path());
    std::error_code ec;
    fs::rename(work.path(), final_dir, ec);  // atomic publish; loses the race gracefully
    if (!ec || fs::exists(final_dir / "meta.json")) r.dir = final_dir;
    else work.keep();
  } else {
    work.keep();
  }
}

}  // namespace

SandboxPolicy Compiler::compile_sandbox_policy(const fs::path& work) const {
  SandboxPolicy p;
  p.enforcement = m_options.sandbox;
  p.read_only = system_paths();
  // The loader's cache and the compiler drivers' alternatives, not the rest of /etc.
  for (const char* f : {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives"})
    p.read_only.push_back(f);
  std::error_code ec;
  p.read_only.push_back(fs::canonical(m_nvcc, ec).parent_path().parent_path().string());
  p.read_only.push_back(m_abi_dir.string());
  p.read_only.push_back(m_pack_include.string());
  p.writable = {fs::absolute(work).string()};
  p.memory_bytes = m_options.memory_bytes;
  return p;
}

ArchTarget arch_target(const std::string& name) {
  if (name == "sm_90a") return {name, "arch=compute_90a,code=sm_90a", "hopper"};
  if (name == "sm_100a") return {name, "arch=compute_100a,code=sm_100a", "blackwell"};
  throw InputError(kLib, "unknown target architecture '" + name + "' (sm_90a, sm_100a)");
}

std::string to_string(CompileStatus s) {
  switch (s) {
    case CompileStatus::ok: return "ok";
    case CompileStatus::compile_error: return "compile_error";
    case CompileStatus::banned_api: return "banned_api";
    case CompileStatus::abi_error: return "abi_error";
    case CompileStatus::timeout: return "timeout";
  }
  return "unknown";
}

Compiler::Compiler(CompileOptions options) : m_options(std::move(options)) {
  (void)arch_target(m_options.arch);
  if (m_options.cache_dir.empty()) m_options.cache_dir = cache_root() / "compile";
  m_nvcc = find_cuda_tool("nvcc");
  m_abi_dir = data_root() / "knowledge" / "abi";
  m_pack_include = data_root() / "knowledge" / arch_target(m_options.arch).pack / "include";
}

const std::string& Compiler::nvcc_version() const {
  if (m_nvcc_version.empty()) {
    if (m_nvcc.empty()) throw EnvironmentError(kLib, "nvcc not found (set PTXBENCH_CUDA_HOME)");
    ProcessSpec spec;
    spec.argv = {m_nvcc, "--version"};
    auto r = run_process(spec, 60);
    if (!r.status.success()) throw EnvironmentError(kLib, "nvcc --version failed: " + r.err.text);
    m_nvcc_version = r.out.text;
  }
  return m_nvcc_version;
}

std::vector<std::string> Compiler::flags(const fs::path& keep_dir) const {
  ArchTarget t = arch_target(m_options.arch);
  std::vector<std::string> f = {"-gencode", t.gencode, "-O3", "-std=c++17", "-lineinfo",
                                "-Xptxas", "-v", "-shared", "-Xcompiler", "-fPIC",
                                "--cudart", "shared", "-I" + m_abi_dir.string(), "-I" + m_pack_include.string()};
  if (!keep_dir.empty()) {
    f.push_back("--keep");
    f.push_back("--keep-dir");
    f.push_back(keep_dir.string());
  }
  return f;
}

void Compiler::analyze(CompileResult& r) const {
  if (fs::exists(r.ptx_file())) r.ptx = analyze_ptx(read_file(r.ptx_file()));
  r.ptxas = parse_ptxas_report(r.log);
  if (fs::exists(r.cubin())) r.kernels = cubin_kernels(read_elf(read_file(r.cubin()), r.cubin().string()));
  if (r.status != CompileStatus::ok || !fs::exists(r.library())) return;
  // Checked on every analysis, cache hits too: the cache keeps nvcc's outcome, not this judgement,
  // so an edited allowlist re-judges cached builds (in the next process: the list is loaded once).
  r.binary = check_candidate_library(read_elf(read_file(r.library()), "candidate.so"),
                                     ImportAllowlist::shared(m_abi_dir / "allowed_imports.json"));
  if (!r.binary.banned.empty()) {
    r.status = CompileStatus::banned_api;
    r.message = describe_banned(r.binary.banned);
  } else if (!r.binary.abi_error.empty()) {
    r.status = CompileStatus::abi_error;
    r.message = r.binary.abi_error;
  }
}

std::string Compiler::cache_key(const std::string& source) const {
  Sha256 h;
  h.field("ptxbench-compile-v1").field(nvcc_version());
  // Include folders enter the key by content, not by where this checkout happens to live.
  for (const auto& f : flags({})) h.field(f.rfind("-I", 0) == 0 ? std::string("-I<dir>") : f);
  // Every header a candidate may include from the ABI folder: ptxbench_abi.h and the TVM-FFI
  // binding's (tvm/ffi/..., dlpack/...), by relative path and content.
  std::vector<fs::path> abi_headers;
  for (const auto& e : fs::recursive_directory_iterator(m_abi_dir))
    if (e.is_regular_file() && e.path().extension() == ".h") abi_headers.push_back(e.path());
  std::sort(abi_headers.begin(), abi_headers.end());
  for (const auto& p : abi_headers) h.field(fs::relative(p, m_abi_dir).string()).field(read_file(p));
  if (fs::is_directory(m_pack_include)) {
    std::vector<fs::path> headers;
    for (const auto& e : fs::recursive_directory_iterator(m_pack_include))
      if (e.is_regular_file()) headers.push_back(e.path());
    std::sort(headers.begin(), headers.end());
    for (const auto& p : headers) h.field(fs::relative(p, m_pack_include).string()).field(read_file(p));
  }
  h.field(source);
  return h.hex_digest();
}

void Compiler::build(const std::string& source, const fs::path& final_dir, CompileResult& r) const {
  fs::create_directories(m_options.cache_dir);
  TempDir work("build", m_options.cache_dir / "tmp");
  fs::path keep = work.path() / "keep";
  fs::create_directories(keep);
  write_file_atomic(work.path() / "candidate.cu", source);
  r.command = {m_nvcc};
  for (const auto& f : flags(keep)) r.command.push_back(f);
  for (const std::string& a : {std::string("-o"), (work.path() / "candidate.so").string(),
                               (work.path() / "candidate.cu").string(),
                               "-L" + (fs::path(m_nvcc).parent_path().parent_path() / "lib64/stubs").string(),
                               std::string("-lcuda")})
    r.command.push_back(a);

  ProcessSpec spec;
  spec.argv = r.command;
  spec.cwd = work.path().string();
  spec.output_cap_bytes = 4 << 20;
  spec.setup = std::make_shared<Sandbox>(compile_sandbox_policy(work.path()), spec.cwd);
  spec.env_overrides = {"HOME=" + spec.cwd, "TMPDIR=/tmp"};
  auto start = std::chrono::steady_clock::now();
  auto run = run_process(spec, m_options.timeout_s);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.log = without_build_dir(run.out.text + run.err.text, m_options.cache_dir);
  r.dir = work.path();
  if (run.timed_out) {
    r.status = CompileStatus::timeout;
    r.message = "nvcc did not finish within " + std::to_string(static_cast<int>(m_options.timeout_s)) + " s";
    return;  // not cached: a timeout can be load, not the source
  }
  if (!run.status.success()) {
    r.status = CompileStatus::compile_error;
    r.message = "nvcc " + run.status.describe() + ":\n" + first_error_lines(r.log, 20);
  } else {
    r.status = CompileStatus::ok;
    r.message = "compiled";
    fs::path ptx = find_with_extension(keep, ".ptx", "\x01");
    fs::path cubin = find_with_extension(keep, ".cubin", "_dlink");
    if (!ptx.empty()) fs::rename(ptx, work.path() / "candidate.ptx");
    if (!cubin.empty()) fs::rename(cubin, work.path() / "candidate.cubin");
  }
  fs::remove_all(keep);
  write_file_atomic(work.path() / "compile.log", r.log);
  write_file_atomic(work.path() / "meta.json", meta_json(r).dump(2));
  publish(work, final_dir, m_options.use_cache, r);
  analyze(r);
}

CompileResult Compiler::compile(const std::string& source) const {
  CompileResult r;
  r.arch = m_options.arch;
  if (refuse_source(source, m_options.max_source_bytes, r)) return r;
  r.nvcc_version = nvcc_version();
  r.key = cache_key(source);
  fs::path final_dir = m_options.cache_dir / r.key.substr(0, 2) / r.key;
  r.dir = final_dir;
  if (m_options.use_cache && fs::exists(final_dir / "meta.json")) {
    read_cached(final_dir, m_options.cache_dir, r);
    analyze(r);
    return r;
  }
  build(source, final_dir, r);
  return r;
}

}  // namespace ptxbench

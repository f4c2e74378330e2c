#include "compile/triton_check.h"

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "common/enum_names.h"
#include "common/error.h"
#include "common/json_fields.h"
#include "common/sha256.h"
#include "common/subprocess.h"
#include "common/text.h"
#include "compile/ptxb_triton_package.h"
#include "sandbox/sandbox.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "triton check";

constexpr EnumName<CandidateLanguage> kLanguages[] = {{CandidateLanguage::cuda, "cuda"},
                                                       {CandidateLanguage::triton, "triton"}};

// Which kind of finding decides the status when several are present: a file that does not parse
// has nothing else to say; a banned use outranks an ABI slip, as on the CUDA side (a banned import
// in the library is reported before a missing ptxb_run).
int kind_rank(const std::string& kind) {
  if (kind == "syntax") return 0;
  if (kind == "banned") return 1;
  if (kind == "abi") return 2;
  return -1;
}

std::string header_for(CompileStatus s) {
  switch (s) {
    case CompileStatus::compile_error: return "The file is not valid Python:";
    case CompileStatus::banned_api: return "The source uses banned APIs:";
    case CompileStatus::abi_error: return "The file does not follow the Triton candidate ABI:";
    default: return "";
  }
}

// Runs a trusted probe command (never candidate code) and returns its stdout, or nullopt.
std::optional<std::string> probe(std::vector<std::string> argv, double timeout_s) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.output_cap_bytes = 64 << 10;
  try {
    ProcessResult r = run_process(spec, timeout_s);
    if (r.timed_out || !r.status.success()) return std::nullopt;
    return r.out.text;
  } catch (const Error&) {
    return std::nullopt;  // not on PATH
  }
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

std::string to_string(CandidateLanguage language) { return enum_name(kLanguages, language); }

CandidateLanguage parse_candidate_language(std::string_view text) {
  return parse_enum(kLanguages, text, "candidate language");
}

CandidateLanguage language_of_path(const fs::path& file) {
  return file.extension() == ".py" ? CandidateLanguage::triton : CandidateLanguage::cuda;
}

// ---------------------------------------------------------------------------------------------
// The report.
// ---------------------------------------------------------------------------------------------

CompileStatus TritonReport::status() const {
  int best = 3;
  for (const auto& f : findings) best = std::min(best, kind_rank(f.kind) < 0 ? 3 : kind_rank(f.kind));
  switch (best) {
    case 0: return CompileStatus::compile_error;
    case 1: return CompileStatus::banned_api;
    case 2: return CompileStatus::abi_error;
    default: return CompileStatus::ok;
  }
}

namespace {
void finding_fields(JsonIo& io, TritonFinding& f) {
  io("rule", f.rule);
  io("kind", f.kind);
  io("line", f.line);
  io("col", f.col);
  io("text", f.text);
  io("reason", f.reason);
}

void entry_fields(JsonIo& io, TritonEntry& e) {
  io("name", e.name);
  io("params", e.params);
  io("varargs", e.varargs);
  io("line", e.line);
}

void report_fields(JsonIo& io, TritonReport& r) {
  io("checker", r.checker);
  io("version", r.version);
  if (io.reading() && (r.checker != kTritonCheckerName || r.version != kTritonCheckerVersion))
    throw JsonFieldError("checker", "expected " + std::string(kTritonCheckerName) + " version " +
                                        std::to_string(kTritonCheckerVersion) + ", got '" + r.checker + "' version " +
                                        std::to_string(r.version));
  io("python", r.python);
  io("ok", r.ok);
  io("reason", r.reason);
  io.nullable("entry", r.entry);
  io("kernels", r.kernels);
  io("launches", r.launches);
  io("imports", r.imports);
  io("findings", r.findings);
  io("truncated", r.truncated);
}
}  // namespace

void to_json(ordered_json& j, const TritonFinding& f) { write_fields(j, f, finding_fields); }

void from_json(const ordered_json& j, TritonFinding& f) {
  read_fields(j, f, finding_fields);
  if (kind_rank(f.kind) < 0)
    throw JsonFieldError("kind", "unknown finding kind '" + f.kind + "' (syntax, banned, abi)");
}

void to_json(ordered_json& j, const TritonEntry& e) { write_fields(j, e, entry_fields); }
void from_json(const ordered_json& j, TritonEntry& e) { read_fields(j, e, entry_fields); }
void to_json(ordered_json& j, const TritonReport& r) { write_fields(j, r, report_fields); }

void from_json(const ordered_json& j, TritonReport& r) {
  read_fields(j, r, report_fields);
  if (r.ok != r.findings.empty()) throw JsonFieldError("ok", "disagrees with the findings");
}

CompileResult triton_compile_result(const TritonReport& report, const std::string& arch) {
  CompileResult r;
  r.arch = arch;
  r.status = report.status();
  r.kernels = report.kernels;
  for (const auto& f : report.findings) r.source_findings.push_back({f.rule, f.reason, f.line, f.text});
  if (r.status == CompileStatus::ok) {
    r.message = "passed the static checks (" + std::to_string(report.kernels.size()) +
                (report.kernels.size() == 1 ? " kernel" : " kernels") +
                "); Triton compiles the kernels at the first call on the GPU";
    return r;
  }
  r.message = header_for(r.status);
  for (const auto& f : report.findings) {
    r.message += "\n  ";
    if (f.line > 0) r.message += "line " + std::to_string(f.line) + ":" + std::to_string(f.col) + ": ";
    if (!f.text.empty()) r.message += "'" + f.text + "': ";
    r.message += f.reason;
  }
  if (report.truncated > 0) r.message += "\n  ... and " + std::to_string(report.truncated) + " more";
  return r;
}

// ---------------------------------------------------------------------------------------------
// The interpreter.
// ---------------------------------------------------------------------------------------------

std::string default_python_command() {
  const char* p = std::getenv("PTXBENCH_PYTHON");
  return p && *p ? p : "python3";
}

const PythonInterpreter& python_interpreter(const std::string& command) {
  static std::mutex mutex;
  static std::map<std::string, PythonInterpreter> known;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(command); it != known.end()) return it->second;
  auto out = probe({command, "-I", "-S", "-c",
                    "import sys\nprint(sys.executable)\nprint(sys.prefix)\nprint(sys.base_prefix)\n"
                    "print('%d.%d.%d' % sys.version_info[:3])\nprint(int(sys.version_info >= (3, 9)))"},
                   60);
  std::vector<std::string> lines = out ? lines_of(*out) : std::vector<std::string>{};
  if (lines.size() != 5)
    throw EnvironmentError(kLib, "cannot run the Python interpreter '" + command + "' (set PTXBENCH_PYTHON)");
  if (lines[4] != "1")
    throw EnvironmentError(kLib, "'" + command + "' is Python " + lines[3] + "; the Triton checker needs 3.9 or later");
  return known[command] = {command, lines[0], lines[1], lines[2], lines[3]};
}

std::optional<std::string> installed_triton_version(const std::string& command) {
  static std::mutex mutex;
  static std::map<std::string, std::optional<std::string>> known;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(command); it != known.end()) return it->second;
  // `import triton` runs Triton's own code (trusted); it needs the interpreter's site-packages.
  auto out = probe({command, "-c", "import triton\nprint(triton.__version__)"}, 120);
  std::optional<std::string> version;
  if (out) {
    std::vector<std::string> lines = lines_of(*out);
    if (!lines.empty() && !lines.back().empty()) version = lines.back();
  }
  return known[command] = version;
}

fs::path default_triton_checker_path() { return ptxb_triton_package_dir() / "triton_check.py"; }

// ---------------------------------------------------------------------------------------------
// The checker.
// ---------------------------------------------------------------------------------------------

TritonChecker::TritonChecker(TritonCheckOptions options) : m_options(std::move(options)) {
  (void)arch_target(m_options.arch);
  if (m_options.checker.empty()) m_options.checker = default_triton_checker_path();
  if (m_options.python.empty()) m_options.python = default_python_command();
  if (!fs::is_regular_file(m_options.checker))
    throw EnvironmentError(kLib, "the checker " + m_options.checker.string() + " is missing");
  m_python = &python_interpreter(m_options.python);
}

SandboxPolicy TritonChecker::sandbox_policy(const fs::path& work) const {
  SandboxPolicy p;
  p.enforcement = m_options.sandbox;
  p.read_only = system_paths();
  for (const std::string& dir : {m_python->prefix, m_python->base_prefix,
                                 fs::path(m_python->executable).parent_path().string()})
    if (!dir.empty()) p.read_only.push_back(dir);
  std::error_code ec;
  p.read_only.push_back(fs::canonical(m_options.checker, ec).parent_path().string());
  p.writable = {fs::absolute(work).string()};
  p.memory_bytes = m_options.memory_bytes;
  return p;
}

TritonChecker::Process TritonChecker::run_checker(const std::string& source) const {
  TempDir work("triton-check");
  fs::path candidate = work.path() / "candidate.py";
  write_file_atomic(candidate, source);
  Process out;
  // -I: no user site, no PYTHON* variables, no script folder on sys.path; -S: no site-packages at
  // all (the checker needs only the standard library); -B: write no bytecode.
  out.command = {m_python->executable, "-I", "-S", "-B", fs::absolute(m_options.checker).string()};
  if (m_options.expected_args) {
    out.command.push_back("--nargs");
    out.command.push_back(std::to_string(*m_options.expected_args));
  }
  out.command.push_back(candidate.string());

  ProcessSpec spec;
  spec.argv = out.command;
  spec.cwd = work.path().string();
  spec.output_cap_bytes = 4 << 20;
  spec.limits.cpu_seconds = static_cast<unsigned long>(std::ceil(m_options.timeout_s)) + 1;
  spec.setup = std::make_shared<Sandbox>(sandbox_policy(work.path()), spec.cwd);
  spec.env_overrides = {"HOME=" + spec.cwd, "TMPDIR=" + spec.cwd};
  ProcessResult r = run_process(spec, m_options.timeout_s);
  out.seconds = r.wall_s;
  // A checker killed for CPU time is the same as one past the wall-clock limit.
  if (r.timed_out || r.status.signal == SIGXCPU) return out;
  if (!r.status.success() || r.out.truncated())
    throw Error(kLib, "the checker " + r.status.describe() + (r.out.truncated() ? " (output over 4 MiB)" : "") +
                          ": " + cut(r.err.text, 2000));
  try {
    JsonChecker json("triton checker output");
    out.report = json.parse(r.out.text).get<TritonReport>();
  } catch (const InputError& e) {
    throw Error(kLib, std::string("unreadable checker report: ") + e.what());
  }
  return out;
}

TritonCheck TritonChecker::run(const std::string& source) const {
  TritonCheck out;
  CompileResult& r = out.result;
  if (source.size() > m_options.max_source_bytes) {
    r.arch = m_options.arch;
    r.status = CompileStatus::compile_error;
    r.message = "source is " + std::to_string(source.size()) + " bytes; the limit is " +
                std::to_string(m_options.max_source_bytes);
    return out;
  }
  Sha256 h;
  h.field("ptxbench-triton-check-v1").field(m_python->version).field(read_file(m_options.checker));
  h.field(m_options.expected_args ? std::to_string(*m_options.expected_args) : "-").field(source);
  std::string key = h.hex_digest();

  Process p = run_checker(source);
  if (p.report) {
    r = triton_compile_result(*p.report, m_options.arch);
  } else {
    r.arch = m_options.arch;
    r.status = CompileStatus::timeout;
    r.message = fmt::format("the Triton checker did not finish within {:g} s", m_options.timeout_s);
  }
  r.key = key;
  r.command = p.command;
  r.seconds = p.seconds;
  out.report = std::move(p.report);
  return out;
}

}  // namespace ptxbench

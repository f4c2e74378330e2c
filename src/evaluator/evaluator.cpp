#include "evaluator/evaluator.h"

#include <dlfcn.h>
#include <link.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <random>
#include <set>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/cuda_tools.h"
#include "common/sha256.h"
#include "common/error.h"
#include "common/text.h"
#include "common/cpu_affinity.h"
#include "gpu/cuda_call.h"
#include "gpu/gpu_info.h"
#include "gpu/random_fill.h"
#include "gpu/trial_timer.h"
#include "sass/ncu_report.h"
#include "sass/pc_counts.h"
#include "runner/runner_exit.h"
#include "sass/sass_listing.h"
#include "timing/roofline.h"
#include "timing/timing_summary.h"
#include "evaluator/baseline_calibration.h"
#include "evaluator/gpu_lock.h"
#include "evaluator/runner_session.h"
#include "evaluator/triton_launch_calibration.h"
#include "sandbox/host_paths.h"
#include "sandbox/sandbox.h"
#include "sass/opcode_counts.h"
#include "timing/call_integrity.h"
#include "timing/profile_binding.h"

#ifndef PTXBENCH_VERSION
#define PTXBENCH_VERSION "dev"
#endif

namespace ptxbench {

/// A runner of ours, set up: the one that times the baseline (`name`: the baseline's, as it
/// reported it), or the one that times the Triton launch probe. Neither ever loads candidate code.
struct TrustedRunner {
  std::unique_ptr<RunnerSession> session;
  std::string name;
};

// What one evaluation carries between stages.
struct Evaluator::Context {
  EvalOptions options;  ///< this evaluation's options (the evaluator's defaults, or the request's)
  Tolerance tolerance;  ///< options.tolerance with the definition's own fields over it
  Verdict v;
  ResolvedWorkload workload;
  WorkloadState* state = nullptr;
  fs::path library;
  std::set<std::string> kernels;  ///< the candidate's own kernel entry points (cubin symbols)
  PcOpcodes listing;              ///< the candidate cubin's instructions by offset (static SASS)
  std::optional<bool> static_mechanism_opcodes;  ///< unset: no static listing (cuobjdump missing)
  bool trusted = false;
  uint64_t seed = 0;
  std::unique_ptr<TempDir> scratch;
  std::unique_ptr<RunnerSession> session;
  fs::path spec_file;
  std::vector<TrialRecord> correctness_trials;
  double slowest_call_us = 0.0;
  /// The trusted runner that times the baseline: started beside the candidate's, never loads one.
  std::future<TrustedRunner> baseline_starting;
  std::optional<TrustedRunner> baseline_runner;
  uint64_t next_baseline_call = 0;
  std::string host_clock_note;                 ///< set when a trial was charged the worker's clock
  std::vector<KernelLaunch> profiled_launches; ///< the profiled call's launches of the candidate's kernels
  bool profiled = false;                       ///< a profile ran (its launches can be compared)
  ProfileEvidence profile_evidence;            ///< what the profile saw, held against the timed calls
  std::optional<std::string> claims_void;      ///< why the profile's claims are not credited
  std::map<std::string, std::vector<MmaShape>> mma_shapes;  ///< per kernel, from the static listing
  uint64_t next_call = 0;                      ///< the runner's call numbers
  bool triton = false;            ///< a Triton candidate: c.library is its shim (docs/triton.md)
  bool build_only = false;        ///< stop after the Triton build pass (build_triton_source)
  bool built = false;             ///< with build_only: every step passed
  std::string triton_source;      ///< its checked source, for the build pass
  std::vector<fs::path> python_dirs;  ///< what its runners must see of the Python that runs it
  /// A Triton candidate's launch-path allowance (docs/triton.md): the calibration's key, and, while
  /// the GPU's calibration wants measurements, the probe's build, scratch folder and runner.
  std::optional<TritonLaunchKey> launch_key;
  std::optional<TritonBuildResult> launch_probe;
  std::unique_ptr<TempDir> probe_scratch;
  std::future<TrustedRunner> probe_starting;
  std::optional<TrustedRunner> probe_runner;

  /// What a runner of this candidate sees read-only: its build folder (and the Python of a Triton one).
  [[nodiscard]] std::vector<fs::path> readable() const {
    std::vector<fs::path> r = {library.parent_path()};
    r.insert(r.end(), python_dirs.begin(), python_dirs.end());
    return r;
  }

  /// Whether the runtime-SASS stage launches a tool (ncu or CUPTI). What runs is a subset of the
  /// cubin: with no wgmma/TMA/tcgen05 opcode in it, none can run, so no profile is needed.
  [[nodiscard]] bool runs_sass_tool() const {
    return options.profile && (static_mechanism_opcodes != false || options.profile_always);
  }

  bool fail(Status s, const std::string& message) {
    v.status = s;
    v.message = message;
    return false;
  }
};

namespace {

constexpr int kSanitizerErrorExit = 86;
// Our own kernels (input fills, references, the probe) carry this in their names; a profile lists
// them beside the candidate's and they are never the candidate's.
constexpr const char* kOurKernels = "ptxb_internal_";

std::string runner_path(const EvalOptions& o) {
  if (!o.runner_path.empty()) return o.runner_path;
  return (executable_dir() / "ptxbench-runner").string();
}

// The runner's one-call command that compute-sanitizer and ncu start. In the sandbox's PID
// namespace the tool is the first process, and its end ends the runner; without a sandbox the
// runner watches this worker, its owner, so that a hang outlives neither (see exit_when_orphaned).
std::vector<std::string> once_command(const EvalOptions& o, const fs::path& library, const fs::path& spec,
                                      uint64_t seed, bool triton) {
  std::vector<std::string> argv = {runner_path(o), "once", "--library", library.string(), "--spec", spec.string(),
                                   "--seed", std::to_string(seed), "--calls", "1", "--device", std::to_string(o.device)};
  if (triton) argv.insert(argv.end(), {"--language", "triton"});
  if (runner_keeps_look()) argv.insert(argv.begin() + 1, "--keep-look");
  if (o.sandbox.enforcement != Enforcement::off) argv.push_back("--no-orphan-watch");
  else argv.insert(argv.end(), {"--owner-pid", std::to_string(getpid())});
  return argv;
}

// A tool stage's process: the tool and the runner in one sandbox that sees the candidate's build.
ProcessSpec tool_spec(const EvalOptions& o, const std::vector<std::string>& argv, const fs::path& scratch,
                      const std::vector<fs::path>& readable, bool keep_root = false) {
  return sandboxed_spec(argv, scratch, 1 << 20, readable, o.sandbox, keep_root);
}

// The folder of the CUDA driver library this process loaded: the runner's TRITON_LIBCUDA_PATH, so
// that Triton never runs ldconfig under the filter.
std::string libcuda_dir() {
  for (const auto& dir : loaded_library_dirs())
    if (fs::exists(fs::path(dir) / "libcuda.so.1")) return dir;
  // Not loaded yet (the CUDA runtime loads the driver at its first call; seen on the H200: the
  // runner's Triton then ran ldconfig under the filter): ask the dynamic loader where it is.
  void* handle = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!handle) return "";
  std::string dir;
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
    dir = fs::path(map->l_name).parent_path().string();
  ::dlclose(handle);
  return dir;
}

// A Triton candidate's tool runs start CPython, torch and Triton under the tool (compute-sanitizer
// intercepts every CUDA call of torch's start-up too): their time limits are this many times the
// CUDA candidate's, so that the start-up never reads as the candidate's hang.
constexpr double kTritonToolTimeFactor = 3.0;

// The static SASS of several cubins (a Triton candidate has one per kernel and specialization).
StaticSass merge_static_sass(const std::vector<StaticSass>& parts) {
  StaticSass out;
  out.available = !parts.empty();
  for (const auto& p : parts) {
    out.available = out.available && p.available;
    if (!p.note.empty()) out.note += (out.note.empty() ? "" : "; ") + p.note;
    for (const auto& [name, counts] : p.per_kernel) add_counts(out.per_kernel[name], counts);
    for (const auto& [name, pcs] : p.pc_opcodes) out.pc_opcodes[name].insert(pcs.begin(), pcs.end());
    for (const auto& [name, shapes] : p.mma_shapes) {
      auto& into = out.mma_shapes[name];
      into.insert(into.end(), shapes.begin(), shapes.end());
    }
    add_counts(out.total, p.total);
  }
  out.mechanisms = mechanisms_from(out.total);
  return out;
}

// What the sandbox says about a tool run whose runner failed: its memory limit, or a system call
// it denied (the runner names it on stderr). Empty: neither.
std::string sandbox_finding(const ProcessSpec& spec, const ProcessResult& r) {
  auto* sandbox = dynamic_cast<const Sandbox*>(spec.setup.get());
  if (sandbox && sandbox->out_of_memory())
    return "the candidate exceeded its host-memory limit of " + std::to_string(sandbox->cgroup()->limit_bytes() >> 30) +
           " GiB and was killed";
  std::string err = r.err.text + r.out.text;
  auto at = err.find("the sandbox denied system calls:");
  if (at != std::string::npos) return err.substr(at, err.find('\n', at) - at);
  return "";
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// Guard-band writes are memory errors; a modified input is a broken contract.
Status status_for_check(const OutputCheck& check) {
  if (check.has(OutputProblemKind::guard_written)) return Status::SANITIZER_ERROR;
  if (!check.problems.empty()) return Status::RUNTIME_ERROR;
  return Status::INCORRECT_NUMERICAL;
}

std::string check_message(const OutputCheck& check, int trial, TrialPhase phase) {
  if (!check.problems.empty()) return check.problems.front().message;
  for (const auto& t : check.tensors)
    if (!t.passed)
      return "output " + t.name + " differs from the reference in " + std::to_string(t.mismatches) + " of " +
             std::to_string(t.elements) + " elements" +
             (t.beyond_outlier_bound ? ", " + std::to_string(t.beyond_outlier_bound) + " of them beyond the outlier bound" : "") +
             " (" + to_string(phase) + " trial " + std::to_string(trial) + ")";
  return "outputs differ from the reference";
}

GpuRecord gpu_record(const GpuInfo& g) {
  std::string cc = std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor);
  return {g.device, g.name, cc, g.sm_count, g.l2_bytes, g.global_mem_bytes, g.driver_version, g.runtime_version};
}

// The physical GPU a calibration belongs to (its model and PCI bus id): the baseline's and the
// Triton launch path's are kept per GPU (evaluator/calibration_store.h).
std::string calibration_gpu_key(const std::optional<Environment>& env, int device) {
  char bus[32] = {0};
  cudaDeviceGetPCIBusId(bus, sizeof bus, device);
  return (env ? env->gpu.name : "gpu") + "@" + bus;
}

// The seed of one call's fresh inputs; none when they are off (a diagnostic: the trial keeps its inputs).
std::optional<uint64_t> call_seed(const TimingPolicy& policy, uint64_t trial_seed, uint64_t n) {
  if (!policy.fresh_inputs) return std::nullopt;
  return derive_seed(trial_seed, n);
}

// Starts a runner of ours beside the candidate's and sets it up in the background (the baseline's
// builds its cuDNN engines, the launch probe's starts Python): the start overlaps the correctness
// stage. Called on the evaluation's thread: a runner dies with the thread that started it.
std::future<TrustedRunner> start_trusted_runner(const RunnerLaunch& launch, SetupRequest setup, std::vector<Fd> fds,
                                                double timeout_s, std::string what) {
  auto start = [session = std::make_unique<RunnerSession>(launch), setup = std::move(setup), fds = std::move(fds), timeout_s,
                what = std::move(what)]() mutable {
    session->wait_ready(timeout_s);
    RunnerReply reply = session->setup(setup, fds, timeout_s);
    if (!reply.ok()) throw EnvironmentError("runner", "the trusted runner could not set up " + what + ": " + reply.failure->error);
    return TrustedRunner{std::move(session), reply.baseline};
  };
  return std::async(std::launch::async, std::move(start));
}

}  // namespace

Evaluator::Evaluator(const Catalog& catalog, EvalOptions options)
    : m_catalog(catalog), m_options(std::move(options)), m_compiler(m_options.compile) {}

Evaluator::~Evaluator() = default;

namespace {
// Device memory a workload state holds: inputs, candidate outputs, fp32 references, baseline
// outputs, plus an allowance for the operator's and the baseline's scratch (attention: ~1.4 GiB).
uint64_t state_bytes(const ResolvedWorkload& w) {
  uint64_t bytes = uint64_t{3} << 29;
  for (const auto& t : w.tensors)
    bytes += t.is_output ? 2 * t.bytes() + 4 * static_cast<uint64_t>(t.numel()) : t.bytes();
  return bytes;
}
}  // namespace

WorkloadState& Evaluator::state_for(const ResolvedWorkload& w) {
  std::string key = w.definition->name + "/" + w.workload.uuid;
  if (!m_budget) {
    size_t free_b = 0, total_b = 0;
    PTXB_CUDA_CALL(cudaMemGetInfo(&free_b, &total_b));
    m_budget = std::make_unique<StateBudget>(static_cast<uint64_t>(m_options.state_budget_fraction * static_cast<double>(total_b)));
  }
  for (const auto& victim : m_budget->admit(key, state_bytes(w))) m_states.erase(victim);
  auto it = m_states.find(key);
  if (it != m_states.end()) return *it->second;
  auto state = std::make_unique<WorkloadState>(w, make_operator(w.definition->op_type));
  return *(m_states[key] = std::move(state));
}

void Evaluator::begin(Context& c, const std::string& definition, const std::string& workload,
                      const std::optional<EvalOptions>& options) const {
  c.options = options ? *options : m_options;
  const Definition& def = m_catalog.definition(definition);
  c.tolerance = c.options.tolerance.for_definition(def);
  const Workload& w = workload.empty() ? m_catalog.default_workload(definition) : m_catalog.find_workload(definition, workload);
  (void)make_operator(def.op_type);  // an unsupported op is the caller's error, not a verdict
  c.workload = resolve_workload(def, w);
  c.v.started_at = utc_now_iso8601();
  c.v.definition = def.name;
  c.v.workload_uuid = w.uuid;
  c.v.workload_label = w.label(def);
  c.v.arch = m_options.compile.arch;
}

Verdict Evaluator::evaluate_source(const std::string& definition, const std::string& workload,
                                   const std::string& source, const std::optional<EvalOptions>& options,
                                   CandidateLanguage language) {
  auto start = std::chrono::steady_clock::now();
  Context c;
  begin(c, definition, workload, options);
  if (language == CandidateLanguage::triton) {
    if (!check_triton(c, source)) {
      c.v.wall_seconds = seconds_since(start);
      return c.v;
    }
    Verdict v = run_stages(c);
    v.wall_seconds = seconds_since(start);
    return v;
  }

  CompileResult compiled = m_compiler.compile(source);
  c.v.stages.compile = compile_section(compiled);
  c.v.stages.compile->wall_s = seconds_since(start);
  if (!compiled.ok()) {
    switch (compiled.status) {
      case CompileStatus::banned_api: c.fail(Status::BANNED_API, compiled.message); break;
      case CompileStatus::abi_error: c.fail(Status::ABI_ERROR, compiled.message); break;
      case CompileStatus::timeout: c.fail(Status::COMPILE_ERROR, compiled.message); break;
      default: c.fail(Status::COMPILE_ERROR, "the candidate did not compile"); break;
    }
    c.v.wall_seconds = seconds_since(start);
    return c.v;
  }
  auto sass_start = std::chrono::steady_clock::now();
  StaticSass sass = disassemble_cubin(compiled.cubin().string());
  c.v.stages.static_sass = static_sass_section(sass);
  c.v.stages.static_sass->wall_s = seconds_since(sass_start);
  c.listing = std::move(sass.pc_opcodes);
  c.mma_shapes = std::move(sass.mma_shapes);
  if (sass.available) c.static_mechanism_opcodes = has_mechanism_opcodes(sass.total);
  c.library = compiled.library();
  c.kernels.insert(compiled.kernels.begin(), compiled.kernels.end());
  Verdict v = run_stages(c);
  v.wall_seconds = seconds_since(start);
  return v;
}

bool Evaluator::check_triton(Context& c, const std::string& source) {
  auto start = std::chrono::steady_clock::now();
  TritonCheckOptions o;
  o.arch = m_options.compile.arch;
  o.expected_args = static_cast<int>(c.workload.tensors.size());
  o.sandbox = m_options.compile.sandbox;
  CompileResult checked;
  try {
    checked = TritonChecker(o).check(source);
  } catch (const std::exception& e) {  // the checker or its interpreter: ours
    c.v.stages.compile.emplace().message = e.what();
    return c.fail(Status::INFRA_ERROR, std::string("the Triton checker failed: ") + e.what());
  }
  c.v.stages.compile = compile_section(checked);
  c.v.stages.compile->wall_s = seconds_since(start);
  switch (checked.status) {
    case CompileStatus::ok: break;
    case CompileStatus::banned_api: return c.fail(Status::BANNED_API, checked.message);
    case CompileStatus::abi_error: return c.fail(Status::ABI_ERROR, checked.message);
    default: return c.fail(Status::COMPILE_ERROR, checked.message);
  }
  c.triton = true;
  c.triton_source = source;
  return true;
}

bool Evaluator::stage_triton_build(Context& c) {
  auto start = std::chrono::steady_clock::now();
  if (!m_triton_builder) {
    TritonBuildOptions o;
    o.libcuda_dir = libcuda_dir();
    o.device = m_options.device;
    // The build pass runs the candidate's host code (import, run) with the GPU visible: in the
    // runner's kind of sandbox without the system-call filter (Triton starts ptxas and the C
    // compiler), writing only its artifact folder and its scratch (docs/sandbox.md).
    o.sandboxed = [sandbox = m_options.sandbox](const std::vector<std::string>& argv, const fs::path& work,
                                                const std::vector<fs::path>& readable, const std::vector<fs::path>& writable) {
      ProcessSpec spec = sandboxed_spec(argv, work, 1 << 20, readable, sandbox);
      SandboxPolicy p = runner_sandbox_policy(work, readable, sandbox);
      for (const auto& w : writable) p.writable.push_back(fs::absolute(w).string());
      spec.setup = std::make_shared<Sandbox>(p, spec.cwd);
      return spec;
    };
    m_triton_builder = std::make_unique<TritonBuilder>(o);  // EnvironmentError: no torch/Triton here
  }
  const PythonRuntime& rt = m_triton_builder->runtime();
  for (const auto& d : rt.readable_dirs()) c.python_dirs.emplace_back(d);
  if (c.v.environment) {
    c.v.environment->language = "triton";
    c.v.environment->python = rt.version;
    c.v.environment->torch = rt.torch;
    c.v.environment->triton = rt.triton;
  }
  ordered_json specs = ordered_json::array();
  for (const auto& t : c.workload.tensors) specs.push_back(to_json(t));
  TritonBuildResult b = m_triton_builder->build(c.triton_source, ordered_json{{"tensors", specs}});
  CompileSection& compile = *c.v.stages.compile;
  compile.wall_s = compile.wall_s.value_or(0.0) + seconds_since(start);
  switch (b.status) {
    case TritonBuildStatus::ok: break;
    case TritonBuildStatus::compile_error:
      compile.status = CompileStatus::compile_error;
      compile.message = b.message;
      return c.fail(Status::COMPILE_ERROR, b.message);
    case TritonBuildStatus::timeout:
      return c.fail(Status::TIMEOUT, b.message);
    case TritonBuildStatus::runtime_error:
      return c.fail(Status::RUNTIME_ERROR, b.message);
  }
  for (const auto& name : b.kernel_names())
    if (std::string why = suspicious_triton_kernel_name(name); !why.empty()) {
      compile.status = CompileStatus::abi_error;
      compile.message = why;
      return c.fail(Status::ABI_ERROR, why);
    }
  compile.message += "; the build pass compiled " + std::to_string(b.kernels.size()) + " kernel" +
                     (b.kernels.size() == 1 ? "" : "s") + (b.cache_hit ? " (cached)" : "") + " with Triton " + b.triton;
  // Static SASS of every cubin Triton built for the candidate; its kernels are those names.
  auto sass_start = std::chrono::steady_clock::now();
  std::vector<StaticSass> parts;
  for (const auto& cubin : b.cubins()) parts.push_back(disassemble_cubin(cubin.string()));
  StaticSass sass = merge_static_sass(parts);
  c.v.stages.static_sass = static_sass_section(sass);
  c.v.stages.static_sass->wall_s = seconds_since(sass_start);
  c.listing = std::move(sass.pc_opcodes);
  c.mma_shapes = std::move(sass.mma_shapes);
  if (sass.available) c.static_mechanism_opcodes = has_mechanism_opcodes(sass.total);
  c.library = b.library();
  for (const auto& name : b.kernel_names()) c.kernels.insert(name);
  if (!c.build_only) plan_triton_launch(c, ordered_json{{"tensors", specs}});
  return true;
}

// Whether this Triton evaluation times the launch probe (docs/triton.md, "What the timing means for
// a Triton candidate"): only while this GPU's calibration for this Python, torch, Triton, driver
// and argument count holds fewer measurements than the policy wants. The probe is built like a
// candidate (the build pass on the workload's tensors; cached by content after the first time).
void Evaluator::plan_triton_launch(Context& c, const ordered_json& tensors) {
  const IntegrityPolicy& policy = c.options.integrity;
  if (!c.options.measure_time || policy.triton_launch_allowance_max_us <= 0 || !c.v.environment) return;
  const PythonRuntime& rt = m_triton_builder->runtime();
  const std::string probe = triton_launch_probe_source();
  c.launch_key = TritonLaunchKey{rt.version, rt.torch.value_or("?"), rt.triton.value_or("?"),
                                 c.v.environment->gpu.cuda_driver, static_cast<int>(c.workload.tensors.size()),
                                 Sha256().update(probe).hex_digest()};
  TritonLaunchCalibration calibration(calibration_gpu_key(c.v.environment, c.options.device));
  if (!wants_launch_measurement(calibration.recorded(*c.launch_key).size(), policy.triton_launch_calibrations)) return;
  TritonBuildResult b = m_triton_builder->build(probe, tensors);
  if (!b.ok()) throw EnvironmentError("timing", "the Triton launch probe did not build: " + b.message);
  c.launch_probe = std::move(b);
}

TritonBuildOnly Evaluator::build_triton_source(const std::string& definition, const std::string& workload,
                                               const std::string& source) {
  auto start = std::chrono::steady_clock::now();
  Context c;
  begin(c, definition, workload, std::nullopt);
  c.build_only = true;
  TritonBuildOnly out{false, check_triton(c, source) ? run_stages(c) : c.v};
  out.built = c.built;
  out.verdict.wall_seconds = seconds_since(start);
  return out;
}

Verdict Evaluator::evaluate_trusted_library(const std::string& definition, const std::string& workload,
                                            const fs::path& library) {
  auto start = std::chrono::steady_clock::now();
  Context c;
  begin(c, definition, workload, std::nullopt);
  CompileSection& compile = c.v.stages.compile.emplace();
  compile.status = CompileStatus::ok;
  compile.message = "trusted prebuilt library " + library.string();
  c.library = fs::absolute(library);
  c.trusted = true;
  Verdict v = run_stages(c);
  v.wall_seconds = seconds_since(start);
  return v;
}

Verdict Evaluator::run_stages(Context& c) {
  c.seed = c.options.seed ? *c.options.seed : std::random_device{}() * 0x100000001ull + std::random_device{}();
  c.v.seed = c.seed;
  try {
    if (cuda_device_count() <= c.options.device) {
      c.fail(Status::INFRA_ERROR, "no CUDA device " + std::to_string(c.options.device) + " on this host");
      return c.v;
    }
    PTXB_CUDA_CALL(cudaSetDevice(c.options.device));
    GpuInfo gpu = query_gpu(c.options.device);
    c.v.environment = Environment{gpu_record(gpu), PTXBENCH_VERSION, m_compiler.nvcc_version(), c.options.record()};
    if (gpu.arch() != m_options.compile.arch) {
      c.fail(Status::INFRA_ERROR, "this host's GPU is " + gpu.arch() + ", the evaluation targets " + m_options.compile.arch);
      return c.v;
    }
    // Not under /tmp: the runner's sandbox mounts a private /tmp over it.
    c.scratch = std::make_unique<TempDir>("ptxbench-eval", c.options.scratch_root.empty() ? cache_root() / "scratch"
                                                                                          : c.options.scratch_root);
    c.spec_file = c.scratch->path() / "tensors.json";
    ordered_json specs = ordered_json::array();
    for (const auto& t : c.workload.tensors) specs.push_back(to_json(t));
    write_file_atomic(c.spec_file, ordered_json{{"tensors", specs}}.dump());
    // Untimed stages share the GPU with other workers' untimed stages; timing has it alone.
    // Shared holds are taken stage by stage, so a waiting timing stage gets the GPU between them.
    GpuLock gpu_lock(c.options.gpu_lock);
    if (c.triton) {  // the build pass runs the candidate on the GPU: untimed, shared
      GpuLock::Hold shared = gpu_lock.acquire(GpuLock::Mode::shared);
      if (!stage_triton_build(c)) return c.v;
      if (c.build_only) {
        c.built = true;
        c.v.message = "built: the static checks and the build pass passed; not evaluated";
        return c.v;
      }
    }
    // Each stage's wall time, and its wait for the locks, go into its section (where the
    // service's time goes).
    // `slot` is the stage's section in the verdict (&StageSections::sanitize, ...).
    auto timed = [this, &c, &gpu_lock](auto slot, bool (Evaluator::*stage)(Context&), double lock_wait_s) {
      auto t0 = std::chrono::steady_clock::now();
      bool passed = (this->*stage)(c);
      if (auto& section = c.v.stages.*slot) {
        section->wall_s = seconds_since(t0);
        if (gpu_lock.enabled()) section->gpu_lock_wait_s = lock_wait_s;
      }
      return passed;
    };
    // Runtime SASS counting runs one at a time per GPU: ncu's own cross-process lock lives in a
    // /tmp that each runner's filesystem view makes private, and concurrent ncu sessions failed on
    // the H200. CUPTI counting keeps the same turnstile. Taken only when a tool will really run:
    // waiting behind other workers' profiles for a stage that is skipped cost 10-18 s each.
    GpuLock profiler_lock(c.options.gpu_lock.empty() ? "" : c.options.gpu_lock + ".profiler");
    auto untimed = [&](auto slot, bool (Evaluator::*stage)(Context&)) {
      using Section = typename std::remove_reference_t<decltype(c.v.stages.*slot)>::value_type;
      auto wait_start = std::chrono::steady_clock::now();
      GpuLock::Hold profiler;
      if (stage == &Evaluator::stage_runtime_sass && c.runs_sass_tool())
        profiler = profiler_lock.acquire(GpuLock::Mode::exclusive);
      GpuLock::Hold shared = gpu_lock.acquire(GpuLock::Mode::shared);
      double waited = seconds_since(wait_start);
      if (!c.state) c.state = &state_for(c.workload);
      bool passed = timed(slot, stage, waited);
      if (passed || c.v.status != Status::TIMEOUT || !gpu_lock.enabled()) return passed;
      // A time-out while other workers shared the GPU may be theirs, not the candidate's: the
      // verdict is given only by a second attempt that has the GPU alone (a hang hangs there too).
      SharedTimeoutAttempt<Section> shared_attempt{c.v.message, nullptr, std::nullopt};
      if (const auto& first = c.v.stages.*slot) shared_attempt.stage = std::make_shared<const Section>(*first);
      if (c.session) shared_attempt.runner_output = cut(c.session->finish(), 2000);  // killed at the time-out
      shared = GpuLock::Hold{};
      (c.v.stages.*slot).reset();
      c.v.status = Verdict{}.status;
      c.v.message.clear();
      c.session.reset();
      c.correctness_trials.clear();
      wait_start = std::chrono::steady_clock::now();
      GpuLock::Hold alone = gpu_lock.acquire(GpuLock::Mode::exclusive);
      passed = timed(slot, stage, seconds_since(wait_start));
      auto& second = c.v.stages.*slot;
      if (!second) second.emplace();  // the second attempt recorded nothing: the section holds only this
      second->gpu_alone_after_shared_timeout = std::move(shared_attempt);
      return passed;
    };
    bool ok = untimed(&StageSections::sanitize, &Evaluator::stage_sanitize) &&
              untimed(&StageSections::correctness, &Evaluator::stage_correctness) &&
              untimed(&StageSections::runtime_sass, &Evaluator::stage_runtime_sass);
    if (ok) {
      auto wait_start = std::chrono::steady_clock::now();
      GpuLock::Hold exclusive = gpu_lock.acquire(GpuLock::Mode::exclusive);
      ok = timed(&StageSections::timing, &Evaluator::stage_timing, seconds_since(wait_start));
    }
    if (c.session) {
      c.v.stages.runner_output = cut(c.session->finish(), 4000);
      c.session.reset();
    }
    if (!ok) return c.v;
    c.v.status = Status::PASSED;
    c.v.message = "correct on every trial";
    if (!c.host_clock_note.empty()) c.v.message += "; " + c.host_clock_note;
    if (c.claims_void) {
      // What the profile saw stays in its section; nothing of it is credited.
      c.v.runtime_mechanisms = Mechanisms{};
      c.v.tensor_core_coverage = 0.0;
      c.v.message += "; the target-instruction claims are void: " + *c.claims_void;
    }
    c.v.target_instruction_correct =
        c.v.runtime_mechanisms && target_instruction_met(c.v.arch, *c.v.runtime_mechanisms);
    c.v.target_instruction_strict = c.v.tensor_core_coverage && *c.v.tensor_core_coverage >= kStrictCoverage;
  } catch (const std::exception& e) {
    // Anything thrown here is ours (tools, driver, our own CUDA calls), never the candidate's.
    c.v.status = Status::INFRA_ERROR;
    c.v.message = std::string("evaluation infrastructure failed: ") + e.what();
  }
  return c.v;
}

namespace {

struct Finding {
  Status status;
  std::string message;
};

// A runner's failure as a verdict: each is the candidate's doing (ours are EnvironmentErrors).
Finding runner_fault_finding(const RunnerFault& f, const std::string& when, double limit_s) {
  switch (f.kind) {
    case RunnerFault::Kind::timeout:
      return {Status::TIMEOUT, "a call did not finish within " + std::to_string(static_cast<int>(limit_s)) + " s " + when +
                                   "; the runner was killed"};
    case RunnerFault::Kind::out_of_memory:
      return {Status::RUNTIME_ERROR, std::string("the runner was killed ") + when + ": " + f.what()};
    case RunnerFault::Kind::protocol:
      return {Status::RUNTIME_ERROR, "the runner's replies broke the protocol " + when + ": " + f.what()};
    case RunnerFault::Kind::died: break;
  }
  return {Status::RUNTIME_ERROR, "the runner died " + when + ": " + f.what()};
}

// System calls the sandbox denied make the verdict, whatever the call did after them.
std::optional<Finding> denied_calls(const RunnerReply& r) {
  if (r.violations.empty()) return std::nullopt;
  return Finding{Status::RUNTIME_ERROR, "the candidate made system calls the sandbox forbids (denied): " + joined(r.violations)};
}

}  // namespace

bool Evaluator::stage_sanitize(Context& c) {
  SanitizeSection section;
  section.tool = "compute-sanitizer --tool memcheck";
  if (!c.options.sanitize) {
    section.skipped = "disabled by option";
    c.v.stages.sanitize = section;
    return true;
  }
  std::string tool = find_cuda_tool("compute-sanitizer");
  if (tool.empty()) throw EnvironmentError("sanitize", "compute-sanitizer not found");
  // The runs (own seeds) go side by side: the GPU is shared with other untimed work anyway, and
  // an evaluation waits for one run's time instead of the sum. Results are read in run order.
  std::vector<uint64_t> seeds;
  std::vector<ProcessSpec> specs;
  std::vector<std::future<ProcessResult>> runs;
  for (int run = 0; run < c.options.sanitize_runs; ++run) {
    uint64_t seed = derive_seed(c.seed, 100 + static_cast<uint64_t>(run));
    std::vector<std::string> argv = {tool, "--tool", "memcheck", "--error-exitcode", std::to_string(kSanitizerErrorExit),
                                     "--print-limit", "20", "--show-backtrace", "no",
                                     // A failed CUDA call is the candidate's runtime error, which the runner
                                     // reports (an exit in a CUDA_CHECK macro included); memcheck judges memory.
                                     "--report-api-errors", "no"};
    std::vector<std::string> once = once_command(c.options, c.library, c.spec_file, seed, c.triton);
    argv.insert(argv.end(), once.begin(), once.end());
    specs.push_back(tool_spec(c.options, argv, c.scratch->path(), c.readable()));
    double limit = c.options.sanitize_timeout_s * (c.triton ? kTritonToolTimeFactor : 1.0);
    seeds.push_back(seed);
    runs.push_back(std::async(std::launch::async, [spec = specs.back(), limit] { return run_process(spec, limit); }));
  }
  std::vector<ProcessResult> results;
  for (auto& r : runs) results.push_back(r.get());
  kill_processes_mentioning(c.scratch->path().string());
  for (std::size_t run = 0; run < results.size(); ++run) {
    const ProcessResult& r = results[run];
    section.runs.push_back({seeds[run], r.status.describe(), r.timed_out, r.wall_s});
  }
  for (std::size_t run = 0; run < results.size(); ++run) {
    const ProcessResult& r = results[run];
    std::string report = r.out.text + r.err.text;
    if (r.timed_out) {
      section.passed = false;
      c.v.stages.sanitize = section;
      return c.fail(Status::TIMEOUT, "the candidate did not finish within " +
                                         std::to_string(static_cast<int>(c.options.sanitize_timeout_s *
                                                                         (c.triton ? kTritonToolTimeFactor : 1.0))) +
                                         " s under compute-sanitizer memcheck (a hang?)");
    }
    if (!r.status.success()) {
      section.passed = false;
      section.report = cut(report, 8000);
      c.v.stages.sanitize = section;
      if (r.status.signal == 0 && r.status.exit_code == kSanitizerErrorExit)
        return c.fail(Status::SANITIZER_ERROR, "compute-sanitizer memcheck found memory errors");
      std::string finding = sandbox_finding(specs[run], r);
      if (!finding.empty()) return c.fail(Status::RUNTIME_ERROR, finding + " (under compute-sanitizer)");
      return c.fail(Status::RUNTIME_ERROR, "the candidate failed under compute-sanitizer: runner " + r.status.describe() +
                                               "\n" + cut(r.err.text, 1500));
    }
  }
  section.passed = true;
  c.v.stages.sanitize = section;
  return true;
}

bool Evaluator::stage_correctness(Context& c) {
  auto record = [&](bool passed) {
    CorrectnessSection& s = c.v.stages.correctness.emplace();
    s.tolerance = c.tolerance;
    s.trials_planned = c.options.correctness_trials;
    s.passed = passed;
    s.trials = c.correctness_trials;
  };
  auto fail_with = [&](const Finding& f) {
    record(false);
    return c.fail(f.status, f.message);
  };
  RunnerLaunch launch{runner_path(c.options), c.options.device, c.scratch->path(), c.readable()};
  launch.sandbox = c.options.sandbox;
  if (!m_cpu_affinity) {  // before any runner starts: they inherit it
    char bus[32] = {};
    PTXB_CUDA_CALL(cudaDeviceGetPCIBusId(bus, sizeof bus, c.options.device));
    m_cpu_affinity = pin_to_local_cpus(bus);
  }
  if (c.v.environment) c.v.environment->cpu_affinity = *m_cpu_affinity;
  if (c.options.measure_time) {
    RunnerLaunch trusted = launch;
    trusted.readable.clear();
    baseline_starting(c, trusted);
    if (c.launch_probe) launch_probe_starting(c, launch);
  }
  c.session = std::make_unique<RunnerSession>(launch, c.options.startup_timeout_s);
  if (c.v.environment) c.v.environment->sandbox = to_json(c.session->sandbox_report());
  try {
    WorkloadState::SharedTensors shared = c.state->shared_tensors();
    SetupRequest setup{c.library.string(), shared.tensors};
    setup.triton = c.triton;
    share_flush_buffer(c, setup, shared.fds);
    RunnerReply ready = c.session->setup(setup, shared.fds, c.options.startup_timeout_s);
    if (c.v.environment && c.v.environment->sandbox && !ready.proc_view.empty())
      (*c.v.environment->sandbox)["proc_view"] = ready.proc_view;
    if (auto d = denied_calls(ready)) return fail_with(*d);
    if (!ready.ok()) return fail_with({Status::RUNTIME_ERROR, "the runner could not set up the candidate: " + ready.failure->error});
    for (int trial = 1; trial <= c.options.correctness_trials; ++trial) {
      uint64_t seed = derive_seed(c.seed, 1000 + static_cast<uint64_t>(trial));
      c.state->prepare_trial(seed);
      c.state->poison_outputs();
      auto t0 = std::chrono::steady_clock::now();
      RunnerReply reply = c.session->request(call_request(c.next_call++), c.options.call_timeout_s);
      const double host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (auto d = denied_calls(reply)) return fail_with(*d);
      if (!reply.ok()) {
        c.correctness_trials.push_back({trial, TrialPhase::correctness, seed, false, std::nullopt, reply.failure->error});
        return fail_with({Status::RUNTIME_ERROR, "the candidate's call failed: " + reply.failure->error});
      }
      c.slowest_call_us = std::max(c.slowest_call_us, host_us);  // our clock: the runner's own is not trusted
      OutputCheck check = c.state->check_candidate(c.tolerance, c.options.compare_threads);
      c.correctness_trials.push_back(trial_record(trial, TrialPhase::correctness, seed, check));
      if (!check.passed()) return fail_with({status_for_check(check), check_message(check, trial, TrialPhase::correctness)});
    }
    // Device work that belongs to no call (launched at load time, say) is work no time accounts for.
    RunnerReply activity = c.session->request(spans_request(), c.options.call_timeout_s);
    if (!activity.spans) return fail_with({Status::RUNTIME_ERROR, "the runner's reply to a spans request carried none"});
    if (!activity.spans->stray.empty())
      return fail_with({Status::TIMING_ANOMALY, "device work ran outside every call: " + activity.spans->stray.front()});
  } catch (const RunnerFault& f) {
    return fail_with(runner_fault_finding(f, "during a correctness call", c.options.call_timeout_s));
  }
  record(true);
  return true;
}

// With TimingPolicy::runner_l2_flush (experimental, off), both runners overwrite one shared buffer
// of 2 × L2 in their own context before every call (docs/verdict.md, "Timing method"): the worker's own flush, from its process, guarantees cold
// inputs whatever a runner does, but leaves L2 clean by the time the runner's call starts, which
// favours some kernels (cuBLASLt by 1.3% on the H200) over others; a call of an application starts
// after a kernel that left dirty lines. One buffer for both, so both start with the same lines.
void Evaluator::share_flush_buffer(const Context& c, SetupRequest& setup, std::vector<Fd>& fds) {
  if (!c.options.measure_time || !c.options.timing.runner_l2_flush || c.options.timing.l2_flush_factor <= 0) return;
  const std::size_t bytes = L2Flusher::bytes_for(c.options.timing.l2_flush_factor);
  if (!m_runner_flush || m_runner_flush->bytes() < bytes)
    m_runner_flush = std::make_unique<SharedAllocation>(bytes, c.options.device);
  setup.flush_fd_index = static_cast<int>(fds.size());
  setup.flush_bytes = m_runner_flush->bytes();
  fds.push_back(m_runner_flush->export_fd());
}

// The baseline is timed by a second session runner that is ours (docs/verdict.md, "Timing
// method"): same sandbox, same filter, same shared memory and the same per-call preparation as
// the candidate's runner, and no candidate code ever loaded. So both sides of a speedup are timed
// by the same kind of process (an A/A comparison reads 1.00), a candidate cannot touch the
// baseline's calls, and the baseline's calls calibrate the host bound: what an honest call costs
// the worker beyond its span depends on what the worker ran on the GPU just before (the GPU
// switches from the worker's context to a runner's: ~150 µs on the H200, RunnerSandbox.TheHostGap...),
// a little on the call's length, and drifts between evaluations by tens of µs. Its setup (cuDNN
// builds its engines) overlaps the correctness stage.
void Evaluator::baseline_starting(Context& c, const RunnerLaunch& launch) {
  WorkloadState::SharedTensors shared = c.state->shared_tensors(WorkloadState::Side::baseline);
  SetupRequest setup{"", shared.tensors,
                     BaselineSetup{c.workload.definition->json_text, c.workload.workload.uuid, c.workload.workload.axes}};
  share_flush_buffer(c, setup, shared.fds);
  c.baseline_starting = start_trusted_runner(launch, std::move(setup), std::move(shared.fds), c.options.startup_timeout_s,
                                             "the baseline");
}

// The Triton launch probe's runner (docs/triton.md): the candidate's kind of runner (same sandbox,
// same filter, the shim, the candidate's buffers) loading the probe's build instead of the
// candidate's, with a scratch folder of its own. It never loads candidate code.
void Evaluator::launch_probe_starting(Context& c, RunnerLaunch launch) {
  if (!c.probe_scratch) c.probe_scratch = std::make_unique<TempDir>("ptxbench-probe", c.scratch->path().parent_path());
  launch.scratch = c.probe_scratch->path();
  launch.readable = {c.launch_probe->dir};
  launch.readable.insert(launch.readable.end(), c.python_dirs.begin(), c.python_dirs.end());
  WorkloadState::SharedTensors shared = c.state->shared_tensors();
  SetupRequest setup{c.launch_probe->library().string(), shared.tensors};
  setup.triton = true;
  share_flush_buffer(c, setup, shared.fds);
  c.probe_starting = start_trusted_runner(launch, std::move(setup), std::move(shared.fds), c.options.startup_timeout_s,
                                          "the Triton launch probe");
}

bool Evaluator::stage_runtime_sass(Context& c) {
  if (!c.options.profile) {
    RuntimeSassSection& s = c.v.stages.runtime_sass.emplace();
    s.available = false;
    s.note = "disabled by option";
    return true;
  }
  if (!c.runs_sass_tool()) {
    // What runs is a subset of the cubin: with no wgmma/TMA/tcgen05 opcode in it, none can run.
    // Kernels from elsewhere are still caught by the timing stage's kernel-origin check.
    RuntimeSass none;
    none.available = true;
    none.source = "static SASS: the cubin has no wgmma, TMA or tcgen05 opcode, so no profile was needed";
    RuntimeSassSection section = runtime_sass_section(none);
    CoverageRecord& cov = section.coverage.emplace();
    cov.available = true;
    cov.workload_flops = c.state->op().flops(c.workload);
    c.v.tensor_core_coverage = 0.0;
    c.v.stages.runtime_sass = section;
    c.v.runtime_mechanisms = none.mechanisms;
    return true;
  }
  std::vector<std::string> once = once_command(c.options, c.library, c.spec_file, derive_seed(c.seed, 300), c.triton);
  const bool cupti = c.options.sass_tool == SassTool::cupti && !c.trusted;
  fs::path out = c.scratch->path() / (cupti ? "sass_counts.json" : "ncu.csv");
  std::vector<std::string> argv;
  std::string ncu;
  if (cupti) {
    if (c.listing.empty()) throw EnvironmentError("runtime_sass", "no SASS listing of the cubin (is cuobjdump installed?)");
    argv = once;
    argv.insert(argv.end(), {"--sass-counts", out.string()});
  } else {
    ncu = find_cuda_tool("ncu");
    if (ncu.empty()) throw EnvironmentError("runtime_sass", "ncu not found");
    argv = ncu_command(ncu, out.string(), m_ncu_refused, c.options.integrity.profile.enabled, once);
  }
  // ncu needs the GPU's performance counters, which the driver may keep for administrators: then it
  // runs keeping root's identity (still in the namespaces and view; the runner's seccomp filter
  // still denies mounts, tracing, processes), and this evaluator remembers it (docs/sandbox.md).
  auto profile = [&](bool as_root) {
    ProcessSpec spec = tool_spec(c.options, argv, c.scratch->path(), c.readable(), as_root);
    ProcessResult r = run_process(spec, c.options.profile_timeout_s * (c.triton ? kTritonToolTimeFactor : 1.0));
    kill_processes_mentioning(c.scratch->path().string());
    return std::make_pair(spec, r);
  };
  auto [spec, r] = profile(!cupti && m_profile_needs_root);
  const std::string tool_name = cupti ? "CUPTI SASS counting" : "ncu";
  std::string text = fs::exists(out) ? read_file(out) : "";
  if (!cupti && !m_profile_needs_root && (text + r.out.text + r.err.text).find("ERR_NVGPUCTRPERM") != std::string::npos) {
    m_profile_needs_root = true;
    fs::remove(out);
    std::tie(spec, r) = profile(true);
    text = fs::exists(out) ? read_file(out) : "";
  }
  // An ncu without one of the optional metrics (the opcode-with-modifier counts: coverage then
  // stays a range for kernels of several MMA shapes; the hardware pipe counters: the profile
  // binding then rests on the time): profile without it, and remember.
  if (!cupti) {
    bool refused = false;
    for (const char* m : kNcuOptionalMetrics)
      if (!m_ncu_refused.count(m) && ncu_rejected_metric(text + r.out.text + r.err.text, m)) {
        m_ncu_refused.insert(m);
        refused = true;
      }
    if (refused) {
      fs::remove(out);
      argv = ncu_command(ncu, out.string(), m_ncu_refused, c.options.integrity.profile.enabled, once);
      std::tie(spec, r) = profile(m_profile_needs_root);
      text = fs::exists(out) ? read_file(out) : "";
    }
  }
  if (r.timed_out)
    return c.fail(Status::TIMEOUT, "the candidate did not finish within " +
                                       std::to_string(static_cast<int>(c.options.profile_timeout_s)) + " s under " + tool_name);
  // Once the runner said it loads the candidate, a failure is the candidate's, whatever exit code it
  // chose (a hostile one could pick the runner's own "setup failed" code to look like our fault).
  const bool loaded = (r.err.text + r.out.text).find(kCandidateLoadedMarker) != std::string::npos;
  const bool runner_failed = cupti ? !r.status.success() : text.find("The application returned an error code") != std::string::npos ||
                                                               r.err.text.find("The application returned an error code") != std::string::npos;
  if (runner_failed && loaded) {
    RuntimeSassSection& s = c.v.stages.runtime_sass.emplace();
    s.available = false;
    s.note = cut(r.err.text, 1500);
    std::string finding = sandbox_finding(spec, r);
    return c.fail(Status::RUNTIME_ERROR, finding.empty() ? "the candidate failed while its SASS was counted (" + tool_name + "): " +
                                                               cut(r.err.text, 1500)
                                                         : finding + " (under " + tool_name + ")");
  }
  RuntimeSass sass;
  if (cupti && r.status.success() && !text.empty()) {
    sass = runtime_sass_from_counts(sass_counts_from_json(ordered_json::parse(text)), c.listing, c.kernels, kOurKernels);
  } else if (!cupti) {
    sass = parse_ncu_csv(text, c.kernels, kOurKernels);
  }
  if (!r.status.success() || !sass.available)
    throw EnvironmentError("runtime_sass", tool_name + " " + r.status.describe() + ": " +
                                               cut(sass.note + "\n" + r.out.text + r.err.text + text, 1500));
  RuntimeSassSection section = runtime_sass_section(sass);
  // The launches the profiled call made of the candidate's own kernels (the timing stage holds
  // the timed calls to them), and the share of the FLOPs its tensor cores did.
  c.profiled = !cupti;
  if (sass.durations_measured) c.profile_evidence.profiled_us = sass.duration_ns / 1000.0;
  c.profile_evidence.sass_gmma = family_count(sass.warp_executed, "GMMA");
  c.profile_evidence.sass_tma = family_count(sass.warp_executed, "TMA");
  c.profile_evidence.hw_gmma = sass.hw_gmma_warp_inst;
  c.profile_evidence.hw_tma = sass.hw_tma_inst;
  // A trusted candidate (a builtin baseline) has no cubin of its own: every launch but ours (the
  // profiled runner fills its inputs on the GPU) is its own.
  for (const auto& launch : sass.launches)
    if (c.trusted ? launch.name.find(kOurKernels) == std::string::npos : c.kernels.count(launch.name) > 0) {
      c.profiled_launches.push_back(launch);
      section.launches.push_back(describe(launch));
    }
  Coverage coverage = tensor_core_coverage(sass.thread_true_per_kernel, c.mma_shapes, c.state->op().flops(c.workload),
                                           ShapedMmaCounts{sass.warp_with_modifiers_per_kernel, sass.warp_per_kernel});
  CoverageRecord& cov = section.coverage.emplace();
  cov.available = coverage.available;
  cov.workload_flops = coverage.workload_flops;
  cov.tensor_core_flops = coverage.tensor_flops_min;
  cov.share = coverage.share_min();
  if (!coverage.exact()) cov.share_max = coverage.share_max();
  cov.note = coverage.note;
  if (coverage.available) c.v.tensor_core_coverage = coverage.share_min();
  c.v.stages.runtime_sass = section;
  c.v.runtime_mechanisms = sass.mechanisms;
  if (!c.trusted && !sass.foreign_kernels.empty())
    return c.fail(Status::BANNED_API, "kernels that are not in the candidate's own module ran: " + sass.foreign_kernels.front());
  return true;
}

namespace {
// A trusted runner's spans of its timed calls (by call number): the baseline's, or the Triton launch
// probe's. Anything amiss is ours.
std::vector<double> baseline_spans(const RunnerReply& report, const std::vector<uint64_t>& calls, const std::string& name) {
  if (!report.spans) throw EnvironmentError("runner", "the trusted runner of " + name + " reported no spans");
  if (report.spans->dropped_records > 0) throw Error("timing", "CUPTI dropped activity records; the timing is incomplete");
  if (!report.spans->stray.empty())
    throw EnvironmentError("runner", "device work outside " + name + "'s calls: " + report.spans->stray.front());
  std::map<uint64_t, double> by_index;
  for (const auto& a : report.spans->calls)
    if (!a.empty) by_index[a.index] = a.span_us;
  std::vector<double> spans;
  for (uint64_t i : calls) {
    auto it = by_index.find(i);
    if (it == by_index.end()) throw EnvironmentError("runner", "no activity records of " + name + "'s call " + std::to_string(i));
    spans.push_back(it->second);
  }
  return spans;
}
// Per call: the worker's clock less the reported span, to 0.1 µs (the host bound's raw data).
std::vector<double> gaps_us(const std::vector<double>& host_us, const std::vector<double>& span_us) {
  std::vector<double> gaps;
  for (std::size_t i = 0; i < host_us.size() && i < span_us.size(); ++i)
    gaps.push_back(std::round((host_us[i] - span_us[i]) * 10.0) / 10.0);
  return gaps;
}
}  // namespace

// The Triton launch path's allowance for this evaluation (docs/triton.md, "What the timing means for
// a Triton candidate"). While the GPU's calibration wants measurements, the probe is timed here as
// the candidate will be: the policy's trials of warm-up and timed calls, each call prepared by the
// worker like the candidate's (fresh inputs, poisoned outputs, cold L2, on the candidate's side)
// and alternating with the baseline's calls, whose gaps calibrate the overhead; the probe's excess
// (the median of host − span over its timed calls, less that overhead) joins the calibration. Runs
// under the timing stage's exclusive hold of the GPU. Anything amiss is ours (the probe and its
// runner are trusted): EnvironmentError, so INFRA_ERROR.
LaunchAllowanceRecord Evaluator::triton_launch_allowance(Context& c,
                                                         const std::function<RunnerReply(const RunnerRequest&)>& ask_baseline,
                                                         double call_budget_s) {
  const TimingPolicy& policy = c.options.timing;
  const IntegrityPolicy& integrity = c.options.integrity;
  TritonLaunchCalibration calibration(calibration_gpu_key(c.v.environment, c.options.device));
  std::optional<double> measured;
  std::vector<double> per_trial;
  if (c.launch_probe) {
    const std::string what = "the Triton launch probe";
    if (!c.probe_runner) {
      if (!c.probe_starting.valid()) throw Error("timing", "the Triton launch probe's runner was never started");
      try {
        c.probe_runner = c.probe_starting.get();
      } catch (const RunnerFault& f) {
        throw EnvironmentError("runner", what + "'s runner failed to start: " + f.what());
      }
    }
    auto ask_probe = [&](const RunnerRequest& r) {
      try {
        return c.probe_runner->session->request(r, call_budget_s);
      } catch (const RunnerFault& f) {
        throw EnvironmentError("runner", what + " failed: " + f.what());
      }
    };
    WorkloadState& state = *c.state;
    auto flush = [this](cudaStream_t s) { m_flusher->flush(s); };
    std::vector<double> host, spans, base_host, base_spans;
    uint64_t next_probe_call = 0;
    for (int trial = 1; trial <= policy.trials; ++trial) {
      const uint64_t seed = derive_seed(c.seed, 5000 + static_cast<uint64_t>(trial));
      state.begin_trial(seed);
      std::vector<uint64_t> probe_index, base_index;
      std::vector<double> trial_host, trial_base_host;
      for (int j = 0; j < policy.warmup_calls + policy.timed_calls; ++j) {
        const bool timed = j >= policy.warmup_calls;
        state.prepare_call(call_seed(policy, seed, 2 * static_cast<uint64_t>(j)), WorkloadState::Side::baseline, flush, false);
        const uint64_t base_call = c.next_baseline_call++;
        auto b0 = std::chrono::steady_clock::now();
        RunnerReply base_reply = ask_baseline(call_request(base_call));
        const double base_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - b0).count();
        if (!base_reply.ok()) throw Error("baseline", c.baseline_runner->name + " failed: " + base_reply.failure->error);
        state.prepare_call(call_seed(policy, seed, 2 * static_cast<uint64_t>(j) + 1), WorkloadState::Side::candidate, flush,
                           false);
        const uint64_t probe_call = next_probe_call++;
        auto h0 = std::chrono::steady_clock::now();
        RunnerReply reply = ask_probe(call_request(probe_call));
        const double host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count();
        if (!reply.ok()) throw EnvironmentError("timing", what + "'s call failed: " + reply.failure->error);
        if (!timed) continue;
        base_index.push_back(base_call);
        trial_base_host.push_back(base_us);
        probe_index.push_back(probe_call);
        trial_host.push_back(host_us);
      }
      std::vector<double> trial_spans = baseline_spans(ask_probe(spans_request()), probe_index, what);
      std::vector<double> trial_base_spans = baseline_spans(ask_baseline(spans_request()), base_index, c.baseline_runner->name);
      per_trial.push_back(
          check_host_bound(trial_host, trial_spans, calibrate_overhead(trial_base_host, trial_base_spans), integrity).excess_us);
      host.insert(host.end(), trial_host.begin(), trial_host.end());
      spans.insert(spans.end(), trial_spans.begin(), trial_spans.end());
      base_host.insert(base_host.end(), trial_base_host.begin(), trial_base_host.end());
      base_spans.insert(base_spans.end(), trial_base_spans.begin(), trial_base_spans.end());
    }
    HostBound probe = check_host_bound(host, spans, calibrate_overhead(base_host, base_spans), integrity);
    if (probe.impossible_calls > 0)
      throw EnvironmentError("timing", what + "'s spans are longer than the worker's wait for its calls");
    measured = probe.excess_us;
    c.probe_runner.reset();  // measured: its runner's work is done
  }
  std::vector<double> kept = measured ? calibration.record(*c.launch_key, *measured) : calibration.recorded(*c.launch_key);
  return launch_allowance_record(kept, measured, per_trial, *c.launch_key, calibration.file(),
                                 integrity.triton_launch_allowance_max_us);
}

// One timing trial (docs/verdict.md, "Timing method" and "Measurement integrity"): warm-ups, then
// timed calls, baseline and candidate alternating call by call. The worker prepares every call
// itself (fresh inputs from a secret counter seed, poisoned outputs, a cold L2) and checks every
// timed call's output on random rows; one timed call per trial, chosen at random and kept secret,
// is checked in full. The runner reports spans and launches per call at the end of the trial; the
// worker holds them to its own clock (host bound) and to each other (same launches).
bool Evaluator::stage_timing(Context& c) {
  if (!c.options.measure_time) {
    c.v.stages.timing.emplace().skipped = "disabled by option";
    return true;
  }
  const TimingPolicy& policy = c.options.timing;
  const IntegrityPolicy& integrity = c.options.integrity;
  if (!m_flusher) m_flusher = std::make_unique<L2Flusher>(policy.l2_flush_factor);
  WorkloadState& state = *c.state;
  TimingSection section;
  section.policy = policy_record(policy);
  IntegrityRecord rec;
  rec.policy = integrity.to_json();
  rec.spot_rows = integrity.spot_rows;
  {
    std::vector<std::string> inputs;
    for (const auto& t : c.workload.tensors)
      if (!t.is_output) inputs.push_back(t.name);
    if (policy.fresh_inputs)
      for (std::size_t i : state.op().fresh_inputs(c.workload)) rec.fresh_inputs.push_back(inputs.at(i));
  }
  // Every full check is also a correctness trial: the section lists them with the others.
  auto record_trials = [&] {
    if (!c.v.stages.correctness) c.v.stages.correctness.emplace();
    c.v.stages.correctness->trials = c.correctness_trials;
  };
  auto finish = [&](Status s, const std::string& message) {
    section.integrity = rec;
    c.v.stages.timing = section;
    record_trials();
    return c.fail(s, message);
  };
  // Which rows are checked and which call is checked in full: never told to the runner.
  std::mt19937_64 secret(derive_seed(c.seed, 4000));
  auto flush = [this](cudaStream_t s) { m_flusher->flush(s); };
  std::vector<std::vector<double>> cand, base;
  std::set<std::string> seen_kernels;
  std::optional<std::vector<KernelLaunch>> timed_launches;
  std::vector<double> all_host, all_spans, all_base_host, all_base_spans;  // the host bound, every trial
  if (!c.baseline_runner) {
    if (!c.baseline_starting.valid()) throw Error("timing", "the baseline's runner was never started");
    try {
      c.baseline_runner = c.baseline_starting.get();
    } catch (const RunnerFault& f) {
      throw EnvironmentError("runner", std::string("the trusted runner of the baseline failed to start: ") + f.what());
    }
  }
  const std::string baseline_name = c.baseline_runner->name;
  section.baseline_name = baseline_name;
  const double call_budget_s = c.options.call_timeout_s + 2e-6 * c.slowest_call_us;
  // The trusted runner's faults are ours, never the candidate's.
  auto ask_baseline = [&](const RunnerRequest& r) {
    try {
      return c.baseline_runner->session->request(r, call_budget_s);
    } catch (const RunnerFault& f) {
      throw EnvironmentError("runner", "the trusted runner of " + baseline_name + " failed: " + f.what());
    }
  };
  // A Triton candidate's slack allows Triton's own launch path, calibrated on our probe.
  double launch_allowance_us = 0.0;
  if (c.launch_key) {
    rec.triton_launch_path = triton_launch_allowance(c, ask_baseline, call_budget_s);
    launch_allowance_us = rec.triton_launch_path->allowance_us;
  }
  const int calls_per_trial = policy.warmup_calls + policy.timed_calls;
  for (int trial = 1; trial <= policy.trials; ++trial) {
    const uint64_t seed = derive_seed(c.seed, 2000 + static_cast<uint64_t>(trial));
    state.begin_trial(seed);
    const int full_call = static_cast<int>(secret() % static_cast<uint64_t>(policy.timed_calls));
    std::vector<uint64_t> cand_index, base_index;
    std::vector<double> host_us, base_host_us;
    try {
      for (int j = 0; j < calls_per_trial; ++j) {
        const bool timed = j >= policy.warmup_calls;
        const int k = j - policy.warmup_calls;
        // The baseline, in the trusted runner, under the worker's own clock (the host bound's calibration).
        const bool check_baseline = trial == 1 && k == 0;  // its fingerprints go with the check
        state.prepare_call(call_seed(policy, seed, 2 * static_cast<uint64_t>(j)), WorkloadState::Side::baseline, flush,
                           check_baseline);
        const uint64_t base_call = c.next_baseline_call++;
        auto b0 = std::chrono::steady_clock::now();
        RunnerReply base_reply = ask_baseline(call_request(base_call));
        const double base_host = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - b0).count();
        if (!base_reply.ok()) throw Error("baseline", baseline_name + " failed: " + base_reply.failure->error);
        if (timed) {
          base_index.push_back(base_call);
          base_host_us.push_back(base_host);
        }
        if (check_baseline) {
          state.compute_reference();
          OutputCheck bc = state.check_baseline(c.tolerance, c.options.compare_threads);
          section.baseline_check = trial_record(trial, TrialPhase::baseline, seed, bc);
          if (!bc.passed()) throw Error("baseline", baseline_name + " failed the correctness rule against the reference");
        }
        // The candidate, in the runner, under the worker's own clock.
        const bool full = timed && k == full_call;
        state.prepare_call(call_seed(policy, seed, 2 * static_cast<uint64_t>(j) + 1), WorkloadState::Side::candidate, flush,
                           full);
        const uint64_t index = c.next_call++;
        auto h0 = std::chrono::steady_clock::now();
        RunnerReply reply = c.session->request(call_request(index), call_budget_s);
        const double host = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count();
        if (auto d = denied_calls(reply)) return finish(d->status, d->message);
        if (!reply.ok()) return finish(Status::RUNTIME_ERROR, "a timed call failed: " + reply.failure->error);
        if (!timed) continue;
        cand_index.push_back(index);
        host_us.push_back(host);
        OutputCheck spot = state.spot_check(secret, integrity.spot_rows, c.tolerance);
        ++rec.spot_checked_calls;
        if (!spot.passed()) {
          ++rec.spot_failed_calls;
          c.correctness_trials.push_back(trial_record(trial, TrialPhase::spot_check, seed, spot));
          return finish(Status::INCORRECT_NUMERICAL,
                        check_message(spot, trial, TrialPhase::spot_check) + ": timed call " + std::to_string(k + 1) +
                            " of trial " + std::to_string(trial) +
                            " is wrong on rows sampled at random (spot check of every timed call)");
        }
        if (full) {
          state.compute_reference();
          OutputCheck check = state.check_candidate(c.tolerance, c.options.compare_threads);
          c.correctness_trials.push_back(trial_record(trial, TrialPhase::timing, seed, check));
          rec.full_checks.push_back({trial, k, check.passed()});
          if (!check.passed())
            return finish(status_for_check(check), check_message(check, trial, TrialPhase::timing) +
                                                       ": timed call " + std::to_string(k + 1) +
                                                       " (checked in full, chosen at random) is wrong");
        }
      }
    } catch (const RunnerFault& f) {
      Finding found = runner_fault_finding(f, "in a timed call", call_budget_s);
      return finish(found.status, found.message);
    }
    // The runner's account of the trial: every call's span and launches, and what ran outside them.
    RunnerReply report;
    try {
      report = c.session->request(spans_request(), c.options.call_timeout_s);
    } catch (const RunnerFault& f) {
      Finding found = runner_fault_finding(f, "reporting spans", c.options.call_timeout_s);
      return finish(found.status, found.message);
    }
    if (!report.spans) return finish(Status::RUNTIME_ERROR, "the runner's reply to a spans request carried none");
    rec.stray = report.spans->stray;
    if (!report.spans->stray.empty())
      return finish(Status::TIMING_ANOMALY, "device work ran outside the timed calls: " + report.spans->stray.front());
    if (report.spans->dropped_records > 0) throw Error("timing", "CUPTI dropped activity records; the timing is incomplete");
    std::map<uint64_t, const CallActivity*> by_index;
    for (const auto& a : report.spans->calls) by_index[a.index] = &a;
    std::vector<double> spans;
    for (std::size_t i = 0; i < cand_index.size(); ++i) {
      auto it = by_index.find(cand_index[i]);
      if (it == by_index.end())
        return finish(Status::RUNTIME_ERROR, "the runner reported no span for timed call " + std::to_string(i + 1));
      const CallActivity& a = *it->second;
      bool own_kernel = false;
      for (const auto& k : a.kernels) {
        seen_kernels.insert(k.name);
        own_kernel = own_kernel || c.trusted || c.kernels.count(k.name);
      }
      if (a.empty || !own_kernel)
        return finish(Status::TIMING_ANOMALY, std::string("timed call ") + std::to_string(i + 1) + " of trial " +
                                                  std::to_string(trial) + " launched " +
                                                  (a.empty ? "no device work at all" : "no kernel of the candidate's own module"));
      std::vector<KernelLaunch> launches = launch_set(a.kernels);
      if (!timed_launches) timed_launches = launches;
      else if (std::string d = launch_difference(*timed_launches, launches); !d.empty())
        return finish(Status::TIMING_ANOMALY, "the timed calls did not all launch the same kernels: " + d);
      spans.push_back(a.span_us);
    }
    std::vector<double> base_spans = baseline_spans(ask_baseline(spans_request()), base_index, baseline_name);
    HostBound bound = check_host_bound(host_us, spans, calibrate_overhead(base_host_us, base_spans), integrity);
    rec.host_bound.push_back({trial, bound.overhead_us, bound.excess_us, bound.impossible_calls, gaps_us(host_us, spans),
                              gaps_us(base_host_us, base_spans)});
    if (bound.impossible_calls > 0)
      return finish(Status::TIMING_ANOMALY, "a reported span is longer than the worker's whole wait for its call: the runner's report is forged");
    all_host.insert(all_host.end(), host_us.begin(), host_us.end());
    all_spans.insert(all_spans.end(), spans.begin(), spans.end());
    all_base_host.insert(all_base_host.end(), base_host_us.begin(), base_host_us.end());
    all_base_spans.insert(all_base_spans.end(), base_spans.begin(), base_spans.end());
    base.push_back(base_spans);
    cand.push_back(spans);
  }
  // The host bound over the whole evaluation: the excess beyond the slack is charged to every call.
  {
    HostBound bound = check_host_bound(all_host, all_spans, calibrate_overhead(all_base_host, all_base_spans), integrity,
                                       launch_allowance_us);
    rec.host_charge = HostChargeRecord{bound.overhead_us, bound.excess_us, bound.allowed_us, bound.charge_us(),
                                       c.launch_key ? std::optional<double>(bound.launch_allowance_us) : std::nullopt};
    if (bound.charge_us() > 0.0) {
      for (auto& trial_spans : cand) trial_spans = charge_host_clock(trial_spans, bound);
      c.host_clock_note = fmt::format(
          "charged {:.0f} us per call by the worker's own clock: it saw {:.0f} us per call (median) beyond the reported "
          "device span and the calibrated overhead of a call ({:.0f} us), {:.0f} us more than the slack allowed{} (host "
          "work inside {}, such as a per-call allocation or printing, costs time like device work)",
          bound.charge_us(), bound.excess_us, bound.overhead_us, bound.charge_us(),
          c.launch_key ? fmt::format(", which includes {:.0f} us for Triton's own launch path", bound.launch_allowance_us) : "",
          c.triton ? "run" : "ptxb_run");
    }
  }
  section.kernels = std::vector<std::string>(seen_kernels.begin(), seen_kernels.end());
  if (timed_launches)
    for (const auto& k : *timed_launches) rec.launches.push_back(describe(k));
  if (!c.trusted)
    for (const auto& k : seen_kernels)
      if (!c.kernels.count(k)) return finish(Status::BANNED_API, "a kernel that is not in the candidate's own module ran in a timed call: " + k);
  // The target-instruction claim comes from the profiled call: it must be the timed code path.
  if (c.profiled && timed_launches)
    if (std::string d = launch_difference(launch_set(c.profiled_launches), *timed_launches); !d.empty())
      return finish(Status::TIMING_ANOMALY, "the profiled call and the timed calls launched different kernels: " + d +
                                                " (what the runtime-SASS counts describe must be what was timed)");

  const Operator& op = state.op();
  double flops = op.flops(c.workload), bytes = op.min_bytes(c.workload);
  double floor_us = 0.0;
  if (auto peaks = peaks_for(c.v.environment ? c.v.environment->gpu.name : ""))
    floor_us = roofline_floor_us(*peaks, flops, bytes);
  TimingSummary summary = summarize_timing(cand, base, floor_us);
  section.result = timing_result(summary, flops, bytes);
  // The profile's claims are credited only if the profiled call ran what was timed.
  if (c.profiled) {
    c.profile_evidence.timed_us = summary.candidate.mean_us;
    c.profile_evidence.triton = c.triton;
    ProfileBinding bound = bind_profile(c.profile_evidence, integrity.profile);
    if (bound.checked) {
      const ProfileEvidence& e = c.profile_evidence;
      rec.profile_check = ProfileCheckRecord{bound.holds, bound.reasons, bound.notes, e.profiled_us, e.timed_us,
                                             bound.time_ratio, e.sass_gmma, e.sass_tma, e.hw_gmma, e.hw_tma};
      if (!bound.holds) c.claims_void = bound.reasons.front();
    }
  }
  // The baseline against this GPU's calibration: slower beyond the margin is the GPU's problem (or
  // work someone left on it), never a bigger speedup.
  BaselineJudgement judged = BaselineCalibration(calibration_gpu_key(c.v.environment, c.options.device))
                                 .judge(c.workload.definition->name + "/" + c.workload.workload.uuid + "/" + baseline_name,
                                        summary.baseline.median_us, integrity.baseline_margin);
  rec.baseline_calibration = CalibrationRecord{judged.calibrated_us, judged.measured_us, judged.margin, judged.within, judged.recorded};
  section.integrity = rec;
  c.v.stages.timing = section;
  record_trials();
  c.v.candidate_us = summary.candidate.mean_us;
  c.v.baseline_us = summary.baseline.mean_us;
  c.v.baseline_name = baseline_name;
  if (!judged.within)
    return c.fail(Status::INFRA_ERROR,
                  fmt::format("the baseline ran {:.1f}% slower than this GPU's calibration ({:.1f} us against {:.1f} us, margin "
                              "{:.0f}%): the GPU is throttled, sick or shared; the evaluation must be re-run, it is not scored",
                              (judged.ratio() - 1) * 100, judged.measured_us, *judged.calibrated_us, judged.margin * 100));
  if (summary.below_floor)
    return c.fail(Status::TIMING_ANOMALY, "the measured time is below the roofline floor of this workload");
  c.v.speedup = summary.speedup;
  return true;
}

}  // namespace ptxbench

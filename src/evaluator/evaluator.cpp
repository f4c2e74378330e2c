#include "evaluator/evaluator.h"

#include <unistd.h>

#include <chrono>
#include <future>
#include <random>
#include <set>

#include "common/clock.h"
#include "common/cuda_tools.h"
#include "common/error.h"
#include "common/text.h"
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
#include "evaluator/gpu_lock.h"
#include "evaluator/runner_session.h"

#ifndef PTXBENCH_VERSION
#define PTXBENCH_VERSION "dev"
#endif

namespace ptxbench {

// What one evaluation carries between stages.
struct Evaluator::Context {
  EvalOptions options;  ///< this evaluation's options (the evaluator's defaults, or the request's)
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

std::string runner_path(const EvalOptions& o) {
  if (!o.runner_path.empty()) return o.runner_path;
  return (executable_dir() / "ptxbench-runner").string();
}

// The runner's one-call command that compute-sanitizer and ncu start: it names this worker as its
// owner, so that a hang outlives neither the tool nor the worker (see exit_when_orphaned).
std::vector<std::string> once_command(const EvalOptions& o, const fs::path& library, const fs::path& spec,
                                      uint64_t seed) {
  return {runner_path(o), "once", "--library", library.string(), "--spec", spec.string(), "--seed",
          std::to_string(seed), "--calls", "1", "--device", std::to_string(o.device), "--owner-pid",
          std::to_string(getpid())};
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
             std::to_string(t.elements) + " elements (" + to_string(phase) + " trial " + std::to_string(trial) + ")";
  return "outputs differ from the reference";
}

GpuRecord gpu_record(const GpuInfo& g) {
  std::string cc = std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor);
  return {g.device, g.name, cc, g.sm_count, g.l2_bytes, g.global_mem_bytes, g.driver_version, g.runtime_version};
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
                                   const std::string& source, const std::optional<EvalOptions>& options) {
  auto start = std::chrono::steady_clock::now();
  Context c;
  begin(c, definition, workload, options);

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
  if (sass.available) c.static_mechanism_opcodes = has_mechanism_opcodes(sass.total);
  c.library = compiled.library();
  c.kernels.insert(compiled.kernels.begin(), compiled.kernels.end());
  Verdict v = run_stages(c);
  v.wall_seconds = seconds_since(start);
  return v;
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
    c.v.target_instruction_correct =
        c.v.runtime_mechanisms && target_instruction_met(c.v.arch, *c.v.runtime_mechanisms);
  } catch (const std::exception& e) {
    // Anything thrown here is ours (tools, driver, our own CUDA calls), never the candidate's.
    c.v.status = Status::INFRA_ERROR;
    c.v.message = std::string("evaluation infrastructure failed: ") + e.what();
  }
  return c.v;
}

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
  std::vector<std::future<ProcessResult>> runs;
  for (int run = 0; run < c.options.sanitize_runs; ++run) {
    uint64_t seed = derive_seed(c.seed, 100 + static_cast<uint64_t>(run));
    std::vector<std::string> argv = {tool, "--tool", "memcheck", "--error-exitcode", std::to_string(kSanitizerErrorExit),
                                     "--print-limit", "20", "--show-backtrace", "no"};
    std::vector<std::string> once = once_command(c.options, c.library, c.spec_file, seed);
    argv.insert(argv.end(), once.begin(), once.end());
    ProcessSpec spec = sandboxed_spec(argv, c.scratch->path(), 1 << 20);
    double limit = c.options.sanitize_timeout_s;
    seeds.push_back(seed);
    runs.push_back(std::async(std::launch::async, [spec, limit] { return run_process(spec, limit); }));
  }
  std::vector<ProcessResult> results;
  for (auto& r : runs) results.push_back(r.get());
  kill_processes_mentioning(c.scratch->path().string());
  for (std::size_t run = 0; run < results.size(); ++run) {
    const ProcessResult& r = results[run];
    section.runs.push_back({seeds[run], r.status.describe(), r.timed_out, r.wall_s});
  }
  for (const ProcessResult& r : results) {
    std::string report = r.out.text + r.err.text;
    if (r.timed_out) {
      section.passed = false;
      c.v.stages.sanitize = section;
      return c.fail(Status::TIMEOUT, "the candidate did not finish within " +
                                         std::to_string(static_cast<int>(c.options.sanitize_timeout_s)) +
                                         " s under compute-sanitizer memcheck (a hang?)");
    }
    if (!r.status.success()) {
      section.passed = false;
      section.report = cut(report, 8000);
      c.v.stages.sanitize = section;
      if (r.status.signal == 0 && r.status.exit_code == kSanitizerErrorExit)
        return c.fail(Status::SANITIZER_ERROR, "compute-sanitizer memcheck found memory errors");
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
    s.tolerance = c.options.tolerance;
    s.trials_planned = c.options.correctness_trials;
    s.passed = passed;
    s.trials = c.correctness_trials;
  };
  RunnerLaunch launch{runner_path(c.options), c.options.device, c.scratch->path()};
  c.session = std::make_unique<RunnerSession>(launch, c.options.startup_timeout_s);
  try {
    ordered_json tensors = ordered_json::array();
    for (const auto& t : c.state->wire_tensors()) tensors.push_back(to_json(t));
    ordered_json setup = c.session->request({{"op", "setup"},
                                             {"library", c.library.string()},
                                             {"tensors", tensors},
                                             {"policy", c.options.timing.to_json()}},
                                            c.options.startup_timeout_s);
    if (!setup.value("ok", false)) {
      record(false);
      return c.fail(Status::RUNTIME_ERROR, "the runner could not set up the candidate: " + setup.value("error", std::string("?")));
    }
    for (int trial = 1; trial <= c.options.correctness_trials; ++trial) {
      uint64_t seed = derive_seed(c.seed, 1000 + static_cast<uint64_t>(trial));
      c.state->prepare_trial(seed);
      ordered_json reply = c.session->request({{"op", "run"}}, c.options.call_timeout_s);
      if (!reply.value("ok", false)) {
        c.correctness_trials.push_back(
            {trial, TrialPhase::correctness, seed, false, std::nullopt, reply.value("error", std::string("?"))});
        record(false);
        return c.fail(Status::RUNTIME_ERROR, "the candidate's call failed: " + reply.value("error", std::string("?")));
      }
      c.slowest_call_us = std::max(c.slowest_call_us, reply.value("wall_us", 0.0));
      OutputCheck check = c.state->check_candidate(c.options.tolerance, c.options.compare_threads);
      c.correctness_trials.push_back(trial_record(trial, TrialPhase::correctness, seed, check));
      if (!check.passed()) {
        record(false);
        return c.fail(status_for_check(check), check_message(check, trial, TrialPhase::correctness));
      }
    }
  } catch (const RunnerFault& f) {
    record(false);
    if (f.kind == RunnerFault::Kind::timeout)
      return c.fail(Status::TIMEOUT, "a call did not finish within " + std::to_string(static_cast<int>(c.options.call_timeout_s)) +
                                         " s; the runner was killed");
    return c.fail(Status::RUNTIME_ERROR, std::string("the runner died during a call: ") + f.what());
  }
  record(true);
  return true;
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
    c.v.stages.runtime_sass = runtime_sass_section(none);
    c.v.runtime_mechanisms = none.mechanisms;
    return true;
  }
  std::vector<std::string> once = once_command(c.options, c.library, c.spec_file, derive_seed(c.seed, 300));
  const bool cupti = c.options.sass_tool == SassTool::cupti && !c.trusted;
  fs::path out = c.scratch->path() / (cupti ? "sass_counts.json" : "ncu.csv");
  std::vector<std::string> argv;
  if (cupti) {
    if (c.listing.empty()) throw EnvironmentError("runtime_sass", "no SASS listing of the cubin (is cuobjdump installed?)");
    argv = once;
    argv.insert(argv.end(), {"--sass-counts", out.string()});
  } else {
    std::string tool = find_cuda_tool("ncu");
    if (tool.empty()) throw EnvironmentError("runtime_sass", "ncu not found");
    argv = {tool, "--csv", "--log-file", out.string(), "--print-metric-instances", "details", "--print-kernel-base",
            "mangled", "--print-units", "base", "--clock-control", "none", "--metrics",
            std::string(kNcuThreadTrueMetric) + "," + kNcuWarpMetric};
    argv.insert(argv.end(), once.begin(), once.end());
  }
  ProcessResult r = run_process(sandboxed_spec(argv, c.scratch->path(), 1 << 20), c.options.profile_timeout_s);
  kill_processes_mentioning(c.scratch->path().string());
  const std::string tool_name = cupti ? "CUPTI SASS counting" : "ncu";
  if (r.timed_out)
    return c.fail(Status::TIMEOUT, "the candidate did not finish within " +
                                       std::to_string(static_cast<int>(c.options.profile_timeout_s)) + " s under " + tool_name);
  if (cupti && r.status.signal == 0 && r.status.exit_code == kRunnerCallFailedExit) {
    RuntimeSassSection& s = c.v.stages.runtime_sass.emplace();
    s.available = false;
    s.note = cut(r.err.text, 1500);
    return c.fail(Status::RUNTIME_ERROR, "the candidate's call failed while its SASS was counted: " + cut(r.err.text, 1500));
  }
  std::string text = fs::exists(out) ? read_file(out) : "";
  RuntimeSass sass;
  if (cupti && r.status.success() && !text.empty()) {
    sass = runtime_sass_from_counts(sass_counts_from_json(ordered_json::parse(text)), c.listing, c.kernels, "ptxb_internal_");
  } else if (!cupti) {
    sass = parse_ncu_csv(text, c.kernels, "ptxb_internal_");
  }
  if (!r.status.success() || !sass.available)
    throw EnvironmentError("runtime_sass", tool_name + " " + r.status.describe() + ": " +
                                               cut(sass.note + "\n" + r.out.text + r.err.text + text, 1500));
  c.v.stages.runtime_sass = runtime_sass_section(sass);
  c.v.runtime_mechanisms = sass.mechanisms;
  if (!c.trusted && !sass.foreign_kernels.empty())
    return c.fail(Status::BANNED_API, "kernels that are not in the candidate's own module ran: " + sass.foreign_kernels.front());
  return true;
}

bool Evaluator::stage_timing(Context& c) {
  if (!c.options.measure_time) {
    c.v.stages.timing.emplace().skipped = "disabled by option";
    return true;
  }
  const TimingPolicy& policy = c.options.timing;
  if (!m_flusher) m_flusher = std::make_unique<L2Flusher>(policy.l2_flush_factor);
  if (!m_recorder) m_recorder = std::make_unique<ActivityRecorder>();
  TimingSection section;
  section.policy = policy_record(policy);
  section.baseline_name = c.state->baseline_name();
  // Every timing trial is also a correctness trial: the section lists them with the others.
  auto record_trials = [&] {
    if (!c.v.stages.correctness) c.v.stages.correctness.emplace();
    c.v.stages.correctness->trials = c.correctness_trials;
  };
  std::vector<std::vector<double>> cand, base;
  std::set<std::string> seen_kernels;
  auto finish = [&](Status s, const std::string& message) {
    c.v.stages.timing = section;
    record_trials();
    return c.fail(s, message);
  };
  // One side of a trial in the runner: `warmup` then `calls` timed calls.
  auto runner_block = [&](int warmup, int calls) {
    double budget = c.options.trial_timeout_s + 2e-6 * c.slowest_call_us * (warmup + calls);
    ordered_json reply = c.session->request({{"op", "time"}, {"warmup", warmup}, {"calls", calls}}, budget);
    if (!reply.value("ok", false)) throw CallFailure(reply.value("code", -1), reply.value("error", std::string("?")));
    TrialTiming t;
    t.spans_us = reply["spans_us"].get<std::vector<double>>();
    for (const auto& k : reply["kernels"]) t.kernel_names.insert(k.get<std::string>());
    t.stray_kernels = reply["stray"].get<std::vector<std::string>>();
    t.empty_calls = reply.value("empty_calls", 0);
    t.dropped_records = reply.value("dropped_records", 0ull);
    return t;
  };
  auto baseline_block = [&](int warmup, int calls) {
    return run_timed_calls(c.state->baseline_target(), warmup, calls, policy.poison_timed_calls, *m_flusher,
                           *m_recorder, c.state->stream());
  };
  const int block = std::max(1, policy.interleave_calls);
  for (int trial = 1; trial <= policy.trials; ++trial) {
    uint64_t seed = derive_seed(c.seed, 2000 + static_cast<uint64_t>(trial));
    c.state->prepare_trial(seed);
    TrialTiming b, t;
    try {
      // Warm both sides, then alternate blocks of calls: baseline, candidate, baseline, ...
      append_timing(b, baseline_block(policy.warmup_calls, 0));
      append_timing(t, runner_block(policy.warmup_calls, 0));
      for (int done = 0; done < policy.timed_calls; done += block) {
        int n = std::min(block, policy.timed_calls - done);
        append_timing(b, baseline_block(0, n));
        append_timing(t, runner_block(0, n));
      }
    } catch (const RunnerFault& f) {
      if (f.kind == RunnerFault::Kind::timeout) return finish(Status::TIMEOUT, "a timing trial did not finish in time");
      return finish(Status::RUNTIME_ERROR, std::string("the runner died while timing: ") + f.what());
    } catch (const CallFailure& f) {
      return finish(Status::RUNTIME_ERROR, std::string("a timed call failed: ") + f.what());
    }
    if (trial == 1) {
      OutputCheck bc = c.state->check_baseline(c.options.tolerance, c.options.compare_threads);
      section.baseline_check = trial_record(trial, TrialPhase::baseline, seed, bc);
      if (!bc.passed()) throw Error("baseline", c.state->baseline_name() + " failed the correctness rule against the reference");
    }
    OutputCheck check = c.state->check_candidate(c.options.tolerance, c.options.compare_threads);
    c.correctness_trials.push_back(trial_record(trial, TrialPhase::timing, seed, check));
    if (!check.passed())
      return finish(status_for_check(check), check_message(check, trial, TrialPhase::timing) +
                                                 ": the output of the last timed call is wrong");
    seen_kernels.insert(t.kernel_names.begin(), t.kernel_names.end());
    if (!t.stray_kernels.empty())
      return finish(Status::TIMING_ANOMALY, "device work ran outside the timed calls: " + t.stray_kernels.front());
    if (t.empty_calls > 0) return finish(Status::TIMING_ANOMALY, "a timed call launched no device work at all");
    if (t.dropped_records > 0 || b.dropped_records > 0)
      throw Error("timing", "CUPTI dropped activity records; the timing is incomplete");
    base.push_back(b.spans_us);
    cand.push_back(t.spans_us);
  }
  section.kernels = std::vector<std::string>(seen_kernels.begin(), seen_kernels.end());
  if (!c.trusted)
    for (const auto& k : seen_kernels)
      if (!c.kernels.count(k)) return finish(Status::BANNED_API, "a kernel that is not in the candidate's own module ran in a timed call: " + k);

  const Operator& op = c.state->op();
  double flops = op.flops(c.workload), bytes = op.min_bytes(c.workload);
  double floor_us = 0.0;
  if (auto peaks = peaks_for(c.v.environment ? c.v.environment->gpu.name : ""))
    floor_us = roofline_floor_us(*peaks, flops, bytes);
  TimingSummary summary = summarize_timing(cand, base, floor_us);
  section.result = timing_result(summary, flops, bytes);
  c.v.stages.timing = section;
  record_trials();
  c.v.candidate_us = summary.candidate.mean_us;
  c.v.baseline_us = summary.baseline.mean_us;
  c.v.baseline_name = c.state->baseline_name();
  if (summary.below_floor)
    return c.fail(Status::TIMING_ANOMALY, "the measured time is below the roofline floor of this workload");
  c.v.speedup = summary.speedup;
  return true;
}

}  // namespace ptxbench

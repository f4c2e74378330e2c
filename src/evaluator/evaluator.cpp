#include "evaluator/evaluator.h"

#include <chrono>
#include <random>

#include "common/clock.h"
#include "common/cpu_affinity.h"
#include "common/error.h"
#include "common/text.h"
#include "evaluator/evaluation.h"
#include "evaluator/runner_session.h"
#include "evaluator/scheduler.h"
#include "evaluator/stages/compile.h"
#include "evaluator/stages/correctness.h"
#include "evaluator/stages/runtime_sass.h"
#include "evaluator/stages/sanitize.h"
#include "evaluator/stages/static_sass.h"
#include "evaluator/stages/timing.h"
#include "evaluator/stages/triton_build.h"
#include "gpu/cuda_call.h"
#include "gpu/gpu_info.h"
#include "sass/opcode_counts.h"

#ifndef PTXBENCH_VERSION
#define PTXBENCH_VERSION "dev"
#endif

namespace ptxbench {

// One evaluation: its verdict, the stages' inputs and shared runners, and what passes between stages.
struct Evaluator::Evaluation {
  Verdict v;
  EvalInputs in;
  EvalRunners runners;
  std::unique_ptr<TempDir> scratch;
  bool build_only = false;  ///< stop after the Triton build pass (build_triton_source)
  bool built = false;       ///< with build_only: every step passed
  std::string triton_source;  ///< a Triton candidate's checked source, for the build pass
  double slowest_call_us = 0.0;
  std::optional<ProfileSeen> profile;
  std::string host_clock_note;
  std::optional<std::string> claims_void;

  /// Records a stage's section in `slot`; false (and the verdict's status and message) when it failed.
  template <class Section, class Outcome>
  bool record(std::optional<Section> StageSections::*slot, Outcome& out) {
    if (out.section) v.stages.*slot = std::move(out.section);
    if (!out.failure) return true;
    v.status = out.failure->status;
    v.message = std::move(out.failure->message);
    return false;
  }
};

namespace {

GpuRecord gpu_record(const GpuInfo& g) {
  std::string cc = std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor);
  return {g.device, g.name, cc, g.sm_count, g.l2_bytes, g.global_mem_bytes, g.driver_version, g.runtime_version};
}

// The physical GPU a calibration belongs to (its model and PCI bus id): the baseline's and the
// Triton launch path's are kept per GPU (evaluator/calibration_store.h).
std::string calibration_gpu_key(const std::string& gpu_name, int device) {
  char bus[32] = {0};
  cudaDeviceGetPCIBusId(bus, sizeof bus, device);
  return gpu_name + "@" + bus;
}

// Device memory a workload state holds: inputs, candidate outputs, fp32 references, baseline
// outputs, plus an allowance for the operator's and the baseline's scratch (attention: ~1.4 GiB).
uint64_t state_bytes(const ResolvedWorkload& w) {
  uint64_t bytes = uint64_t{3} << 29;
  for (const auto& t : w.tensors)
    bytes += t.is_output ? 2 * t.bytes() + 4 * static_cast<uint64_t>(t.numel()) : t.bytes();
  return bytes;
}

ordered_json tensors_json(const ResolvedWorkload& w) {
  ordered_json specs = ordered_json::array();
  for (const auto& t : w.tensors) specs.push_back(to_json(t));
  return ordered_json{{"tensors", specs}};
}

// The runner's `once` mode (memcheck, runtime SASS) makes its own inputs: random ones from the
// seed, and the fixed ones (scalars, the GQA layouts) from the exact values written here, so that
// an honest kernel never reads index arrays of random numbers there.
ordered_json once_spec_json(const ResolvedWorkload& w) {
  ordered_json j = tensors_json(w);
  const std::unique_ptr<Operator> op = make_operator(w.definition->op_type);
  std::size_t input = 0;
  for (std::size_t i = 0; i < w.tensors.size(); ++i) {
    if (w.tensors[i].is_output) continue;
    if (auto values = op->fixed_values(w, input)) j["tensors"][i]["values"] = *values;
    ++input;
  }
  return j;
}

}  // namespace

Evaluator::Evaluator(const Catalog& catalog, EvalOptions options)
    : m_catalog(catalog), m_options(std::move(options)), m_compiler(m_options.compile), m_host(std::make_unique<HostState>()) {}

Evaluator::~Evaluator() = default;

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

const std::string& Evaluator::cpu_affinity(int device) {
  if (!m_cpu_affinity) {
    char bus[32] = {};
    PTXB_CUDA_CALL(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
    m_cpu_affinity = pin_to_local_cpus(bus);
  }
  return *m_cpu_affinity;
}

void Evaluator::begin(Evaluation& e, const std::string& definition, const std::string& workload,
                      const std::optional<EvalOptions>& options) const {
  e.in.options = options ? *options : m_options;
  const Definition& def = m_catalog.definition(definition);
  e.in.tolerance = e.in.options.tolerance.for_definition(def);
  const Workload& w = workload.empty() ? m_catalog.default_workload(definition) : m_catalog.find_workload(definition, workload);
  (void)make_operator(def.op_type);  // an unsupported op is the caller's error, not a verdict
  e.in.workload = resolve_workload(def, w);
  e.v.started_at = utc_now_iso8601();
  e.v.definition = def.name;
  e.v.workload_uuid = w.uuid;
  e.v.workload_label = w.label(def);
  e.v.arch = m_options.compile.arch;
}

bool Evaluator::compile(Evaluation& e, const std::string& source) {
  CompileOutcome compiled = compile_cuda(m_compiler, source);
  if (!e.record(&StageSections::compile, compiled)) return false;
  StaticSassOutcome sass = static_sass({compiled.cubin});
  e.record(&StageSections::static_sass, sass);
  sass.into(e.in.build);
  e.in.build.library = compiled.library;
  e.in.build.kernels = std::move(compiled.kernels);
  return true;
}

bool Evaluator::check(Evaluation& e, const std::string& source) const {
  CompileOutcome checked = check_triton(m_options, static_cast<int>(e.in.workload.tensors.size()), source);
  if (!e.record(&StageSections::compile, checked)) return false;
  e.in.build.triton = true;
  e.triton_source = source;
  return true;
}

bool Evaluator::begin_and_compile(Evaluation& e, const std::string& definition, const std::string& workload,
                                  const std::string& source, const std::optional<EvalOptions>& options,
                                  CandidateLanguage language) {
  begin(e, definition, workload, options);
  return language == CandidateLanguage::triton ? check(e, source) : compile(e, source);
}

Verdict Evaluator::evaluate_source(const std::string& definition, const std::string& workload,
                                   const std::string& source, const std::optional<EvalOptions>& options,
                                   CandidateLanguage language) {
  auto start = std::chrono::steady_clock::now();
  Evaluation e;
  Verdict v = begin_and_compile(e, definition, workload, source, options, language) ? run_stages(e) : e.v;
  v.wall_seconds = seconds_since(start);
  return v;
}

std::optional<Verdict> Evaluator::check_source(const std::string& definition, const std::string& workload,
                                               const std::string& source, const std::optional<EvalOptions>& options,
                                               CandidateLanguage language) {
  auto start = std::chrono::steady_clock::now();
  Evaluation e;
  if (begin_and_compile(e, definition, workload, source, options, language)) return std::nullopt;
  e.v.wall_seconds = seconds_since(start);
  return e.v;
}

TritonBuildOnly Evaluator::build_triton_source(const std::string& definition, const std::string& workload,
                                               const std::string& source) {
  auto start = std::chrono::steady_clock::now();
  Evaluation e;
  begin(e, definition, workload, std::nullopt);
  e.build_only = true;
  TritonBuildOnly out{false, check(e, source) ? run_stages(e) : e.v};
  out.built = e.built;
  out.verdict.wall_seconds = seconds_since(start);
  return out;
}

Verdict Evaluator::evaluate_trusted_library(const std::string& definition, const std::string& workload,
                                            const fs::path& library) {
  auto start = std::chrono::steady_clock::now();
  Evaluation e;
  begin(e, definition, workload, std::nullopt);
  CompileSection& compile = e.v.stages.compile.emplace();
  compile.status = CompileStatus::ok;
  compile.message = "trusted prebuilt library " + library.string();
  e.in.build.library = fs::absolute(library);
  e.in.build.trusted = true;
  Verdict v = run_stages(e);
  v.wall_seconds = seconds_since(start);
  return v;
}

bool Evaluator::prepare(Evaluation& e) {
  const EvalOptions& o = e.in.options;
  if (cuda_device_count() <= o.device) {
    e.v.status = Status::INFRA_ERROR;
    e.v.message = "no CUDA device " + std::to_string(o.device) + " on this host";
    return false;
  }
  PTXB_CUDA_CALL(cudaSetDevice(o.device));
  GpuInfo gpu = query_gpu(o.device);
  Environment env;
  env.gpu = gpu_record(gpu);
  env.ptxbench_version = PTXBENCH_VERSION;
  env.nvcc = m_compiler.nvcc_version();
  env.options = o.record();
  e.v.environment = std::move(env);
  if (gpu.arch() != m_options.compile.arch) {
    e.v.status = Status::INFRA_ERROR;
    e.v.message = "this host's GPU is " + gpu.arch() + ", the evaluation targets " + m_options.compile.arch;
    return false;
  }
  e.in.gpu_name = gpu.name;
  e.in.calibration_key = calibration_gpu_key(gpu.name, o.device);
  // Not under /tmp: the runner's sandbox mounts a private /tmp over it.
  e.scratch = std::make_unique<TempDir>("ptxbench-eval", o.scratch_root.empty() ? cache_root() / "scratch" : o.scratch_root);
  e.in.scratch = e.scratch->path();
  e.in.spec_file = e.in.scratch / "tensors.json";
  write_file_atomic(e.in.spec_file, once_spec_json(e.in.workload).dump());
  return true;
}

bool Evaluator::build_triton(Evaluation& e) {
  if (!m_triton_builder) m_triton_builder = make_triton_builder(m_options);  // EnvironmentError: no torch/Triton here
  const PythonRuntime& rt = m_triton_builder->runtime();
  for (const auto& d : rt.readable_dirs()) e.in.build.python_dirs.emplace_back(d);
  Environment& env = *e.v.environment;
  env.language = "triton";
  env.python = rt.version;
  env.torch = rt.torch;
  env.triton = rt.triton;
  const ordered_json tensors = tensors_json(e.in.workload);
  TritonBuildStageOutcome b = triton_build(*m_triton_builder, e.triton_source, tensors, *e.v.stages.compile);
  if (!e.record(&StageSections::compile, b)) return false;
  e.record(&StageSections::static_sass, *b.static_sass);
  b.static_sass->into(e.in.build);
  e.in.build.library = b.library;
  e.in.build.kernels = std::move(b.kernels);
  if (!e.build_only)
    e.in.build.launch = plan_triton_launch(*m_triton_builder, e.in.options, env.gpu.cuda_driver, e.in.calibration_key, tensors,
                                           static_cast<int>(e.in.workload.tensors.size()));
  return true;
}

bool Evaluator::run_gpu_stages(Evaluation& e) {
  StageScheduler scheduler(e.in.options.gpu_lock);
  if (e.in.build.triton) {  // the build pass runs the candidate on the GPU: untimed, shared
    GpuLock::Hold shared = scheduler.shared();
    if (!build_triton(e)) return false;
    if (e.build_only) {
      e.built = true;
      e.v.message = "built: the static checks and the build pass passed; not evaluated";
      return false;
    }
  }
  const EvalInputs& in = e.in;
  HostState& host = *m_host;
  // The workload's device state is made under the first shared hold.
  auto with_state = [&](auto stage) {
    return [&, stage] {
      if (!e.runners.state) e.runners.state = &state_for(in.workload);
      return stage();
    };
  };
  // What a shared attempt that timed out leaves: the killed runner's output, and no runner.
  auto reset = [&]() -> std::optional<std::string> {
    if (!e.runners.candidate) return std::nullopt;
    std::string output = cut(e.runners.candidate->finish(), 2000);
    e.runners.candidate.reset();
    return output;
  };
  auto sanitized = scheduler.untimed(with_state([&] { return sanitize(in); }), false, reset);
  if (!e.record(&StageSections::sanitize, sanitized)) return false;
  e.v.environment->cpu_affinity = cpu_affinity(in.options.device);
  auto correct = scheduler.untimed(with_state([&] { return correctness(in, e.runners, host); }), false, reset);
  if (e.runners.sandbox) e.v.environment->sandbox = e.runners.sandbox;
  if (!e.record(&StageSections::correctness, correct)) return false;
  e.slowest_call_us = correct.slowest_call_us;
  auto sass = scheduler.untimed(with_state([&] { return runtime_sass(in, e.runners, host); }), in.runs_sass_tool(), reset);
  if (sass.mechanisms) e.v.runtime_mechanisms = sass.mechanisms;
  if (sass.coverage) e.v.tensor_core_coverage = sass.coverage;
  e.profile = std::move(sass.profile);
  if (!e.record(&StageSections::runtime_sass, sass)) return false;
  auto timed = scheduler.exclusive([&] { return timing(in, e.runners, host, e.slowest_call_us, e.profile); });
  if (!timed.trials.empty() || timed.section) {
    if (!e.v.stages.correctness) e.v.stages.correctness.emplace();
    auto& trials = e.v.stages.correctness->trials;
    trials.insert(trials.end(), timed.trials.begin(), timed.trials.end());
  }
  if (timed.candidate_us) e.v.candidate_us = timed.candidate_us;
  if (timed.baseline_us) e.v.baseline_us = timed.baseline_us;
  if (timed.baseline_name) e.v.baseline_name = *timed.baseline_name;
  if (timed.speedup) e.v.speedup = timed.speedup;
  e.host_clock_note = std::move(timed.host_clock_note);
  e.claims_void = std::move(timed.claims_void);
  return e.record(&StageSections::timing, timed);
}

Verdict Evaluator::run_stages(Evaluation& e) {
  e.in.seed = e.in.options.seed ? *e.in.options.seed : std::random_device{}() * 0x100000001ull + std::random_device{}();
  e.v.seed = e.in.seed;
  try {
    if (!prepare(e)) return e.v;
    const bool ok = run_gpu_stages(e);
    if (e.runners.candidate) {
      e.v.stages.runner_output = cut(e.runners.candidate->finish(), 4000);
      e.runners.candidate.reset();
    }
    if (!ok) return e.v;
    e.v.status = Status::PASSED;
    e.v.message = "correct on every trial";
    if (!e.host_clock_note.empty()) e.v.message += "; " + e.host_clock_note;
    if (e.claims_void) {
      // What the profile saw stays in its section; nothing of it is credited.
      e.v.runtime_mechanisms = Mechanisms{};
      e.v.tensor_core_coverage = 0.0;
      e.v.message += "; the target-instruction claims are void: " + *e.claims_void;
    }
    e.v.target_instruction_correct = e.v.runtime_mechanisms && target_instruction_met(e.v.arch, *e.v.runtime_mechanisms);
    e.v.target_instruction_strict = e.v.tensor_core_coverage && *e.v.tensor_core_coverage >= kStrictCoverage;
  } catch (const std::exception& error) {
    // Anything thrown here is ours (tools, driver, our own CUDA calls), never the candidate's.
    if (e.runners.sandbox && e.v.environment) e.v.environment->sandbox = e.runners.sandbox;
    e.v.status = Status::INFRA_ERROR;
    e.v.message = std::string("evaluation infrastructure failed: ") + error.what();
  }
  return e.v;
}

}  // namespace ptxbench

#include "evaluator/stages/runtime_sass.h"

#include "common/cuda_tools.h"
#include "common/error.h"
#include "common/text.h"
#include "evaluator/stages/tool_process.h"
#include "gpu/random_fill.h"
#include "runner/runner_exit.h"
#include "sass/mma_coverage.h"
#include "sass/ncu_report.h"
#include "sass/pc_counts.h"

namespace ptxbench {

namespace {

// One run of the counting tool on the runner's one-call command.
struct ToolRun {
  bool cupti = false;
  std::string name;  ///< "ncu" or "CUPTI SASS counting"
  ProcessSpec spec;
  ProcessResult result;
  std::string text;  ///< what it wrote (ncu's CSV, the counts' JSON)
};

// Runs the tool. ncu needs the GPU's performance counters, which the driver may keep for
// administrators: then it runs keeping root's identity (still in the namespaces and view; the
// runner's seccomp filter still denies mounts, tracing, processes), and the host remembers it
// (docs/sandbox.md). An ncu without one of the optional metrics (the opcode-with-modifier counts:
// coverage then stays a range for kernels of several MMA shapes; the hardware pipe counters: the
// profile binding then rests on the time) runs again without it, and the host remembers.
ToolRun count_sass(const EvalInputs& in, HostState& host) {
  std::vector<std::string> once = once_command(in.options, in.build.library, in.spec_file, derive_seed(in.seed, 300), in.build.triton);
  ToolRun run;
  run.cupti = in.options.sass_tool == SassTool::cupti && !in.build.trusted;
  run.name = run.cupti ? "CUPTI SASS counting" : "ncu";
  fs::path out = in.scratch / (run.cupti ? "sass_counts.json" : "ncu.csv");
  std::vector<std::string> argv;
  std::string ncu;
  if (run.cupti) {
    if (in.build.listing.empty()) throw EnvironmentError("runtime_sass", "no SASS listing of the cubin (is cuobjdump installed?)");
    argv = once;
    argv.insert(argv.end(), {"--sass-counts", out.string()});
  } else {
    ncu = find_cuda_tool("ncu");
    if (ncu.empty()) throw EnvironmentError("runtime_sass", "ncu not found");
    argv = ncu_command(ncu, out.string(), host.ncu_refused, in.options.integrity.profile.enabled, once);
  }
  auto profile = [&](bool as_root) {
    fs::remove(out);
    run.spec = tool_spec(in.options, argv, in.scratch, in.readable(), as_root);
    run.result = run_process(run.spec, in.options.profile_timeout_s * (in.build.triton ? kTritonToolTimeFactor : 1.0));
    kill_processes_mentioning(in.scratch.string());
    run.text = fs::exists(out) ? read_file(out) : "";
  };
  profile(!run.cupti && host.profile_needs_root);
  if (run.cupti) return run;
  auto said = [&] { return run.text + run.result.out.text + run.result.err.text; };
  if (!host.profile_needs_root && said().find("ERR_NVGPUCTRPERM") != std::string::npos) {
    host.profile_needs_root = true;
    profile(true);
  }
  bool refused = false;
  for (const char* m : kNcuOptionalMetrics)
    if (!host.ncu_refused.count(m) && ncu_rejected_metric(said(), m)) {
      host.ncu_refused.insert(m);
      refused = true;
    }
  if (refused) {
    argv = ncu_command(ncu, out.string(), host.ncu_refused, in.options.integrity.profile.enabled, once);
    profile(host.profile_needs_root);
  }
  return run;
}

// The counts of a run whose runner did not fail; an unusable one is ours (EnvironmentError).
RuntimeSass read_counts(const EvalInputs& in, const ToolRun& run) {
  const ProcessResult& r = run.result;
  RuntimeSass sass;
  if (run.cupti && r.status.success() && !run.text.empty())
    sass = runtime_sass_from_counts(sass_counts_from_json(ordered_json::parse(run.text)), in.build.listing, in.build.kernels,
                                    kOurKernels);
  else if (!run.cupti)
    sass = parse_ncu_csv(run.text, in.build.kernels, kOurKernels);
  if (!r.status.success() || !sass.available)
    throw EnvironmentError("runtime_sass", run.name + " " + r.status.describe() + ": " +
                                               cut(sass.note + "\n" + r.out.text + r.err.text + run.text, 1500));
  return sass;
}

// The section and the verdict's fields from the counts.
void credit_counts(const EvalInputs& in, const EvalRunners& runners, bool profiled, const RuntimeSass& sass,
                   RuntimeSassOutcome& out) {
  RuntimeSassSection& section = out.section.emplace(runtime_sass_section(sass));
  // The launches the profiled call made of the candidate's own kernels (the timing stage holds
  // the timed calls to them), and the share of the FLOPs its tensor cores did.
  ProfileSeen seen;
  if (sass.durations_measured) seen.evidence.profiled_us = sass.duration_ns / 1000.0;
  seen.evidence.sass_gmma = family_count(sass.warp_executed, "GMMA");
  seen.evidence.sass_tma = family_count(sass.warp_executed, "TMA");
  seen.evidence.hw_gmma = sass.hw_gmma_warp_inst;
  seen.evidence.hw_tma = sass.hw_tma_inst;
  // A trusted candidate (a builtin baseline) has no cubin of its own: every launch but ours (the
  // profiled runner fills its inputs on the GPU) is its own.
  for (const auto& launch : sass.launches)
    if (in.build.trusted ? launch.name.find(kOurKernels) == std::string::npos : in.build.kernels.count(launch.name) > 0) {
      seen.launches.push_back(launch);
      section.launches.push_back(describe(launch));
    }
  if (profiled) out.profile = std::move(seen);
  Coverage coverage = tensor_core_coverage(sass.thread_true_per_kernel, in.build.mma_shapes,
                                           runners.state->op().flops(in.workload),
                                           ShapedMmaCounts{sass.warp_with_modifiers_per_kernel, sass.warp_per_kernel});
  CoverageRecord& cov = section.coverage.emplace();
  cov.available = coverage.available;
  cov.workload_flops = coverage.workload_flops;
  cov.tensor_core_flops = coverage.tensor_flops_min;
  cov.share = coverage.share_min();
  if (!coverage.exact()) cov.share_max = coverage.share_max();
  cov.note = coverage.note;
  if (coverage.available) out.coverage = coverage.share_min();
  out.mechanisms = sass.mechanisms;
}

// No tool: what runs is a subset of the cubin, and with no wgmma/TMA/tcgen05 opcode in it, none
// can run. Kernels from elsewhere are still caught by the timing stage's kernel-origin check.
RuntimeSassOutcome from_static_listing(const EvalInputs& in, const EvalRunners& runners) {
  RuntimeSass none;
  none.available = true;
  none.source = "static SASS: the cubin has no wgmma, TMA or tcgen05 opcode, so no profile was needed";
  RuntimeSassOutcome out;
  RuntimeSassSection& section = out.section.emplace(runtime_sass_section(none));
  CoverageRecord& cov = section.coverage.emplace();
  cov.available = true;
  cov.workload_flops = runners.state->op().flops(in.workload);
  out.coverage = 0.0;
  out.mechanisms = none.mechanisms;
  return out;
}

}  // namespace

RuntimeSassOutcome runtime_sass(const EvalInputs& in, const EvalRunners& runners, HostState& host) {
  if (!in.options.profile) {
    RuntimeSassOutcome out;
    RuntimeSassSection& s = out.section.emplace();
    s.available = false;
    s.note = "disabled by option";
    return out;
  }
  if (!in.runs_sass_tool()) return from_static_listing(in, runners);
  ToolRun run = count_sass(in, host);
  const ProcessResult& r = run.result;
  RuntimeSassOutcome out;
  if (r.timed_out) {
    out.fail(Status::TIMEOUT, "the candidate did not finish within " +
                                  std::to_string(static_cast<int>(in.options.profile_timeout_s)) + " s under " + run.name);
    return out;
  }
  // Once the runner said it loads the candidate, a failure is the candidate's, whatever exit code it
  // chose (a hostile one could pick the runner's own "setup failed" code to look like our fault).
  const bool loaded = (r.err.text + r.out.text).find(kCandidateLoadedMarker) != std::string::npos;
  const char* app_error = "The application returned an error code";
  const bool runner_failed = run.cupti ? !r.status.success()
                                       : run.text.find(app_error) != std::string::npos || r.err.text.find(app_error) != std::string::npos;
  if (runner_failed && loaded) {
    RuntimeSassSection& s = out.section.emplace();
    s.available = false;
    s.note = cut(r.err.text, 1500);
    std::string finding = sandbox_finding(run.spec, r);
    out.fail(Status::RUNTIME_ERROR, finding.empty() ? "the candidate failed while its SASS was counted (" + run.name +
                                                          "): " + cut(r.err.text, 1500)
                                                    : finding + " (under " + run.name + ")");
    return out;
  }
  RuntimeSass sass = read_counts(in, run);
  credit_counts(in, runners, !run.cupti, sass, out);
  if (!in.build.trusted && !sass.foreign_kernels.empty())
    out.fail(Status::BANNED_API, "kernels that are not in the candidate's own module ran: " + sass.foreign_kernels.front());
  return out;
}

}  // namespace ptxbench

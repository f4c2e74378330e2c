#include "evaluator/stages/sanitize.h"

#include <future>

#include "common/cuda_tools.h"
#include "common/error.h"
#include "common/text.h"
#include "evaluator/stages/tool_process.h"
#include "gpu/random_fill.h"

namespace ptxbench {

namespace {

constexpr int kSanitizerErrorExit = 86;

struct MemcheckRun {
  uint64_t seed;
  ProcessSpec spec;
  ProcessResult result;
};

// Every run, in run order.
std::vector<MemcheckRun> run_memcheck(const EvalInputs& in, const std::string& tool, double limit_s) {
  std::vector<MemcheckRun> runs;
  std::vector<std::future<ProcessResult>> started;
  for (int run = 0; run < in.options.sanitize_runs; ++run) {
    uint64_t seed = derive_seed(in.seed, 100 + static_cast<uint64_t>(run));
    std::vector<std::string> argv = {tool, "--tool", "memcheck", "--error-exitcode", std::to_string(kSanitizerErrorExit),
                                     "--print-limit", "20", "--show-backtrace", "no",
                                     // A failed CUDA call is the candidate's runtime error, which the runner
                                     // reports (an exit in a CUDA_CHECK macro included); memcheck judges memory.
                                     "--report-api-errors", "no"};
    std::vector<std::string> once = once_command(in.options, in.build.library, in.spec_file, seed, in.build.triton);
    argv.insert(argv.end(), once.begin(), once.end());
    runs.push_back({seed, tool_spec(in.options, argv, in.scratch, in.readable()), {}});
    started.push_back(std::async(std::launch::async, [spec = runs.back().spec, limit_s] { return run_process(spec, limit_s); }));
  }
  for (std::size_t i = 0; i < runs.size(); ++i) runs[i].result = started[i].get();
  kill_processes_mentioning(in.scratch.string());
  return runs;
}

}  // namespace

StageOutcome<SanitizeSection> sanitize(const EvalInputs& in) {
  StageOutcome<SanitizeSection> out;
  SanitizeSection& section = out.section.emplace();
  section.tool = "compute-sanitizer --tool memcheck";
  if (!in.options.sanitize) {
    section.skipped = "disabled by option";
    return out;
  }
  std::string tool = find_cuda_tool("compute-sanitizer");
  if (tool.empty()) throw EnvironmentError("sanitize", "compute-sanitizer not found");
  const double limit_s = in.options.sanitize_timeout_s * (in.build.triton ? kTritonToolTimeFactor : 1.0);
  std::vector<MemcheckRun> runs = run_memcheck(in, tool, limit_s);
  for (const auto& run : runs)
    section.runs.push_back({run.seed, run.result.status.describe(), run.result.timed_out, run.result.wall_s});
  section.passed = false;
  for (const auto& run : runs) {
    const ProcessResult& r = run.result;
    if (r.timed_out)
      return out.fail(Status::TIMEOUT, "the candidate did not finish within " + std::to_string(static_cast<int>(limit_s)) +
                                           " s under compute-sanitizer memcheck (a hang?)");
    if (r.status.success()) continue;
    section.report = cut(r.out.text + r.err.text, 8000);
    if (r.status.signal == 0 && r.status.exit_code == kSanitizerErrorExit)
      return out.fail(Status::SANITIZER_ERROR, "compute-sanitizer memcheck found memory errors");
    std::string finding = sandbox_finding(run.spec, r);
    if (!finding.empty()) return out.fail(Status::RUNTIME_ERROR, finding + " (under compute-sanitizer)");
    return out.fail(Status::RUNTIME_ERROR,
                    "the candidate failed under compute-sanitizer: runner " + r.status.describe() + "\n" + cut(r.err.text, 1500));
  }
  section.passed = true;
  return out;
}

}  // namespace ptxbench

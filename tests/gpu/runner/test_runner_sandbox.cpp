// The sandboxed runner on the GPU (docs/sandbox.md): it starts as an unprivileged user in its own
// namespaces and filesystem view, maps the worker's buffers from descriptors (no permission over
// the worker), runs the trusted probe kernel that calibrates the worker's host bound, installs
// seccomp before it loads a candidate, and reports spans and launches; the tools (compute-
// sanitizer, ncu) run inside the same kind of sandbox. Prints what it measured (overhead of the
// host bound, sandbox report) for results/measurement_integrity.md and results/sandbox.md.
#include <algorithm>
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/stats.h"
#include "common/cuda_tools.h"
#include "compile/compiler.h"
#include "definitions/catalog.h"
#include "evaluator/runner_session.h"
#include "evaluator/workload_state.h"
#include "gpu/cuda_call.h"
#include "gpu/l2_flush.h"
#include "gpu/random_fill.h"
#include "gpu/trial_timer.h"
#include "gpu_test_support.h"
#include "suite/candidate_suite.h"
#include "timing/call_integrity.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

const SuiteCase& find_case(const CandidateSuite& suite, const std::string& name) {
  for (const auto& c : suite.cases)
    if (c.name == name) return c;
  throw Error("test", "no case " + name);
}

class RunnerSandbox : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    m_catalog = std::make_unique<Catalog>(Catalog::load(PTXBENCH_SOURCE_DIR));
    const Definition& def = m_catalog->definition("gemm_n7168_k5120");
    m_workload = resolve_workload(def, m_catalog->find_workload(def.name, "M=972"));
    m_scratch = std::make_unique<TempDir>("runner-sandbox", cache_root() / "scratch");
  }

  RunnerLaunch launch(const fs::path& library_dir = {}) const {
    RunnerLaunch l{(executable_dir() / "ptxbench-runner").string(), 0, m_scratch->path()};
    if (!library_dir.empty()) l.readable.push_back(library_dir);
    l.sandbox.enforcement = Enforcement::required;
    return l;
  }

  CompileResult compile(const std::string& name) const {
    CandidateSuite suite = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures/gemm/suite.json");
    CompileResult r = Compiler{}.compile(find_case(suite, name).source);
    EXPECT_TRUE(r.ok()) << r.message;
    return r;
  }

  std::unique_ptr<Catalog> m_catalog;
  ResolvedWorkload m_workload;
  std::unique_ptr<TempDir> m_scratch;
};

}  // namespace

// The trusted baseline runner: builds the workload's baseline from the definition sent with its
// setup, writes the baseline's own shared outputs, and its calls (prepared like the candidate's)
// give the overhead of the worker's clock that the host bound is calibrated with.
TEST_F(RunnerSandbox, TheBaselineRunnerTimesTheBaselineAndCalibratesTheHostBound) {
  WorkloadState state(m_workload, make_operator(m_workload.definition->op_type));
  RunnerSession session(launch(), 60);
  const SandboxReport& rep = session.sandbox_report();
  std::cout << "[sandbox] " << to_json(rep).dump() << "\n";
  EXPECT_TRUE(rep.namespaces && rep.filesystem_view && rep.unprivileged);
  WorkloadState::SharedTensors shared = state.shared_tensors(WorkloadState::Side::baseline);
  RunnerReply ready = session.setup(
      {"", shared.tensors, baseline_setup(m_workload)},
      shared.fds, 60);
  ASSERT_TRUE(ready.ok()) << ready.failure->error << "\n" << session.output();
  EXPECT_EQ(ready.baseline, "cuBLASLt");
  EXPECT_EQ(ready.seccomp, "session");
  L2Flusher flusher(2.0);
  auto flush = [&](cudaStream_t st) { flusher.flush(st); };
  state.begin_trial(23);
  std::vector<double> host;
  for (int i = 0; i < 24; ++i) {
    const bool check = i == 23;
    state.prepare_call(derive_seed(23, static_cast<uint64_t>(i)), WorkloadState::Side::baseline, flush, check);
    auto t0 = std::chrono::steady_clock::now();
    RunnerReply r = session.request(call_request(static_cast<uint64_t>(i)), 30);
    host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    ASSERT_TRUE(r.ok()) << r.failure->error;
    EXPECT_TRUE(r.violations.empty()) << "cuBLASLt needed a call the filter denies: " << r.violations.front();
    if (check) {
      state.compute_reference();
      OutputCheck c = state.check_baseline(Tolerance{});
      EXPECT_TRUE(c.passed()) << "the baseline runner did not write the baseline's outputs right";
    }
  }
  RunnerReply s = session.request(spans_request(), 30);
  ASSERT_TRUE(s.ok() && s.spans);
  ASSERT_EQ(s.spans->calls.size(), host.size());
  std::vector<double> span, gap;
  for (std::size_t i = 0; i < host.size(); ++i) {
    span.push_back(s.spans->calls[i].span_us);
    gap.push_back(host[i] - span.back());
  }
  std::sort(gap.begin(), gap.end());
  std::cout << "[host-bound] baseline span median " << median(span) << " us; host-span gap min " << gap.front()
            << " p50 " << median(gap) << " p90 " << gap[gap.size() * 9 / 10] << " max " << gap.back() << " us\n";
  EXPECT_GT(median(span), 20.0);  // M=972: a 71-GFLOP GEMM, ~0.1 ms on the H200
  EXPECT_GT(median(gap), 0.0);
  EXPECT_LT(median(gap), 1000.0);
  EXPECT_TRUE(s.spans->stray.empty());
}

TEST_F(RunnerSandbox, ACandidateRunsOnSharedBuffersUnderSeccomp) {
  CompileResult lib = compile("simt_tiled_gemm");
  WorkloadState state(m_workload, make_operator(m_workload.definition->op_type));
  RunnerSession session(launch(lib.dir), 60);
  WorkloadState::SharedTensors shared = state.shared_tensors();
  RunnerReply ready = session.setup({lib.library().string(), shared.tensors}, shared.fds, 60);
  ASSERT_TRUE(ready.ok()) << ready.failure->error << "\n" << session.output();
  EXPECT_EQ(ready.seccomp, "session");
  EXPECT_TRUE(ready.violations.empty()) << ready.violations.front();
  state.prepare_trial(17);
  state.poison_outputs();
  RunnerReply r = session.request(call_request(1), 60);
  ASSERT_TRUE(r.ok()) << r.failure->error << "\n" << session.output();
  EXPECT_TRUE(r.violations.empty()) << "CUDA or CUPTI needed a call the filter denies: " << r.violations.front();
  OutputCheck check = state.check_candidate(Tolerance{});
  EXPECT_TRUE(check.passed());
  RunnerReply s = session.request(spans_request(), 30);
  ASSERT_TRUE(s.spans && s.spans->calls.size() == 1u);
  ASSERT_EQ(s.spans->calls[0].kernels.size(), 1u);
  std::cout << "[launch] " << describe(s.spans->calls[0].kernels[0]) << " span " << s.spans->calls[0].span_us << " us\n";
  EXPECT_EQ(s.spans->calls[0].kernels[0].grid[0], 7168u / 128);
}

TEST_F(RunnerSandbox, TheToolsRunInsideTheSandbox) {
  CompileResult lib = compile("simt_tiled_gemm");
  fs::path spec = m_scratch->path() / "tensors.json";
  ordered_json specs = ordered_json::array();
  for (const auto& t : m_workload.tensors) specs.push_back(to_json(t));
  write_file_atomic(spec, ordered_json{{"tensors", specs}}.dump());
  std::vector<std::string> once = {(executable_dir() / "ptxbench-runner").string(), "once", "--no-orphan-watch",
                                   "--library", lib.library().string(), "--spec", spec.string()};
  RunnerSandboxOptions o;
  o.enforcement = Enforcement::required;
  std::vector<std::string> memcheck = {find_cuda_tool("compute-sanitizer"), "--tool", "memcheck", "--error-exitcode", "86"};
  memcheck.insert(memcheck.end(), once.begin(), once.end());
  ProcessResult m = run_process(sandboxed_spec(memcheck, m_scratch->path(), 1 << 20, {lib.dir}, o), 120);
  std::cout << "[memcheck as uid " << sandbox_uid() << "] " << m.status.describe() << "\n" << m.out.text.substr(0, 800)
            << m.err.text.substr(0, 800) << "\n";
  EXPECT_TRUE(m.status.success());
  for (bool root : {false, true}) {
    std::vector<std::string> ncu = {find_cuda_tool("ncu"), "--csv", "--clock-control", "none", "--metrics",
                                    "sass__inst_executed_per_opcode,launch__shared_mem_per_block_dynamic"};
    ncu.insert(ncu.end(), once.begin(), once.end());
    ProcessResult n = run_process(sandboxed_spec(ncu, m_scratch->path(), 1 << 20, {lib.dir}, o, root), 180);
    std::cout << "[ncu " << (root ? "keeping root" : "as uid 65534") << "] " << n.status.describe() << "\n"
              << n.out.text.substr(0, 1500) << n.err.text.substr(0, 800) << "\n";
    if (root) {
      EXPECT_TRUE(n.status.success());
    }
  }
}

// Where the worker's clock spends a call beyond its device span, under each thing the worker may
// have done on the GPU just before (nothing, an L2 flush, a full call preparation, the baseline and
// a preparation), for the trusted probe before and after the candidate is loaded and for the
// candidate: the anatomy behind the host bound's calibration (docs/verdict.md). Splits each gap
// into the runner's part (its own wall minus the span) and the rest (the channel). The claim the
// evaluator rests on: probe calls prepared like timed calls predict an honest candidate's gap
// within the host bound's slack, whatever the call's length.
TEST_F(RunnerSandbox, TheHostGapUnderEachWorkerActivity) {
  CompileResult lib = compile("simt_tiled_gemm");
  WorkloadState state(m_workload, make_operator(m_workload.definition->op_type));
  RunnerSession session(launch(lib.dir), 60);
  L2Flusher flusher(2.0);
  auto flush = [&](cudaStream_t s) { flusher.flush(s); };
  TimedTarget baseline = state.baseline_target();
  state.begin_trial(5);
  uint64_t index = 0, seed = 100;
  enum class Before { nothing, flush, prepare, baseline_and_prepare };
  struct Gap {
    double p25 = 0, p50 = 0, span = 0;
  };
  auto measure = [&](const std::string& label, CallTarget target, Before before, double probe_us = 200.0) {
    std::vector<double> host, wall;
    for (int i = 0; i < 24; ++i) {
      if (before == Before::flush) {
        flusher.flush(state.stream());
        PTXB_CUDA_CALL(cudaStreamSynchronize(state.stream()));
      }
      if (before == Before::baseline_and_prepare) {
        state.prepare_call(++seed, WorkloadState::Side::baseline, flush, false);
        EXPECT_EQ(baseline.call(state.stream()), 0);
        PTXB_CUDA_CALL(cudaDeviceSynchronize());
      }
      if (before == Before::prepare || before == Before::baseline_and_prepare)
        state.prepare_call(++seed, WorkloadState::Side::candidate, flush, false);
      auto t0 = std::chrono::steady_clock::now();
      RunnerReply r = session.request(call_request(index++, target, probe_us), 30);
      host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      EXPECT_TRUE(r.ok()) << r.failure->error;
      wall.push_back(r.wall_us.value_or(0.0));
    }
    RunnerReply s = session.request(spans_request(), 30);
    EXPECT_TRUE(s.spans && s.spans->calls.size() == host.size());
    if (!s.spans || s.spans->calls.size() != host.size()) return Gap{};
    std::vector<double> gap, in_runner, channel, span;
    for (std::size_t i = 0; i < host.size(); ++i) {
      span.push_back(s.spans->calls[i].span_us);
      gap.push_back(host[i] - span.back());
      in_runner.push_back(wall[i] - span.back());
      channel.push_back(host[i] - wall[i]);
    }
    std::sort(gap.begin(), gap.end());
    std::cout << fmt::format("[host-gap] {:<56} span {:8.1f}  gap p25 {:7.1f} p50 {:7.1f} p90 {:7.1f}  runner {:7.1f}  channel {:7.1f} us\n",
                             label, median(span), gap[gap.size() / 4], median(gap), gap[gap.size() * 9 / 10],
                             median(in_runner), median(channel));
    return Gap{gap[gap.size() / 4], median(gap), median(span)};
  };
  measure("probe, nothing before", CallTarget::probe, Before::nothing);
  measure("probe, after a flush", CallTarget::probe, Before::flush);
  measure("probe, after a preparation", CallTarget::probe, Before::prepare);
  Gap calibration = measure("probe, after baseline and preparation", CallTarget::probe, Before::baseline_and_prepare);
  measure("probe 2 ms, after baseline and preparation", CallTarget::probe, Before::baseline_and_prepare, 2000.0);
  WorkloadState::SharedTensors shared = state.shared_tensors();
  RunnerReply ready = session.setup({lib.library().string(), shared.tensors}, shared.fds, 60);
  ASSERT_TRUE(ready.ok()) << ready.failure->error;
  measure("loaded: probe, after baseline and preparation", CallTarget::probe, Before::baseline_and_prepare);
  measure("candidate, nothing before", CallTarget::candidate, Before::nothing);
  measure("candidate, after a flush", CallTarget::candidate, Before::flush);
  Gap honest = measure("candidate, after baseline and preparation", CallTarget::candidate, Before::baseline_and_prepare);
  IntegrityPolicy p;
  const double allowed = p.host_slack_us + p.host_slack_fraction * honest.span;
  EXPECT_LE(honest.p50 - calibration.p25, allowed) << "an honest candidate would be charged the worker's clock";
  session.set_reply_spin(0);
  measure("worker sleeps: probe, after baseline and preparation", CallTarget::probe, Before::baseline_and_prepare);
  measure("worker sleeps: probe 2 ms, after baseline and preparation", CallTarget::probe, Before::baseline_and_prepare, 2000.0);
  measure("worker sleeps: candidate, after baseline and preparation", CallTarget::candidate, Before::baseline_and_prepare);
}

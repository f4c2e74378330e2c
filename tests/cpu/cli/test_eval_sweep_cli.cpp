// `ptxbench eval --workloads`: argument errors are usage errors (exit 2) that say what was wrong;
// without a GPU a sweep still gives the compile stage's verdict at every workload (a table row
// each, the aggregate line, nvcc's errors once; --json the sweep document) and, for a kernel that
// compiles, INFRA_ERROR (exit 3) with one reason line per workload and the files of --out. The
// built binary runs as a child process; nothing here needs a GPU.
#include <gtest/gtest.h>

#include "common/cuda_tools.h"
#include "common/json_check.h"
#include "cpu/cli/cli_process.h"

using namespace ptxbench;
using namespace ptxbench::test;

namespace {

const std::string kGemm = "gemm_n7168_k5120";

const char* kTiny = R"(#include "ptxbench_abi.h"
__global__ void nothing() {}
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  nothing<<<1, 1, 0, stream>>>();
  return (int)cudaGetLastError();
}
)";

std::size_t count(const std::string& text, const std::string& fragment) {
  std::size_t n = 0;
  for (std::size_t at = text.find(fragment); at != std::string::npos; at = text.find(fragment, at + 1)) ++n;
  return n;
}

class EvalSweepCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { s_cache = std::make_unique<TempDir>("ptxbench-eval-sweep-cache"); }
  static void TearDownTestSuite() { s_cache.reset(); }

  void SetUp() override {
    ASSERT_TRUE(fs::exists(ptxbench_binary())) << ptxbench_binary() << " missing: build the ptxbench target";
    write_file_atomic(tiny(), kTiny);
    fs::copy_file(fs::path(PTXBENCH_TEST_DATA) / "fixtures" / "gemm" / "compile_error.cu", broken());
  }
  [[nodiscard]] fs::path tiny() const { return dir.path() / "tiny.cu"; }
  [[nodiscard]] fs::path broken() const { return dir.path() / "broken_gemm.cu"; }
  ProcessResult run(const std::vector<std::string>& args, int expected_exit) const {
    CliOptions o;
    o.env.push_back("PTXBENCH_CACHE_DIR=" + s_cache->path().string());
    ProcessResult r = run_ptxbench(args, o);
    EXPECT_EQ(r.status.signal, 0) << describe_run(args, r);
    EXPECT_EQ(r.status.exit_code, expected_exit) << describe_run(args, r);
    return r;
  }
  void require_nvcc() {
    if (find_cuda_tool("nvcc").empty()) GTEST_SKIP() << "no nvcc";
  }
  void require_no_gpu_but_nvcc() {
    require_nvcc();
    ProcessResult env = run({"env", "--json"}, 0);
    if (!ordered_json::parse(env.out.text)["gpus"].empty()) GTEST_SKIP() << "this host has a GPU";
  }

  TempDir dir{"ptxbench-eval-sweep"};
  static std::unique_ptr<TempDir> s_cache;
};

std::unique_ptr<TempDir> EvalSweepCli::s_cache;

}  // namespace

TEST_F(EvalSweepCli, ArgumentErrorsAreUsageErrorsThatSayWhy) {
  ProcessResult both = run({"eval", kGemm, tiny().string(), "--workload", "M=70", "--workloads", "all"}, 2);
  EXPECT_TRUE(contains(both.err.text, "--workloads excludes --workload") ||
              contains(both.err.text, "--workload excludes --workloads"))
      << both.err.text;

  ProcessResult unknown = run({"eval", kGemm, tiny().string(), "--workloads", "M=70,M=71"}, 2);
  EXPECT_TRUE(contains(unknown.err.text, "no workload 'M=71' for " + kGemm)) << unknown.err.text;
  EXPECT_TRUE(contains(unknown.err.text, "known: M=8192")) << unknown.err.text;
  EXPECT_EQ(unknown.out.text, "") << "nothing is evaluated when a name is wrong";

  ProcessResult in_list = run({"eval", kGemm, tiny().string(), "--workloads", "all,M=70"}, 2);
  EXPECT_TRUE(contains(in_list.err.text, "stands alone")) << in_list.err.text;

  ProcessResult stop = run({"eval", kGemm, tiny().string(), "--stop-at-failure"}, 2);
  EXPECT_TRUE(contains(stop.err.text, "--stop-at-failure requires --workloads")) << stop.err.text;

  ProcessResult remote = run({"eval", kGemm, tiny().string(), "--workloads", "all", "--stop-at-failure", "--service",
                              "http://127.0.0.1:1"},
                             2);
  EXPECT_TRUE(contains(remote.err.text, "--stop-at-failure runs locally only")) << remote.err.text;
}

// A build that fails fails at every workload (the compile stage does not see the workload): the
// sweep is COMPILE_ERROR, a verdict (exit 0), decided by the first workload; nvcc's errors once.
TEST_F(EvalSweepCli, ACompileErrorIsTheSweepsVerdictAtEveryWorkload) {
  require_nvcc();
  ProcessResult table = run({"eval", kGemm, broken().string(), "--workloads", "all"}, 0);
  EXPECT_TRUE(contains(table.out.text, "== broken_gemm: " + kGemm + " over 5 workloads ==")) << table.out.text;
  EXPECT_EQ(count(table.out.text, "COMPILE_ERROR    "), 5u) << "a row per workload: " << table.out.text;
  EXPECT_TRUE(contains(table.out.text, "all correct: no (COMPILE_ERROR at M=8192")) << table.out.text;
  EXPECT_EQ(count(table.err.text, "identifier \"k_tile\" is undefined"), 1u) << table.err.text;

  ProcessResult json = run({"eval", kGemm, broken().string(), "--workloads", "M=70,M=232", "--json"}, 0);
  ordered_json sweep = ordered_json::parse(json.out.text);
  EXPECT_EQ(sweep["schema"], "ptxbench.sweep");
  EXPECT_EQ(sweep["status"], "COMPILE_ERROR");
  EXPECT_EQ(sweep["deciding_workload"], kGemm + "-m70");
  EXPECT_EQ(sweep["all_correct"], false);
  ASSERT_EQ(sweep["workloads"].size(), 2u);
  EXPECT_EQ(sweep["workloads"][1]["label"], "M=232");
  EXPECT_EQ(sweep["workloads"][1]["verdict"]["status"], "COMPILE_ERROR");
  EXPECT_TRUE(sweep["geomean_speedup"].is_null());

  ProcessResult stopped = run({"eval", kGemm, broken().string(), "--workloads", "all", "--stop-at-failure", "--json"}, 0);
  ordered_json first_only = ordered_json::parse(stopped.out.text);
  EXPECT_EQ(first_only["workloads_evaluated"], 1);
  EXPECT_TRUE(first_only["workloads"][4]["verdict"].is_null());
}

// Without a GPU every workload is INFRA_ERROR: the sweep is too (exit 3), each workload's reason
// is a line on stderr, and --out keeps every verdict and the sweep.
TEST_F(EvalSweepCli, WithoutAGpuTheSweepIsInfraErrorAndOutKeepsEveryVerdict) {
  require_no_gpu_but_nvcc();
  fs::path out = dir.path() / "out";
  ProcessResult r = run({"eval", kGemm, tiny().string(), "--workloads", "M=70,M=8192", "--out", out.string()}, 3);
  EXPECT_TRUE(contains(r.err.text, "INFRA_ERROR tiny@M=70: no CUDA device 0")) << r.err.text;
  EXPECT_TRUE(contains(r.err.text, "INFRA_ERROR tiny@M=8192: no CUDA device 0")) << r.err.text;
  EXPECT_TRUE(contains(r.out.text, "all correct: no (INFRA_ERROR at M=70")) << r.out.text;
  EXPECT_TRUE(fs::exists(out / ("tiny." + kGemm + "-m70.verdict.json")));
  EXPECT_TRUE(fs::exists(out / ("tiny." + kGemm + "-m8192.verdict.json")));
  ordered_json sweep = read_json_file(out / "tiny.sweep.json");
  EXPECT_EQ(sweep["status"], "INFRA_ERROR");
  EXPECT_EQ(sweep["workloads_total"], 2);

  // `--out -`: the sweep document on stdout, the table on stderr.
  ProcessResult dash = run({"eval", kGemm, tiny().string(), "--workloads", "M=70", "--out", "-"}, 3);
  EXPECT_EQ(ordered_json::parse(dash.out.text)["schema"], "ptxbench.sweep");
  EXPECT_TRUE(contains(dash.err.text, "time_us")) << dash.err.text;
}

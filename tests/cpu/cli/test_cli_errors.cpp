// The command line's errors, one taxonomy (issue 34): no GPU (eval's reason on stderr; suite run's
// SKIPPED and exit 5), an unreachable service (exit 3, naming it), a damaged store (exit 2, naming
// it), nvcc's errors once under the user's file name, and output paths ("-" is stdout; a bad path
// fails before any work). The built binary runs as a child process; nothing here needs a GPU.
#include <gtest/gtest.h>

#include <array>
#include <sstream>

#include "cpu/cli/cli_process.h"
#include "common/cuda_tools.h"
#include "common/json_check.h"

using namespace ptxbench;
using namespace ptxbench::test;

namespace {

const std::string kGemm = "gemm_n7168_k5120";

// Compiles in seconds and passes the compile stage's checks; its verdict needs a GPU.
const char* kTiny = R"(#include "ptxbench_abi.h"
__global__ void nothing() {}
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  nothing<<<1, 1, 0, stream>>>();
  return (int)cudaGetLastError();
}
)";

/// One compile cache for the whole file (the same two candidates compile once), and the files.
class CliErrors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { s_cache = std::make_unique<TempDir>("ptxbench-cli-errors-cache"); }
  static void TearDownTestSuite() { s_cache.reset(); }

  void SetUp() override {
    ASSERT_TRUE(fs::exists(ptxbench_binary())) << ptxbench_binary() << " missing: build the ptxbench target";
    write_file_atomic(tiny(), kTiny);
    fs::copy_file(fs::path(PTXBENCH_TEST_DATA) / "fixtures" / "gemm" / "compile_error.cu", broken());
  }

  [[nodiscard]] fs::path tiny() const { return dir.path() / "tiny.cu"; }
  [[nodiscard]] fs::path broken() const { return dir.path() / "broken_gemm.cu"; }
  [[nodiscard]] CliOptions options() const {
    CliOptions o;
    o.env.push_back("PTXBENCH_CACHE_DIR=" + s_cache->path().string());
    o.env.push_back("PTXBENCH_PYTHON=/nonexistent/python3");
    return o;
  }
  ProcessResult run(const std::vector<std::string>& args, int expected_exit) const {
    ProcessResult r = run_ptxbench(args, options());
    EXPECT_EQ(r.status.signal, 0) << describe_run(args, r);
    EXPECT_EQ(r.status.exit_code, expected_exit) << describe_run(args, r);
    return r;
  }
  /// Writes a suite of `cases` ({name, file, expected status}) and returns its path.
  [[nodiscard]] std::string suite(const std::vector<std::array<std::string, 3>>& cases) const {
    ordered_json list = ordered_json::array();
    for (const auto& [name, file, status] : cases) list.push_back({{"name", name}, {"file", file}, {"expect", {{"status", status}}}});
    fs::path path = dir.path() / "suite.json";
    write_file_atomic(path, ordered_json{{"definition", kGemm}, {"cases", list}}.dump(2));
    return path.string();
  }
  /// Skips the test on a host where evaluations can reach a GPU, or without nvcc.
  void require_no_gpu_but_nvcc() {
    if (find_cuda_tool("nvcc").empty()) GTEST_SKIP() << "no nvcc";
    ProcessResult env = run_ptxbench({"env", "--json"}, options());
    ASSERT_EQ(env.status.exit_code, 0) << describe_run({"env", "--json"}, env);
    if (!ordered_json::parse(env.out.text)["gpus"].empty()) GTEST_SKIP() << "this host has a GPU";
  }

  TempDir dir{"ptxbench-cli-errors"};
  static std::unique_ptr<TempDir> s_cache;
};

std::unique_ptr<TempDir> CliErrors::s_cache;

std::size_t count(const std::string& text, const std::string& fragment) {
  std::size_t n = 0;
  for (std::size_t at = text.find(fragment); at != std::string::npos; at = text.find(fragment, at + 1)) ++n;
  return n;
}

std::vector<ordered_json> json_lines(const std::string& text) {
  std::vector<ordered_json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(ordered_json::parse(line));
  return out;
}

}  // namespace

// Without a GPU the verdict is INFRA_ERROR (exit 3) and its reason is one line on stderr, in the
// table format and with --json alike (before, it was only inside the JSON).
TEST_F(CliErrors, EvalWithoutAGpuSaysWhyOnStderr) {
  require_no_gpu_but_nvcc();
  ProcessResult table = run({"eval", kGemm, tiny().string()}, 3);
  EXPECT_TRUE(contains(table.out.text, "INFRA_ERROR")) << table.out.text;
  EXPECT_TRUE(contains(table.err.text, "INFRA_ERROR tiny: no CUDA device 0")) << table.err.text;
  EXPECT_EQ(count(table.err.text, "INFRA_ERROR"), 1u) << table.err.text;  // one clear line

  ProcessResult json = run({"eval", kGemm, tiny().string(), "--json"}, 3);
  std::vector<ordered_json> lines = json_lines(json.out.text);
  ASSERT_EQ(lines.size(), 1u) << json.out.text;
  EXPECT_EQ(lines[0]["status"], "INFRA_ERROR");
  EXPECT_TRUE(contains(json.err.text, "INFRA_ERROR tiny: no CUDA device 0")) << json.err.text;
}

// Cases that need a GPU are SKIPPED (no GPU); a suite of only those exits 5 (pytest's "nothing
// collected"); the compile stage's verdicts still count; a real mismatch still fails (exit 1).
TEST_F(CliErrors, SuiteRunWithoutAGpuSkipsButStillChecksCompileVerdicts) {
  require_no_gpu_but_nvcc();
  ProcessResult only_gpu = run({"suite", "run", suite({{"tiny", "tiny.cu", "PASSED"}})}, 5);
  EXPECT_TRUE(contains(only_gpu.out.text, "SKIPPED (no GPU)")) << only_gpu.out.text;
  EXPECT_FALSE(contains(only_gpu.out.text, "MISMATCH")) << only_gpu.out.text;
  EXPECT_TRUE(contains(only_gpu.out.text, "0 of 0 verdicts as expected; 1 skipped (no CUDA device")) << only_gpu.out.text;

  ProcessResult mixed =
      run({"suite", "run", suite({{"tiny", "tiny.cu", "PASSED"}, {"broken", "broken_gemm.cu", "COMPILE_ERROR"}})}, 0);
  EXPECT_TRUE(contains(mixed.out.text, "ok (COMPILE_ERROR)")) << mixed.out.text;
  EXPECT_TRUE(contains(mixed.out.text, "1 of 1 verdicts as expected; 1 skipped")) << mixed.out.text;

  // Decided before the GPU, and wrong: a candidate expected to pass does not compile ...
  ProcessResult wrong = run({"suite", "run", suite({{"broken", "broken_gemm.cu", "PASSED"}})}, 1);
  EXPECT_TRUE(contains(wrong.out.text, "MISMATCH: status COMPILE_ERROR, expected PASSED")) << wrong.out.text;
  // ... or one expected not to compile does.
  ProcessResult compiled = run({"suite", "run", suite({{"tiny", "tiny.cu", "COMPILE_ERROR"}})}, 1);
  EXPECT_TRUE(contains(compiled.out.text, "MISMATCH: status INFRA_ERROR, expected COMPILE_ERROR")) << compiled.out.text;

  // With --json, stdout holds only the verdict lines; the summary goes to stderr.
  ProcessResult json = run({"suite", "run", suite({{"tiny", "tiny.cu", "PASSED"}}), "--json"}, 5);
  EXPECT_EQ(json_lines(json.out.text).size(), 1u) << json.out.text;
  EXPECT_TRUE(contains(json.err.text, "1 skipped")) << json.err.text;
}

TEST_F(CliErrors, AnUnknownOnlyCaseIsAUsageError) {
  ProcessResult r = run({"suite", "run", suite({{"tiny", "tiny.cu", "PASSED"}}), "--only", "tiny_typo"}, 2);
  EXPECT_TRUE(contains(r.err.text, "--only tiny_typo: no such case")) << r.err.text;
}

// nvcc's errors appear once, and name the user's file, not the compile stage's deleted temp file.
TEST_F(CliErrors, NvccErrorsArePrintedOnceUnderTheUsersFileName) {
  if (find_cuda_tool("nvcc").empty()) GTEST_SKIP() << "no nvcc";
  const std::string undefined = "identifier \"k_tile\" is undefined";
  for (int attempt = 0; attempt < 2; ++attempt) {  // a fresh build, then a cache hit
    ProcessResult r = run({"compile", broken().string()}, 1);
    EXPECT_EQ(count(r.out.text, undefined), 1u) << r.out.text;
    EXPECT_TRUE(contains(r.out.text, broken().string() + "(")) << r.out.text;
    EXPECT_FALSE(contains(r.out.text, "candidate.cu")) << r.out.text;
    EXPECT_FALSE(contains(r.out.text, "/build-")) << r.out.text;
  }
  ProcessResult json = run({"compile", broken().string(), "--json"}, 1);
  ordered_json j = ordered_json::parse(json.out.text);
  EXPECT_TRUE(contains(j["log"].get<std::string>(), broken().string() + "(")) << j.dump(2);

  // eval: the table's row, and nvcc's output on stderr, once (COMPILE_ERROR is a verdict: exit 0).
  ProcessResult eval = run({"eval", kGemm, broken().string()}, 0);
  EXPECT_TRUE(contains(eval.out.text, "COMPILE_ERROR")) << eval.out.text;
  EXPECT_EQ(count(eval.err.text, undefined), 1u) << eval.err.text;
  EXPECT_TRUE(contains(eval.err.text, broken().string() + "(")) << eval.err.text;
  EXPECT_FALSE(contains(eval.err.text, "/build-")) << eval.err.text;
}

// An unreachable service is the environment's problem (exit 3), and the message names its URL.
TEST_F(CliErrors, AnUnreachableServiceExitsThreeNamingIt) {
  const std::string url = "http://127.0.0.1:1";  // nothing listens on port 1
  ProcessResult eval = run({"eval", kGemm, tiny().string(), "--service", url}, 3);
  EXPECT_TRUE(contains(eval.err.text, "environment error")) << eval.err.text;
  EXPECT_TRUE(contains(eval.err.text, url)) << eval.err.text;
  EXPECT_FALSE(contains(eval.err.text, "internal error")) << eval.err.text;

  ProcessResult load = run({"suite", "load", suite({{"tiny", "tiny.cu", "PASSED"}}), "--service", url, "--count", "1"}, 3);
  EXPECT_TRUE(contains(load.err.text, url)) << load.err.text;
}

// A store that is not a SQLite database is bad input (exit 2) naming the file, for any command
// that opens it through the shared opener.
TEST_F(CliErrors, ADamagedStoreExitsTwoNamingIt) {
  fs::path junk = dir.path() / "runs.db";
  write_file_atomic(junk, std::string(8192, '#'));
  ProcessResult r = run({"run", "--list", "--store", junk.string()}, 2);
  EXPECT_TRUE(contains(r.err.text, junk.string() + " is not a SQLite database")) << r.err.text;
}

// `--out -`: the verdicts are the JSON lines on stdout, the table goes to stderr.
TEST_F(CliErrors, DashMeansStdout) {
  require_no_gpu_but_nvcc();
  ProcessResult r = run({"eval", kGemm, tiny().string(), "--out", "-"}, 3);
  std::vector<ordered_json> lines = json_lines(r.out.text);
  ASSERT_EQ(lines.size(), 1u) << r.out.text;
  EXPECT_EQ(lines[0]["status"], "INFRA_ERROR");
  EXPECT_TRUE(contains(r.err.text, "candidate")) << r.err.text;  // the table's header

  ProcessResult suite_run = run({"suite", "run", suite({{"tiny", "tiny.cu", "PASSED"}}), "--out", "-"}, 5);
  EXPECT_EQ(json_lines(suite_run.out.text).size(), 1u) << suite_run.out.text;
  EXPECT_TRUE(contains(suite_run.err.text, "SKIPPED (no GPU)")) << suite_run.err.text;

  // Two outputs for one stdout: a usage error.
  run({"eval", kGemm, tiny().string(), "--out", "-", "--json"}, 2);
  // A folder is needed: materialize refuses "-".
  ProcessResult mat = run({"suite", "materialize", suite({{"tiny", "tiny.cu", "PASSED"}}), "-"}, 2);
  EXPECT_TRUE(contains(mat.err.text, "a folder is needed")) << mat.err.text;
}

// An output path that cannot be written fails at once (exit 2), before any compile, evaluation or
// submission.
TEST_F(CliErrors, OutputPathsAreCheckedBeforeAnyWork) {
  TempDir cache("ptxbench-cli-untouched-cache");
  CliOptions o;
  o.env.push_back("PTXBENCH_CACHE_DIR=" + cache.path().string());
  fs::path file = dir.path() / "a_file";
  write_file_atomic(file, "x");
  std::vector<std::string> args = {"eval", kGemm, tiny().string(), "--out", file.string()};
  ProcessResult eval = run_ptxbench(args, o);
  EXPECT_EQ(eval.status.exit_code, 2) << describe_run(args, eval);
  EXPECT_TRUE(contains(eval.err.text, "--out " + file.string() + ": is a file, not a folder")) << eval.err.text;
  EXPECT_EQ(eval.out.text, "");                         // not even the table's header
  EXPECT_FALSE(fs::exists(cache.path() / "compile"));  // nothing was compiled

  // suite load: the output is checked before the service is contacted (which would be exit 3).
  fs::path nowhere = dir.path() / "no_such_folder" / "load.jsonl";
  ProcessResult load = run({"suite", "load", suite({{"tiny", "tiny.cu", "PASSED"}}), "--service", "http://127.0.0.1:1",
                            "--out", nowhere.string()},
                           2);
  EXPECT_TRUE(contains(load.err.text, "does not exist")) << load.err.text;
}

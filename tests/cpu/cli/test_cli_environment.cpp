// The command line on a new host (issue 34): where the data comes from (`--version`, `env`, the
// checkout around the working folder), and what `env` finds here. The binary runs as a child.
#include <gtest/gtest.h>

#include <sstream>

#include "cpu/cli/cli_process.h"
#include "common/cuda_tools.h"
#include "common/json_check.h"

using namespace ptxbench;
using namespace ptxbench::test;

namespace {

const fs::path kSource = PTXBENCH_SOURCE_DIR;

/// A second checkout: one definition with its workloads, the ABI header, a folder to work in.
struct SecondCheckout {
  TempDir dir{"ptxbench-clone"};
  SecondCheckout() {
    fs::create_directories(root() / "definitions");
    fs::create_directories(root() / "workloads");
    fs::create_directories(root() / "knowledge" / "abi");
    fs::create_directories(root() / "work" / "deeper");
    fs::copy_file(kSource / "definitions" / "gemm_n7168_k5120.json", root() / "definitions" / "gemm_n7168_k5120.json");
    fs::copy_file(kSource / "workloads" / "gemm_n7168_k5120.jsonl", root() / "workloads" / "gemm_n7168_k5120.jsonl");
    fs::copy(kSource / "knowledge" / "abi", root() / "knowledge" / "abi", fs::copy_options::recursive);
  }
  [[nodiscard]] fs::path root() const { return fs::canonical(dir.path()); }
  [[nodiscard]] std::string work() const { return (root() / "work" / "deeper").string(); }
};

std::size_t count(const std::string& text, const std::string& fragment) {
  std::size_t n = 0;
  for (std::size_t at = text.find(fragment); at != std::string::npos; at = text.find(fragment, at + 1)) ++n;
  return n;
}

ordered_json parse_stdout(const std::vector<std::string>& args, const ProcessResult& r) {
  try {
    return ordered_json::parse(r.out.text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not one JSON document: " << e.what() << "\n" << describe_run(args, r);
    return {};
  }
}

/// The first line of `text` that starts with `prefix`; "" when none does.
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

/// No Python probe (it may import torch for minutes): `env` lists Python as missing instead.
const std::string kNoPython = "PTXBENCH_PYTHON=/nonexistent/python3";

}  // namespace

TEST(CliEnvironment, VersionNamesTheDataRoot) {
  std::vector<std::string> args = {"--version"};
  ProcessResult r = run_ptxbench(args);
  ASSERT_EQ(r.status.exit_code, 0) << describe_run(args, r);
  EXPECT_TRUE(contains(r.out.text, "\ndata root: " + kSource.string() + " (PTXBENCH_HOME)\n")) << r.out.text;
}

TEST(CliEnvironment, EnvListsDataCacheToolsAndGpusAsTextAndJson) {
  TempDir cache("ptxbench-env-cache");
  CliOptions o;
  o.env.push_back("PTXBENCH_CACHE_DIR=" + cache.path().string());
  o.env.push_back(kNoPython);
  std::vector<std::string> args = {"env", "--json"};
  ProcessResult r = run_ptxbench(args, o);
  ASSERT_EQ(r.status.exit_code, 0) << describe_run(args, r);
  ordered_json env = parse_stdout(args, r);
  EXPECT_EQ(env["schema"], "ptxbench.env");
  EXPECT_EQ(env["data_root"]["path"], kSource.string());
  EXPECT_EQ(env["data_root"]["source"], "PTXBENCH_HOME");
  EXPECT_EQ(env["compile_cache"], (cache.path() / "compile").string());
  std::vector<std::string> tools;
  for (const auto& t : env["tools"]) {
    tools.push_back(t["name"].get<std::string>());
    // Found with a version, or missing with why: never an error.
    if (t["found"].get<bool>()) EXPECT_FALSE(t["version"].get<std::string>().empty()) << t.dump();
    else EXPECT_FALSE(t["missing"].get<std::string>().empty()) << t.dump();
  }
  EXPECT_EQ(tools, (std::vector<std::string>{"nvcc", "ncu", "compute-sanitizer", "cuobjdump", "redis-server"}));
  ASSERT_EQ(env["python"].size(), 3u);
  EXPECT_FALSE(env["python"][0]["found"].get<bool>()) << env["python"].dump();
  EXPECT_TRUE(contains(env["python"][0]["missing"].get<std::string>(), "/nonexistent/python3")) << env["python"].dump();
  std::vector<std::string> libraries;
  for (const auto& l : env["libraries"]) libraries.push_back(l["name"].get<std::string>());
  EXPECT_EQ(libraries, (std::vector<std::string>{"NVIDIA driver", "CUDA driver API", "CUDA runtime", "cuDNN"}));
  const bool no_gpu = env["gpus"].empty();
  if (no_gpu) {
    EXPECT_EQ(env["gpu_problem"].get<std::string>().rfind("no CUDA device: ", 0), 0u) << env.dump(2);
  }

  ProcessResult text = run_ptxbench({"env"}, o);
  ASSERT_EQ(text.status.exit_code, 0) << describe_run({"env"}, text);
  EXPECT_TRUE(contains(text.out.text, "data root:     " + kSource.string() + " (PTXBENCH_HOME)")) << text.out.text;
  EXPECT_TRUE(contains(text.out.text, "compile cache: " + (cache.path() / "compile").string())) << text.out.text;
  for (const auto& t : env["tools"]) {  // one line each: its version, or "missing"
    std::string line = line_starting(text.out.text, "  " + t["name"].get<std::string>() + " ");
    std::string expected = t["found"].get<bool>() ? t["version"].get<std::string>() : std::string("missing");
    EXPECT_TRUE(contains(line, expected)) << t.dump() << "\n" << text.out.text;
  }
  if (no_gpu) {
    EXPECT_TRUE(contains(text.out.text, "GPUs:\n  no CUDA device: ")) << text.out.text;
  }
  EXPECT_EQ(text.err.text, "");
}

// A binary built in one clone and run inside a second one reads the second clone's data, says so
// once on stderr, and names both; an explicit $PTXBENCH_HOME still wins (with a warning there).
TEST(CliEnvironment, ACheckoutAroundTheWorkingFolderIsTheDataRoot) {
  SecondCheckout clone;
  CliOptions o;
  o.env = {"PTXBENCH_HOME="};  // unset
  o.cwd = clone.work();
  std::vector<std::string> list = {"definitions", "list", "--json"};
  ProcessResult r = run_ptxbench(list, o);
  ASSERT_EQ(r.status.exit_code, 0) << describe_run(list, r);
  ordered_json defs = parse_stdout(list, r);
  ASSERT_EQ(defs.size(), 1u) << defs.dump();  // the clone's one definition, not the build tree's many
  EXPECT_EQ(defs[0]["name"], "gemm_n7168_k5120");
  EXPECT_TRUE(contains(r.err.text, "warning: data root is the checkout " + clone.root().string())) << r.err.text;
  EXPECT_TRUE(contains(r.err.text, kSource.string())) << r.err.text;

  o.env.push_back(kNoPython);
  ProcessResult env = run_ptxbench({"env", "--json"}, o);
  ASSERT_EQ(env.status.exit_code, 0) << describe_run({"env", "--json"}, env);
  ordered_json root = parse_stdout({"env", "--json"}, env)["data_root"];
  EXPECT_EQ(root["path"], clone.root().string());
  EXPECT_EQ(root["source"], "checkout above the working directory");
  EXPECT_TRUE(contains(root["warning"].get<std::string>(), kSource.string())) << root.dump();

  CliOptions home = o;
  home.env = {std::string("PTXBENCH_HOME=") + PTXBENCH_SOURCE_DIR};
  ProcessResult all = run_ptxbench(list, home);
  ASSERT_EQ(all.status.exit_code, 0) << describe_run(list, all);
  EXPECT_GT(parse_stdout(list, all).size(), 1u);
  EXPECT_TRUE(contains(all.err.text, "the checkout " + clone.root().string() + " above the working directory is not used"))
      << all.err.text;
}

// The compile stage reads its ABI header from the data root several times: one warning only.
TEST(CliEnvironment, TheDataRootWarningIsPrintedOnce) {
  if (find_cuda_tool("nvcc").empty()) GTEST_SKIP() << "no nvcc";
  SecondCheckout clone;
  TempDir cache("ptxbench-env-cache");
  write_file_atomic(fs::path(clone.work()) / "tiny.cu", "#include \"ptxbench_abi.h\"\n"
                                                         "PTXB_EXPORT int ptxb_run(const ptxb_tensor*, int32_t, cudaStream_t) { return 0; }\n");
  CliOptions o;
  o.env = {"PTXBENCH_HOME=", "PTXBENCH_CACHE_DIR=" + cache.path().string()};
  o.cwd = clone.work();
  ProcessResult r = run_ptxbench({"compile", "tiny.cu"}, o);
  EXPECT_EQ(count(r.err.text, "warning: data root"), 1u) << describe_run({"compile", "tiny.cu"}, r);
}

// A malformed data file: exit 2, and the message names the file (not the JSON parser's alone).
TEST(CliEnvironment, AMalformedDefinitionIsNamed) {
  SecondCheckout clone;
  fs::path broken = clone.root() / "definitions" / "broken.json";
  write_file_atomic(broken, "{\"name\": \"broken\",\n");
  CliOptions o;
  o.env = {"PTXBENCH_HOME=" + clone.root().string()};
  std::vector<std::string> args = {"definitions", "list"};
  ProcessResult r = run_ptxbench(args, o);
  EXPECT_EQ(r.status.exit_code, 2) << describe_run(args, r);
  EXPECT_TRUE(contains(r.err.text, broken.string() + ": malformed JSON")) << r.err.text;
}

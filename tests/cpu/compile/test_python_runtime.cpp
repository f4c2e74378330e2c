// What the Triton GPU side needs to know of the host's Python (src/compile/python_runtime.*) and
// what it reads back from its build pass (src/compile/triton_build.*), without torch or a GPU: the
// probe's report, the clear errors of an interpreter that cannot run Triton candidates, the build
// report's strict reading, and the kernel names that the kernel-origin check cannot trust.
#include <gtest/gtest.h>

#include "common/error.h"
#include "common/fs.h"
#include "compile/python_runtime.h"
#include "compile/triton_build.h"
#include "compile/triton_check.h"

using namespace ptxbench;

namespace {
// The report is one line; the JSON here is written over several for reading.
std::string probe_line(std::string json) {
  for (char& ch : json)
    if (ch == '\n') ch = ' ';
  return "noise printed by an import\nPTXB-PROBE " + json + "\n";
}
}  // namespace

TEST(PythonRuntime, ReadsTheProbeAndSaysWhatIsMissing) {
  PythonRuntime r = parse_python_runtime_probe(
      "python3", probe_line(R"({"executable": "/opt/torch/.venv/bin/python3", "version": "3.12.3", "prefix": "/opt/torch/.venv",
        "base_prefix": "/usr", "sys_path": ["/usr/lib/python312.zip", "/usr/lib/python3.12", "/opt/torch/.venv/lib/python3.12/site-packages"],
        "shared": true, "libpython": "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0", "torch": "2.11.0+cu130", "torch_cuda": "13.0",
        "triton": "3.6.0"})"));
  EXPECT_EQ(r.version, "3.12.3");
  EXPECT_EQ(r.missing(), "");
  EXPECT_NO_THROW(require_triton_runtime(r));
  // The sandbox must show the venv; /usr is a system folder already.
  EXPECT_EQ(r.readable_dirs(), std::vector<std::string>{"/opt/torch/.venv"});

  r.torch.reset();
  r.torch_error = "ModuleNotFoundError: No module named 'torch'";
  EXPECT_NE(r.missing().find("cannot import torch (ModuleNotFoundError"), std::string::npos) << r.missing();
  try {
    require_triton_runtime(r);
    FAIL() << "no torch must throw";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("PTXBENCH_PYTHON"), std::string::npos) << e.what();
  }
  r.shared = false;
  EXPECT_NE(r.missing().find("--enable-shared"), std::string::npos) << r.missing();
  EXPECT_THROW(parse_python_runtime_probe("python3", "no report at all"), InputError);
}

TEST(PythonRuntime, ProbesThisHostsInterpreter) {
  const PythonRuntime* r = nullptr;
  try {
    r = &python_runtime(default_python_command());
  } catch (const EnvironmentError& e) {
    GTEST_SKIP() << e.what();
  }
  EXPECT_FALSE(r->executable.empty());
  EXPECT_FALSE(r->sys_path.empty());
  if (r->shared) EXPECT_FALSE(r->libpython.empty()) << "a shared build names its libpython";
  if (!r->torch) EXPECT_THROW(require_triton_runtime(*r), EnvironmentError);
  // Probed once: the same object comes back.
  EXPECT_EQ(&python_runtime(default_python_command()), r);
}

TEST(TritonBuild, WithoutTorchTheBuilderRefusesToStartAndSaysWhy) {
  const PythonRuntime* r = nullptr;
  try {
    r = &python_runtime(default_python_command());
  } catch (const EnvironmentError& e) {
    GTEST_SKIP() << e.what();
  }
  if (r->torch && r->triton) GTEST_SKIP() << "this host's Python has torch and Triton";
  TritonBuildOptions o;
  o.shim = fs::path(PTXBENCH_BUILD_DIR) / "lib" / "libptxb_triton_shim.so";
  o.script = fs::path(PTXBENCH_SOURCE_DIR) / "src/python/ptxb_triton/triton_build.py";
  try {
    TritonBuilder builder(o);
    FAIL() << "a Python without torch/Triton cannot build Triton candidates";
  } catch (const EnvironmentError& e) {
    std::string what = e.what();
    EXPECT_TRUE(what.find("torch") != std::string::npos || what.find("libpython") != std::string::npos) << what;
  }
}

TEST(TritonBuild, ReadsTheBuildReportStrictly) {
  TritonBuildResult r;
  bool infra = true;
  read_triton_build_report(
      "compiling...\nPTXB-BUILD {\"status\": \"ok\", \"message\": \"m\", \"python\": \"3.12.3\", \"torch\": \"2.11.0\", "
      "\"triton\": \"3.6.0\", \"kernels\": [{\"name\": \"_gemm_abt_kernel\", \"cubin\": \"ABC/_gemm_abt_kernel.cubin\", "
      "\"num_warps\": 8, \"shared\": 163872}, {\"name\": \"_gemm_abt_kernel\", \"cubin\": \"DEF/_gemm_abt_kernel.cubin\"}]}\n",
      r, infra);
  EXPECT_FALSE(infra);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.triton, "3.6.0");
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].num_warps, 8);
  EXPECT_EQ(r.kernel_names(), std::vector<std::string>{"_gemm_abt_kernel"});  // two specializations, one name
  r.dir = "/cache/ab/abc";
  EXPECT_EQ(r.cubins()[1], fs::path("/cache/ab/abc/triton_cache/DEF/_gemm_abt_kernel.cubin"));

  read_triton_build_report("\nPTXB-BUILD {\"status\": \"compile_error\", \"message\": \"ptxas failed\", \"kernels\": []}", r, infra);
  EXPECT_EQ(r.status, TritonBuildStatus::compile_error);
  read_triton_build_report("\nPTXB-BUILD {\"status\": \"runtime_error\", \"message\": \"no torch\", \"infra\": true}", r, infra);
  EXPECT_TRUE(infra);
  EXPECT_THROW(read_triton_build_report("nothing", r, infra), InputError);
  EXPECT_THROW(read_triton_build_report("\nPTXB-BUILD {\"status\": \"fine\"}", r, infra), InputError);
  // A cubin outside the cache folder (a candidate writing the report) is refused.
  EXPECT_THROW(read_triton_build_report("\nPTXB-BUILD {\"status\": \"ok\", \"kernels\": [{\"name\": \"k\", \"cubin\": \"../../etc/x\"}]}",
                                        r, infra),
               InputError);
}

TEST(TritonBuild, KernelNamesAForeignKernelCouldShareAreRefused) {
  EXPECT_EQ(suspicious_triton_kernel_name("_gemm_abt_kernel"), "");
  EXPECT_NE(suspicious_triton_kernel_name("_ZN2at6native29vectorized_elementwise_kernelILi4EEEvv"), "");
  EXPECT_NE(suspicious_triton_kernel_name("ptxb_internal_fill"), "");
}

TEST(TritonBuild, TheShimsConfigurationPutsThePathsOnLinesOfTheirOwn) {
  PythonRuntime r;
  r.libpython = "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0";
  r.base_prefix = "/usr";
  r.sys_path = {"/opt/torch/.venv/lib/python3.12/site-packages"};
  std::string text = triton_runtime_config(r, "/usr/local/nvidia/lib64").dump(2);
  // The shim reads these two before Python runs, by this exact spelling.
  EXPECT_NE(text.find("\"libpython\": \"/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"python_home\": \"/usr\""), std::string::npos) << text;
  EXPECT_NE(text.find("TRITON_LIBCUDA_PATH"), std::string::npos) << text;
}

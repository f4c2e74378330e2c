// The Hopper pack compiles for sm_90a header by header (as a model would include it), the expert
// kernel builds through the compile stage with only the pack, and the parameters are complete.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/cuda_tools.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "compile/compiler.h"

using namespace ptxbench;

namespace {
const fs::path kPack = fs::path(PTXBENCH_SOURCE_DIR) / "knowledge/hopper";
}

TEST(HopperPack, EveryHeaderCompilesOnItsOwnForSm90a) {
  TempDir dir;
  std::string source;
  for (const auto& e : fs::directory_iterator(kPack / "include/ptxb"))
    source += "#include \"ptxb/" + e.path().filename().string() + "\"\n";
  source += "__global__ void k() {}\n";
  write_file_atomic(dir.path() / "all.cu", source);
  ProcessSpec spec;
  spec.argv = {find_cuda_tool("nvcc"), "-gencode", "arch=compute_90a,code=sm_90a", "-std=c++17", "-c",
               "-I" + (kPack / "include").string(), "-o", (dir.path() / "all.o").string(), (dir.path() / "all.cu").string()};
  auto r = run_process(spec, 180);
  EXPECT_TRUE(r.status.success()) << r.err.text;
  for (const auto& e : fs::directory_iterator(kPack / "include/ptxb")) {
    // Each header stands alone: its own includes are enough.
    write_file_atomic(dir.path() / "one.cu", "#include \"ptxb/" + e.path().filename().string() + "\"\n");
    spec.argv = {find_cuda_tool("nvcc"), "-gencode", "arch=compute_90a,code=sm_90a", "-std=c++17", "-E",
                 "-I" + (kPack / "include").string(), "-o", "/dev/null", (dir.path() / "one.cu").string()};
    auto one = run_process(spec, 60);
    EXPECT_TRUE(one.status.success()) << e.path() << ": " << one.err.text;
  }
}

TEST(HopperPack, ExpertBuildsWithThePackAndUsesItsMechanisms) {
  TempDir cache;
  CompileOptions o;
  o.cache_dir = cache.path();
  CompileResult r = Compiler(o).compile(read_file(kPack / "experts/gemm_n7168_k5120.cu"));
  ASSERT_TRUE(r.ok()) << r.message << "\n" << r.log;
  // As inlined in the expert (v9b, results/expert_gemm.md): k-steps of 4 × m64n256k16 (the peeled
  // first k-tiles that store the previous tile's boxes, the main loop, the register-epilogue path of
  // stream-K pieces) and the tile boundary's halves of 2 × 4 × m64n128k16 (the last k-step, the
  // handoff).
  EXPECT_EQ(r.ptx.count("wgmma.mma_async"), 64);
  EXPECT_GT(r.ptx.count("cp.async.bulk.tensor:load"), 0);
  EXPECT_GT(r.ptx.count("cp.async.bulk.tensor:store"), 0) << "the epilogue stores by TMA";
  EXPECT_GT(r.ptx.count("barrier.cluster"), 0) << "2×1 clusters";
  EXPECT_EQ(r.ptx.count("setmaxnreg"), 2);
  ASSERT_EQ(r.ptxas.kernels.size(), 1u);
  EXPECT_EQ(r.ptxas.kernels[0].spill_store_bytes, 0);
  EXPECT_TRUE(r.ptxas.warnings.empty());
}

TEST(HopperPack, ParametersHaveTheFieldsPromptsRelyOn) {
  for (const char* gpu : {"h100", "h200"}) {
    auto j = nlohmann::json::parse(read_file(kPack / "params" / (std::string(gpu) + ".json")));
    for (const char* key : {"gpu", "arch", "compute", "clocks", "throughput_dense", "memory", "sm_resources", "cluster", "tma", "wgmma"})
      EXPECT_TRUE(j.contains(key)) << gpu << " lacks " << key;
    EXPECT_NE(j["nvcc_target"].dump().find("sm_90a"), std::string::npos) << gpu;
  }
}

// Tensor-core FLOP coverage (src/sass/mma_coverage.*): shapes parsed from a real listing, the
// share of the workload's FLOPs, a token wgmma beside SIMT work, and kernels of several shapes.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "sass/mma_coverage.h"

using namespace ptxbench;

TEST(MmaCoverage, ShapesComeFromTheListingPerKernel) {
  auto shapes = parse_mma_shapes(read_file(fs::path(PTXBENCH_TEST_DATA) / "data/sass_sample.txt"));
  ASSERT_EQ(shapes.count("_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii"), 1u);
  EXPECT_EQ(shapes["_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii"], (std::vector<MmaShape>{{64, 128, 16}}));
  EXPECT_EQ(shapes.count("_Z6helperPf"), 0u) << "a kernel without MMA has no shapes";
}

TEST(MmaCoverage, AFullTensorCoreGemmCoversItsFlops) {
  // M = N = 128, K = 64: 2·128·128·64 FLOPs = 4 warpgroups × 4 k-steps... expressed as instructions.
  const double flops = 2.0 * 128 * 128 * 64;
  const double instructions = flops / MmaShape{64, 128, 16}.flops();  // 8
  std::map<std::string, OpcodeCounts> executed = {{"k", {{"HGMMA", static_cast<long long>(instructions * 128)}}}};
  Coverage c = tensor_core_coverage(executed, {{"k", {{64, 128, 16}}}}, flops);
  ASSERT_TRUE(c.available);
  EXPECT_TRUE(c.exact());
  EXPECT_DOUBLE_EQ(c.share_min(), 1.0);
}

TEST(MmaCoverage, ATokenWgmmaBesideSimtWorkCoversAlmostNothing) {
  const double flops = 2.0 * 8192 * 7168 * 5120;
  std::map<std::string, OpcodeCounts> executed = {{"simt", {{"FFMA", 1ll << 40}}}, {"token", {{"HGMMA", 128}}}};
  Coverage c = tensor_core_coverage(executed, {{"token", {{64, 64, 16}}}}, flops);
  ASSERT_TRUE(c.available);
  EXPECT_LT(c.share_min(), 1e-6);
}

TEST(MmaCoverage, SeveralShapesGiveARangeAndAMissingShapeNothing) {
  std::map<std::string, OpcodeCounts> executed = {{"k", {{"HGMMA", 128 * 10}}}};
  Coverage c = tensor_core_coverage(executed, {{"k", {{64, 64, 16}, {64, 256, 16}}}}, 10 * MmaShape{64, 256, 16}.flops());
  ASSERT_TRUE(c.available);
  EXPECT_FALSE(c.exact());
  EXPECT_DOUBLE_EQ(c.share_min(), 0.25);
  EXPECT_DOUBLE_EQ(c.share_max(), 1.0);
  Coverage none = tensor_core_coverage(executed, {}, 1.0);
  EXPECT_FALSE(none.available);
  EXPECT_NE(none.note.find("no MMA shape"), std::string::npos);
}

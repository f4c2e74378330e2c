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

// A kernel of two shapes (v9b's HGMMA.64x256 k-steps and 64x128 halves): with each shape's warp
// executions counted, its coverage is exact; counts that do not add up to the kernel's GMMA warp
// executions, or that fall outside the range, leave the range; predicated-off lanes count less.
TEST(MmaCoverage, EachShapesExecutionsMakeAMixedKernelExact) {
  const MmaShape big{64, 256, 16}, half{64, 128, 16};
  const long long n_big = 300, n_half = 100;  // warpgroup instructions
  const double flops = n_big * big.flops() + n_half * half.flops();
  std::map<std::string, OpcodeCounts> threads = {{"k", {{"HGMMA", (n_big + n_half) * 128}}}};
  std::map<std::string, std::vector<MmaShape>> shapes = {{"k", {half, big}}};
  ShapedMmaCounts shaped{{{"k", {{"HGMMA.64x256x16.F32.BF16", n_big * 4}, {"HGMMA.64x128x16.F32.BF16", n_half * 4}, {"FFMA", 9}}}},
                         {{"k", {{"HGMMA", (n_big + n_half) * 4}, {"FFMA", 9}}}}};
  Coverage c = tensor_core_coverage(threads, shapes, flops, shaped);
  ASSERT_TRUE(c.available);
  EXPECT_TRUE(c.exact()) << c.note;
  EXPECT_DOUBLE_EQ(c.share_min(), 1.0);
  EXPECT_NE(c.note.find("exact"), std::string::npos);

  Coverage range = tensor_core_coverage(threads, shapes, flops);  // no shaped counts
  EXPECT_FALSE(range.exact());
  EXPECT_LT(range.share_min(), 0.6);

  ShapedMmaCounts short_count = shaped;  // a shape's executions missing: they do not add up
  short_count.warp_with_modifiers_per_kernel["k"].erase("HGMMA.64x128x16.F32.BF16");
  EXPECT_FALSE(tensor_core_coverage(threads, shapes, flops, short_count).exact());

  ShapedMmaCounts unknown = shaped;  // a GMMA spelling without a shape
  unknown.warp_with_modifiers_per_kernel["k"]["HGMMA.F32.BF16"] = 4;
  unknown.warp_per_kernel["k"]["HGMMA"] += 4;
  EXPECT_FALSE(tensor_core_coverage(threads, shapes, flops, unknown).exact());

  // Half the lanes of every HGMMA predicated off: half the thread-true count, half the FLOPs.
  std::map<std::string, OpcodeCounts> half_threads = {{"k", {{"HGMMA", (n_big + n_half) * 64}}}};
  Coverage halved = tensor_core_coverage(half_threads, shapes, flops, shaped);
  EXPECT_TRUE(halved.exact());
  EXPECT_DOUBLE_EQ(halved.share_min(), 0.5);
}

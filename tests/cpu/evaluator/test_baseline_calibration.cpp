// The per-GPU baseline calibration (src/evaluator/baseline_calibration.*): the first measurement
// calibrates, one within the margin joins it, one slower than the margin is refused (and left
// out, so a sick GPU cannot drag the calibration along), and the record keeps the recent ones.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "evaluator/baseline_calibration.h"

using namespace ptxbench;

TEST(BaselineCalibration, FirstCalibratesThenSlowBaselinesAreRefused) {
  TempDir dir("calibration-test");
  BaselineCalibration cal("NVIDIA H200@0000:19:00.0", dir.path());
  BaselineJudgement first = cal.judge("gemm/m8192/cublaslt", 760.0, 0.15);
  EXPECT_FALSE(first.calibrated_us.has_value());
  EXPECT_TRUE(first.within && first.recorded);
  BaselineJudgement ok = cal.judge("gemm/m8192/cublaslt", 800.0, 0.15);
  EXPECT_DOUBLE_EQ(*ok.calibrated_us, 760.0);
  EXPECT_TRUE(ok.within);
  BaselineJudgement slow = cal.judge("gemm/m8192/cublaslt", 1000.0, 0.15);
  EXPECT_FALSE(slow.within);
  EXPECT_FALSE(slow.recorded);
  EXPECT_NEAR(slow.ratio(), 1000.0 / 780.0, 1e-9);  // median of 760 and 800
  // Another workload has its own record; the store survives a new object (another worker).
  EXPECT_FALSE(BaselineCalibration("NVIDIA H200@0000:19:00.0", dir.path()).judge("mha/s4096", 2400, 0.15).calibrated_us);
  BaselineJudgement again = BaselineCalibration("NVIDIA H200@0000:19:00.0", dir.path()).judge("gemm/m8192/cublaslt", 770.0, 0.15);
  EXPECT_DOUBLE_EQ(*again.calibrated_us, 780.0);
}

TEST(BaselineCalibration, KeepsOnlyTheRecentMeasurements) {
  TempDir dir("calibration-test");
  BaselineCalibration cal("gpu", dir.path());
  for (int i = 0; i < 20; ++i) cal.judge("w", 100.0 + i * 0.5, 0.5);
  auto doc = ordered_json::parse(read_file(cal.file()));
  EXPECT_EQ(doc["w"].size(), BaselineCalibration::kKept);
  EXPECT_DOUBLE_EQ(doc["w"].back().get<double>(), 109.5);
}

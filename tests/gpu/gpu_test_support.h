// GPU tests skip (never pass) without a usable sm_90a device.
#pragma once

#include <gtest/gtest.h>

#include "gpu/gpu_info.h"

namespace ptxbench::testing {

inline bool have_hopper() {
  if (cuda_device_count() == 0) return false;
  return query_gpu(0).arch() == "sm_90a";
}

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_hopper()) GTEST_SKIP() << "no sm_90a CUDA device on this host";
  }
};

}  // namespace ptxbench::testing

// The service's idle check reads NVML utilization: on the test GPU it must read 0 with nothing
// running and more than 0 while a kernel spins (what a runner left behind by a killed service does).
#include <cuda_runtime.h>

#include <chrono>
#include <thread>

#include "gpu/nvml_probe.h"
#include "gpu_test_support.h"
#include "service/eval_backend.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {
__global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
}  // namespace

class NvmlIdle : public GpuTest {};

TEST_F(NvmlIdle, UtilizationReadsIdleThenBusyWhileAKernelSpins) {
  char bus[32] = {0};
  ASSERT_EQ(cudaDeviceGetPCIBusId(bus, sizeof bus, 0), cudaSuccess);
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  NvmlReading idle = read_nvml(bus);
  ASSERT_TRUE(idle.available) << idle.note;
  ASSERT_TRUE(idle.utilization_percent.has_value());
  EXPECT_EQ(*idle.utilization_percent, 0u);
  EXPECT_EQ(judge_idle({*idle.utilization_percent}), "");
  // ~2.5 s of spinning at ~2 GHz on one block: the GPU counts as busy for the whole period.
  spin<<<1, 32>>>(5'000'000'000LL);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  NvmlReading busy = read_nvml(bus);
  ASSERT_TRUE(busy.utilization_percent.has_value());
  EXPECT_GT(*busy.utilization_percent, 50u);
  EXPECT_NE(judge_idle({*busy.utilization_percent}), "");
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

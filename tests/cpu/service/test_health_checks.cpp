// Health-check logic that needs no GPU: NVML clock-event decoding and verdicts, the canary rule,
// and NVML being absent (this machine has no driver).
#include <gtest/gtest.h>

#include "gpu/nvml_probe.h"
#include "service/eval_backend.h"

using namespace ptxbench;

TEST(HealthChecks, ClockEventReasonsDecodeAndOnlyHardwareThrottlingIsSick) {
  EXPECT_EQ(clock_event_reason_names(0x1 | 0x4), (std::vector<std::string>{"gpu_idle", "sw_power_cap"}));
  NvmlReading r;
  r.available = true;
  r.temperature_c = 60;
  r.event_reasons = 0x4;  // software power cap under load: normal
  EXPECT_EQ(health_problem(r), "");
  r.event_reasons = 0x8;
  EXPECT_NE(health_problem(r).find("hw_slowdown"), std::string::npos);
  r.event_reasons = 0x40;
  EXPECT_NE(health_problem(r).find("hw_thermal_slowdown"), std::string::npos);
  r.event_reasons = 0;
  r.temperature_c = 93;
  EXPECT_NE(health_problem(r).find("temperature 93"), std::string::npos);
  NvmlReading missing;
  EXPECT_EQ(health_problem(missing), "") << "no NVML is not a sick GPU";
}

TEST(HealthChecks, NvmlAbsentIsReportedNotThrown) {
  NvmlReading r = read_nvml("0000:00:00.0");
  if (r.available) GTEST_SKIP() << "this host has NVML";
  EXPECT_FALSE(r.note.empty());
  EXPECT_EQ(to_json(r)["available"], false);
}

TEST(HealthChecks, CanaryWithinFifteenPercentOfCalibration) {
  EXPECT_EQ(judge_canary(800, 800), "");
  EXPECT_EQ(judge_canary(800, 919), "");
  EXPECT_NE(judge_canary(800, 921).find("15% over"), std::string::npos);
  EXPECT_EQ(judge_canary(800, 600), "") << "faster is not sick";
}

// Held idle by the service, the GPU must show a sample with no kernel running; the first samples may
// still cover the service's own last work.
TEST(HealthChecks, AGpuHeldIdleMustReadIdle) {
  EXPECT_EQ(judge_idle({}), "") << "no NVML readings: nothing to judge";
  EXPECT_EQ(judge_idle({35, 0}), "");
  EXPECT_EQ(judge_idle({0, 0, 0}), "");
  std::string busy = judge_idle({100, 100, 97});
  EXPECT_NE(busy.find("busy with work from outside the service"), std::string::npos);
  EXPECT_NE(busy.find("100%, 100%, 97%"), std::string::npos);
}

// Per-call activity and its checks against the worker's own observations (src/timing/
// call_activity.*, call_integrity.*): attribution of device records to calls and stray work, the
// host bound on reported spans (honest calls pass, a forged or padded span does not; a Triton
// candidate's calibrated launch path is allowed, capped), and the launch comparison between the
// profiled and the timed calls.
#include <gtest/gtest.h>

#include "timing/call_activity.h"
#include "timing/call_integrity.h"

using namespace ptxbench;

namespace {
DeviceRecord kernel(const std::string& name, uint64_t start, uint64_t end, uint32_t grid = 132) {
  DeviceRecord r;
  r.kind = DeviceRecord::Kind::kernel;
  r.name = name;
  r.start_ns = start;
  r.end_ns = end;
  r.grid = {grid, 1, 1};
  r.block = {256, 1, 1};
  return r;
}
}  // namespace

TEST(CallActivity, RecordsGoToTheirCallAndTheRestIsStray) {
  std::vector<CallWindow> windows = {{7, 1000, 5000}, {8, 6000, 9000}};
  DeviceRecord memset;
  memset.kind = DeviceRecord::Kind::memset;
  memset.start_ns = 500;
  memset.end_ns = 1200;  // our preparation seen through clock skew: not the call's
  std::vector<DeviceRecord> records = {kernel("a", 1100, 2000), kernel("b", 2500, 4000), memset,
                                       kernel("a", 6100, 7000), kernel("sneak", 5200, 5900)};
  Attribution a = attribute_records(records, windows);
  ASSERT_EQ(a.calls.size(), 2u);
  EXPECT_EQ(a.calls[0].index, 7u);
  EXPECT_DOUBLE_EQ(a.calls[0].span_us, 2.9);  // 1100 .. 4000 ns
  ASSERT_EQ(a.calls[0].kernels.size(), 2u);
  EXPECT_EQ(a.calls[0].kernels[0].name, "a");
  EXPECT_DOUBLE_EQ(a.calls[1].span_us, 0.9);
  EXPECT_EQ(a.stray, (std::vector<std::string>{"sneak"})) << "work between calls is stray";
  Attribution none = attribute_records({}, {{1, 0, 10}});
  EXPECT_TRUE(none.calls[0].empty);
}

TEST(CallActivity, ActivitiesRoundTripThroughJson) {
  CallActivity a{3, 12.5, false, {KernelLaunch{"k", {1, 2, 3}, {128, 1, 1}, 4096}}};
  CallActivity b = call_activity_from_json(to_json(a));
  EXPECT_EQ(b.index, 3u);
  EXPECT_EQ(b.kernels, a.kernels);
  EXPECT_EQ(describe(a.kernels[0]), "k<<<(1,2,3),(128,1,1),4096>>>");
}

TEST(HostBound, HonestCallsPassAndUnexplainedTimeDoesNot) {
  IntegrityPolicy p;
  // Probe: spans of 200 µs, the worker saw 240 µs around each: 40 µs of overhead.
  double overhead = calibrate_overhead({240, 241, 239, 260}, {200, 200, 200, 200});
  EXPECT_NEAR(overhead, 40.0, 0.6);
  // An honest 800 µs kernel: the same overhead.
  HostBound honest = check_host_bound({842, 838, 845}, {800, 799, 801}, overhead, p);
  EXPECT_TRUE(honest.passed()) << honest.excess_us;
  // The span reported 300 µs short of what ran (forged), or 300 µs of host work before the launch.
  HostBound forged = check_host_bound({1140, 1138, 1145}, {800, 799, 801}, overhead, p);
  EXPECT_FALSE(forged.passed());
  EXPECT_NEAR(forged.excess_us, 300.0, 2.0);
  EXPECT_NEAR(forged.allowed_us, p.host_slack_us + p.host_slack_fraction * 800, 0.1);
  // A span longer than everything the worker waited for cannot be true.
  HostBound impossible = check_host_bound({500}, {800}, overhead, p);
  EXPECT_EQ(impossible.impossible_calls, 1);
  EXPECT_FALSE(impossible.passed());
}

TEST(HostBound, OnlyTheExcessBeyondTheSlackIsChargedAndOneHiccupCostsNothing) {
  IntegrityPolicy p;
  const double overhead = 40.0;
  // Forged 300 µs short: each call is charged what the slack does not cover, so the forgery gains
  // at most the slack.
  HostBound forged = check_host_bound({1140, 1138, 1145}, {800, 799, 801}, overhead, p);
  std::vector<double> charged = charge_host_clock({800, 799, 801}, forged);
  ASSERT_EQ(charged.size(), 3u);
  EXPECT_NEAR(forged.charge_us(), forged.excess_us - forged.allowed_us, 1e-9);
  EXPECT_NEAR(charged[0], 800 + 300 - forged.allowed_us, 2.0);
  EXPECT_GT(charged[1], 799 + 300 - forged.allowed_us - 2.0);
  // Honest calls, one of which waited 7 ms on the operating system: the median ignores it.
  HostBound hiccup = check_host_bound({842, 7838, 845, 839, 841}, {800, 799, 801, 800, 800}, overhead, p);
  EXPECT_TRUE(hiccup.passed()) << hiccup.excess_us;
  EXPECT_EQ(hiccup.charge_us(), 0.0);
  EXPECT_EQ(charge_host_clock({800, 799}, hiccup), (std::vector<double>{800, 799}));
}

// The adversarial case hide_time_on_a_third_of_the_calls: time hidden from the spans on a
// minority of calls leaves the median gap honest, so nothing is charged; it leaves the median span
// (the reported time) honest too, so nothing is gained. On a majority it is charged.
TEST(HostBound, TimeHiddenOnAMinorityOfCallsIsNeitherChargedNorGained) {
  IntegrityPolicy p;
  const double overhead = 200.0;
  std::vector<double> host, span;
  for (int i = 0; i < 150; ++i) {
    span.push_back(800.0);
    host.push_back(800.0 + overhead + (i % 3 == 0 ? 1000.0 : 0.0));
  }
  HostBound third = check_host_bound(host, span, overhead, p);
  EXPECT_EQ(third.charge_us(), 0.0) << third.excess_us;
  for (int i = 0; i < 150; ++i) host[i] = 800.0 + overhead + (i % 3 != 0 ? 1000.0 : 0.0);
  HostBound two_thirds = check_host_bound(host, span, overhead, p);
  EXPECT_NEAR(two_thirds.charge_us(), 1000.0 - two_thirds.allowed_us, 1e-6);
}

// A Triton candidate's slack also allows Triton's own launch path (docs/triton.md): the probe's
// calibrated excess is not charged, host work beyond it is, call for call.
TEST(HostBound, TritonsLaunchPathIsAllowedAndHostWorkBeyondItIsCharged) {
  IntegrityPolicy p;
  const double overhead = 150.0;
  std::vector<double> spans(150, 900.0), launch_path(150), looping(150);
  for (int i = 0; i < 150; ++i) {
    launch_path[i] = 900.0 + overhead + 130.0 + (i % 5);  // Triton's launch path: ~130 µs a call
    looping[i] = launch_path[i] + 1000.0;                  // plus a 1 ms Python loop in run
  }
  const double slack = p.host_slack_us + p.host_slack_fraction * 900.0;
  HostBound plain = check_host_bound(launch_path, spans, overhead, p);
  EXPECT_NEAR(plain.charge_us(), 132.0 - slack, 1e-6) << "without an allowance the launch path is charged";
  EXPECT_EQ(plain.launch_allowance_us, 0.0);
  const double allowance = 128.0;  // what the probe measured
  HostBound allowed = check_host_bound(launch_path, spans, overhead, p, allowance);
  EXPECT_DOUBLE_EQ(allowed.launch_allowance_us, allowance);
  EXPECT_NEAR(allowed.allowed_us, slack + allowance, 1e-9);
  EXPECT_EQ(allowed.charge_us(), 0.0);
  EXPECT_EQ(charge_host_clock(spans, allowed), spans);
  HostBound loop = check_host_bound(looping, spans, overhead, p, allowance);
  EXPECT_NEAR(loop.charge_us(), 1132.0 - slack - allowance, 1e-6) << "the loop is charged in full";
  EXPECT_NEAR(charge_host_clock(spans, loop).front(), 900.0 + 1004.0 - slack, 5.0);
  // A negative allowance (a caller's slip) allows nothing.
  EXPECT_DOUBLE_EQ(check_host_bound(launch_path, spans, overhead, p, -50.0).allowed_us, slack);
  EXPECT_EQ(to_json(allowed)["launch_allowance_us"], allowance);
}

// The allowance is the median of the probe's recorded excesses, never below 0 nor above the cap,
// so that neither noise nor a broken calibration hands out free host time.
TEST(LaunchAllowance, MedianOfTheCalibrationsClampedToTheCap) {
  LaunchAllowance none = launch_allowance({}, 300.0);
  EXPECT_EQ(none.allowance_us, 0.0);
  EXPECT_FALSE(none.median_us.has_value());
  LaunchAllowance typical = launch_allowance({131.0, 118.5, 140.0}, 300.0);
  EXPECT_DOUBLE_EQ(typical.allowance_us, 131.0);
  EXPECT_DOUBLE_EQ(*typical.median_us, 131.0);
  EXPECT_FALSE(typical.capped);
  EXPECT_DOUBLE_EQ(launch_allowance({100.0, 120.0}, 300.0).allowance_us, 110.0);
  LaunchAllowance broken = launch_allowance({5000.0, 120.0, 4000.0}, 300.0);
  EXPECT_DOUBLE_EQ(broken.allowance_us, 300.0);
  EXPECT_DOUBLE_EQ(*broken.median_us, 4000.0);
  EXPECT_TRUE(broken.capped);
  LaunchAllowance noise = launch_allowance({-20.0, -5.0, 10.0}, 300.0);
  EXPECT_EQ(noise.allowance_us, 0.0);
  EXPECT_DOUBLE_EQ(*noise.median_us, -5.0);
  EXPECT_EQ(launch_allowance({120.0}, 0.0).allowance_us, 0.0) << "a cap of 0 turns the allowance off";
  IntegrityPolicy p;
  EXPECT_DOUBLE_EQ(p.triton_launch_allowance_max_us, p.profile.triton_host_path_us)
      << "the host bound's cap and the profile check's Triton slack are one number";
  EXPECT_EQ(p.to_json()["triton_launch_allowance_max_us"], p.triton_launch_allowance_max_us);
}

TEST(LaunchCheck, ProfiledAndTimedCallsMustLaunchTheSameKernels) {
  KernelLaunch gemm{"gemm", {132, 1, 1}, {384, 1, 1}, 200000};
  KernelLaunch token{"token_wgmma", {1, 1, 1}, {128, 1, 1}, 0};
  EXPECT_EQ(launch_difference({gemm}, {gemm}), "");
  std::string d = launch_difference({gemm, token}, {gemm});
  EXPECT_NE(d.find("the profiled call launched token_wgmma"), std::string::npos) << d;
  KernelLaunch smaller = gemm;
  smaller.grid = {66, 1, 1};
  d = launch_difference({gemm}, {smaller});
  EXPECT_NE(d.find("a timed call launched gemm<<<(66,1,1)"), std::string::npos) << d;
  EXPECT_EQ(launch_set({token, gemm}), launch_set({gemm, token})) << "order across streams does not matter";
}

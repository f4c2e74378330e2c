// The profiled call held against the timed calls (src/timing/profile_binding.h): numbers in the
// shape of the adversarial suite's profile-switch cases and of honest kernels.
#include <gtest/gtest.h>

#include "timing/profile_binding.h"

using namespace ptxbench;

namespace {
// An honest wgmma GEMM: the profiled call and the timed calls agree within a few percent, and the
// hardware saw every GMMA and TMA instruction the patched pass counted.
ProfileEvidence honest() {
  ProfileEvidence e;
  e.profiled_us = 960.0;
  e.timed_us = 1000.0;
  e.sass_gmma = 4'000'000;
  e.hw_gmma = 4'000'000.0;
  e.sass_tma = 300'000;
  e.hw_tma = 310'000.0;
  return e;
}
}  // namespace

TEST(ProfileBinding, AnHonestKernelsProfileDescribesItsTimedCalls) {
  ProfileBinding b = bind_profile(honest(), ProfileBindingPolicy{});
  EXPECT_TRUE(b.checked);
  EXPECT_TRUE(b.holds) << (b.reasons.empty() ? "" : b.reasons.front());
  ASSERT_TRUE(b.time_ratio.has_value());
  EXPECT_NEAR(*b.time_ratio, 1000.0 / 960.0, 1e-12);
}

// The call-count switch: the profiled (first) call ran the tensor cores, the timed calls FFMA.
TEST(ProfileBinding, TimedCallsFarSlowerThanTheProfiledOneVoidTheClaims) {
  ProfileEvidence e = honest();
  e.timed_us = 30'000.0;
  ProfileBinding b = bind_profile(e, ProfileBindingPolicy{});
  EXPECT_FALSE(b.holds);
  ASSERT_EQ(b.reasons.size(), 1u);
  EXPECT_NE(b.reasons[0].find("did not run what was timed"), std::string::npos);
}

// Extra work under the profiler only (a full load of garbage wgmma beside the real work).
TEST(ProfileBinding, AProfiledCallFarSlowerThanTheTimedOnesVoidsTheClaims) {
  ProfileEvidence e = honest();
  e.profiled_us = 2500.0;
  ProfileBinding b = bind_profile(e, ProfileBindingPolicy{});
  EXPECT_FALSE(b.holds);
  EXPECT_NE(b.reasons.at(0).find("work the timed calls did not"), std::string::npos);
}

// Within the factor, or within the slack that the worker's clock cannot resolve, it holds: a
// 20 us kernel whose span carries a few launch gaps must not lose its claims.
TEST(ProfileBinding, SmallDifferencesAndShortKernelsHold) {
  ProfileEvidence e = honest();
  e.timed_us = 1.45 * 960.0;
  EXPECT_TRUE(bind_profile(e, ProfileBindingPolicy{}).holds);
  e.profiled_us = 12.0;
  e.timed_us = 45.0;  // 3.75x, but 33 us apart: under factor x profile + slack (58 us)
  EXPECT_TRUE(bind_profile(e, ProfileBindingPolicy{}).holds);
  e.timed_us = 70.0;
  EXPECT_FALSE(bind_profile(e, ProfileBindingPolicy{}).holds);
}

// A Triton candidate's timed calls carry Python's launch path (charged by the host bound), which
// its profiled launches do not: a short Triton kernel keeps its claims, a CUDA one of the same
// numbers would not, and a Triton switch far beyond the allowance is still caught.
TEST(ProfileBinding, ATritonCandidatesLaunchPathIsAllowedForAndNoMore) {
  ProfileEvidence e = honest();
  e.profiled_us = 15.0;
  e.timed_us = 15.0 + 127.0;  // the Triton GEMM's charge on the H200 at a small M
  EXPECT_FALSE(bind_profile(e, ProfileBindingPolicy{}).holds);
  e.triton = true;
  EXPECT_TRUE(bind_profile(e, ProfileBindingPolicy{}).holds);
  e.timed_us = 30'000.0;
  EXPECT_FALSE(bind_profile(e, ProfileBindingPolicy{}).holds);
}

// The instruction-timing detector: the patched pass ran wgmma, the unpatched passes (where the
// hardware counts and the duration come from) ran FFMA. The times agree; the counts do not.
TEST(ProfileBinding, HardwareCountsShortOfThePatchedCountsVoidTheClaims) {
  ProfileEvidence e = honest();
  e.hw_gmma = 0.0;
  ProfileBinding b = bind_profile(e, ProfileBindingPolicy{});
  EXPECT_FALSE(b.holds);
  EXPECT_NE(b.reasons.at(0).find("hardware counted 0 GMMA"), std::string::npos);
  e = honest();
  e.hw_gmma = 0.9 * 4'000'000.0;  // a tenth of the claimed tensor work never ran unpatched
  EXPECT_FALSE(bind_profile(e, ProfileBindingPolicy{}).holds);
  e = honest();
  e.hw_tma = 0.0;  // TMA only when patched: the paper rule's D_TMA claim is void too
  EXPECT_FALSE(bind_profile(e, ProfileBindingPolicy{}).holds);
}

// A hardware counter that reports per warpgroup rather than per warp is a calibration constant.
TEST(ProfileBinding, TheHardwareRatioIsAPolicyConstant) {
  ProfileEvidence e = honest();
  e.hw_gmma = 1'000'000.0;
  ProfileBindingPolicy p;
  EXPECT_FALSE(bind_profile(e, p).holds);
  p.hw_gmma_per_warp_inst = 0.25;
  EXPECT_TRUE(bind_profile(e, p).holds);
}

// What cannot be checked is said, never silently passed as checked: no durations, no hardware
// counters (an ncu that refused them), or the check off.
TEST(ProfileBinding, MissingEvidenceIsNotedAndTheCheckCanBeOff) {
  ProfileEvidence e = honest();
  e.profiled_us.reset();
  e.hw_gmma.reset();
  ProfileBinding b = bind_profile(e, ProfileBindingPolicy{});
  EXPECT_TRUE(b.checked);
  EXPECT_TRUE(b.holds);
  EXPECT_EQ(b.notes.size(), 2u);
  EXPECT_FALSE(b.time_ratio.has_value());
  ProfileBindingPolicy off;
  off.enabled = false;
  e.timed_us = 1e6;
  EXPECT_FALSE(bind_profile(e, off).checked);
  // A kernel with no tensor or TMA work at all has nothing for the counters to confirm.
  ProfileEvidence simt;
  simt.profiled_us = 15'000.0;
  simt.timed_us = 15'300.0;
  ProfileBinding s = bind_profile(simt, ProfileBindingPolicy{});
  EXPECT_TRUE(s.holds);
  EXPECT_TRUE(s.notes.empty());
}

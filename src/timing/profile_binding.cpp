#include "timing/profile_binding.h"

#include <fmt/format.h>

namespace ptxbench {

ordered_json ProfileBindingPolicy::to_json() const {
  return {{"enabled", enabled}, {"time_factor", time_factor}, {"time_slack_us", time_slack_us},
          {"triton_host_path_us", triton_host_path_us}, {"count_share", count_share},
          {"hw_gmma_per_warp_inst", hw_gmma_per_warp_inst}};
}

namespace {
// A hardware count that falls short of what the patched pass claims: the patched pass ran
// instructions the unpatched passes did not.
void hold_count(ProfileBinding& b, const char* what, long long patched, const std::optional<double>& hw, double per_inst,
                double share) {
  if (patched <= 0) return;
  if (!hw) {
    b.notes.push_back(fmt::format("the hardware count of {} was not collected: its claim rests on the time alone", what));
    return;
  }
  const double expected = static_cast<double>(patched) * per_inst;
  if (*hw < share * expected)
    b.reasons.push_back(fmt::format("the hardware counted {:.0f} {} warp instructions where the patched profile counted {} "
                                    "(the kernel ran another path when it was not instrumented)",
                                    *hw, what, patched));
}
}  // namespace

ProfileBinding bind_profile(const ProfileEvidence& e, const ProfileBindingPolicy& policy) {
  ProfileBinding b;
  if (!policy.enabled) return b;
  b.checked = true;
  if (!e.profiled_us) {
    b.notes.push_back("the profile has no launch durations: the time binding was not checked");
  } else {
    const double p = *e.profiled_us, t = e.timed_us;
    const double slack = policy.time_slack_us + (e.triton ? policy.triton_host_path_us : 0.0);
    if (p > 0) b.time_ratio = t / p;
    if (t > policy.time_factor * p + slack)
      b.reasons.push_back(fmt::format("the timed calls took {:.1f} us (median) against the profiled call's {:.1f} us of "
                                      "device time: more than {:.2g} times, so the profiled call did not run what was timed",
                                      t, p, policy.time_factor));
    else if (p > policy.time_factor * t + policy.time_slack_us)
      b.reasons.push_back(fmt::format("the profiled call took {:.1f} us of device time against the timed calls' {:.1f} us "
                                      "(median): more than {:.2g} times, so it ran work the timed calls did not",
                                      p, t, policy.time_factor));
  }
  hold_count(b, "GMMA", e.sass_gmma, e.hw_gmma, policy.hw_gmma_per_warp_inst, policy.count_share);
  hold_count(b, "TMA", e.sass_tma, e.hw_tma, 1.0, policy.count_share);
  b.holds = b.reasons.empty();
  return b;
}

}  // namespace ptxbench

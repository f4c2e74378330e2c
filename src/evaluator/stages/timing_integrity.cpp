#include "evaluator/stages/timing_integrity.h"

#include <fmt/format.h>

#include "evaluator/baseline_calibration.h"
#include "timing/call_integrity.h"
#include "timing/profile_binding.h"

namespace ptxbench {

std::string charge_host_clock(TimingRun& run, double launch_allowance_us) {
  const TimedSeries& s = run.series;
  const bool launch = run.in.build.launch.has_value();
  HostBound bound = check_host_bound(s.host, s.spans, calibrate_overhead(s.base_host, s.base_spans), run.in.options.integrity,
                                     launch_allowance_us);
  run.rec.host_charge = HostChargeRecord{bound.overhead_us, bound.excess_us, bound.allowed_us, bound.charge_us(),
                                         launch ? std::optional<double>(bound.launch_allowance_us) : std::nullopt};
  if (bound.charge_us() <= 0.0) return "";
  for (auto& trial_spans : run.series.cand) trial_spans = charge_host_clock(trial_spans, bound);
  return fmt::format(
      "charged {:.0f} us per call by the worker's own clock: it saw {:.0f} us per call (median) beyond the reported "
      "device span and the calibrated overhead of a call ({:.0f} us), {:.0f} us more than the slack allowed{} (host "
      "work inside {}, such as a per-call allocation or printing, costs time like device work)",
      bound.charge_us(), bound.excess_us, bound.overhead_us, bound.charge_us(),
      launch ? fmt::format(", which includes {:.0f} us for Triton's own launch path", bound.launch_allowance_us) : "",
      run.in.build.triton ? "run" : "ptxb_run");
}

std::optional<Failure> check_timed_kernels(TimingRun& run, const std::optional<ProfileSeen>& profile) {
  const TimedSeries& s = run.series;
  run.section.kernels = std::vector<std::string>(s.seen_kernels.begin(), s.seen_kernels.end());
  if (s.launches)
    for (const auto& k : *s.launches) run.rec.launches.push_back(describe(k));
  if (!run.in.build.trusted)
    for (const auto& k : s.seen_kernels)
      if (!run.in.build.kernels.count(k))
        return Failure{Status::BANNED_API, "a kernel that is not in the candidate's own module ran in a timed call: " + k};
  if (profile && s.launches)
    if (std::string d = launch_difference(launch_set(profile->launches), *s.launches); !d.empty())
      return Failure{Status::TIMING_ANOMALY, "the profiled call and the timed calls launched different kernels: " + d +
                                                 " (what the runtime-SASS counts describe must be what was timed)"};
  return std::nullopt;
}

std::optional<std::string> bind_profile_claims(TimingRun& run, const std::optional<ProfileSeen>& profile, double timed_us) {
  if (!profile) return std::nullopt;
  ProfileEvidence e = profile->evidence;
  e.timed_us = timed_us;
  e.triton = run.in.build.triton;
  ProfileBinding bound = bind_profile(e, run.in.options.integrity.profile);
  if (!bound.checked) return std::nullopt;
  run.rec.profile_check = ProfileCheckRecord{bound.holds, bound.reasons,  bound.notes, e.profiled_us, e.timed_us,
                                             bound.time_ratio, e.sass_gmma, e.sass_tma, e.hw_gmma,     e.hw_tma};
  if (bound.holds) return std::nullopt;
  return bound.reasons.front();
}

std::optional<Failure> judge_baseline(TimingRun& run, double baseline_median_us) {
  const ResolvedWorkload& w = run.in.workload;
  BaselineJudgement judged = BaselineCalibration(run.in.calibration_key)
                                 .judge(w.definition->name + "/" + w.workload.uuid + "/" + run.baseline_name, baseline_median_us,
                                        run.in.options.integrity.baseline_margin);
  run.rec.baseline_calibration =
      CalibrationRecord{judged.calibrated_us, judged.measured_us, judged.margin, judged.within, judged.recorded};
  if (judged.within) return std::nullopt;
  return Failure{Status::INFRA_ERROR,
                 fmt::format("the baseline ran {:.1f}% slower than this GPU's calibration ({:.1f} us against {:.1f} us, margin "
                             "{:.0f}%): the GPU is throttled, sick or shared; the evaluation must be re-run, it is not scored",
                             (judged.ratio() - 1) * 100, judged.measured_us, *judged.calibrated_us, judged.margin * 100)};
}

}  // namespace ptxbench

// The Triton launch path's calibration (src/evaluator/triton_launch_calibration.*, docs/triton.md
// "What the timing means for a Triton candidate"): the key names everything the path depends on,
// the store keeps each GPU's probe measurements apart from the baseline's, evaluations measure
// until enough are recorded, the verdict's record says what was allowed and where it came from,
// and the probe is a valid Triton candidate of every definition (it is timed as one).
#include <gtest/gtest.h>

#include <set>

#include "common/fs.h"
#include "common/sha256.h"
#include "compile/triton_build.h"
#include "compile/triton_check.h"
#include "definitions/catalog.h"
#include "evaluator/baseline_calibration.h"
#include "evaluator/triton_launch_calibration.h"
#include "verdict/feedback.h"
#include "verdict/verdict.h"

using namespace ptxbench;

namespace {

TritonLaunchKey key(int nargs = 3) {
  return TritonLaunchKey{"3.11.7", "2.9.0+cu128", "3.6.0", 12080, nargs, std::string(64, 'a')};
}

}  // namespace

TEST(TritonLaunchCalibration, TheKeyNamesEverythingTheLaunchPathDependsOn) {
  const std::string base = key().to_string();
  EXPECT_NE(base.find("python 3.11.7"), std::string::npos) << base;
  EXPECT_NE(base.find("triton 3.6.0"), std::string::npos) << base;
  EXPECT_NE(base.find("3 tensors"), std::string::npos) << base;
  std::set<std::string> keys = {base};
  TritonLaunchKey k = key();
  k.python = "3.12.1";
  keys.insert(k.to_string());
  k = key();
  k.torch = "2.8.0";
  keys.insert(k.to_string());
  k = key();
  k.triton = "3.5.1";
  keys.insert(k.to_string());
  k = key();
  k.cuda_driver = 13000;
  keys.insert(k.to_string());
  keys.insert(key(9).to_string());
  k = key();
  k.probe_sha256 = std::string(64, 'b');
  keys.insert(k.to_string());
  EXPECT_EQ(keys.size(), 7u) << "each part of the key makes a calibration of its own";
}

TEST(TritonLaunchCalibration, MeasuresUntilEnoughAreRecordedAndKeepsTheRecentOnes) {
  TempDir dir("launch-calibration-test");
  TritonLaunchCalibration cal("NVIDIA H200@0000:19:00.0", dir.path());
  EXPECT_TRUE(cal.recorded(key()).empty());
  EXPECT_TRUE(wants_launch_measurement(0, 3));
  EXPECT_EQ(cal.record(key(), 131.0), (std::vector<double>{131.0}));
  EXPECT_EQ(cal.record(key(), 118.5), (std::vector<double>{131.0, 118.5}));
  EXPECT_TRUE(wants_launch_measurement(cal.recorded(key()).size(), 3));
  cal.record(key(), 140.0);
  EXPECT_FALSE(wants_launch_measurement(cal.recorded(key()).size(), 3)) << "three recorded: the cache decides";
  EXPECT_FALSE(wants_launch_measurement(0, 0)) << "a policy that wants none never measures";
  // Another worker of the GPU sees the same record; another key and another GPU have their own.
  EXPECT_EQ(TritonLaunchCalibration("NVIDIA H200@0000:19:00.0", dir.path()).recorded(key()),
            (std::vector<double>{131.0, 118.5, 140.0}));
  EXPECT_TRUE(cal.recorded(key(5)).empty());
  EXPECT_TRUE(TritonLaunchCalibration("NVIDIA H200@0000:2a:00.0", dir.path()).recorded(key()).empty());
  for (int i = 0; i < 20; ++i) cal.record(key(), 100.0 + i);
  std::vector<double> kept = cal.recorded(key());
  ASSERT_EQ(kept.size(), TritonLaunchCalibration::kKept);
  EXPECT_DOUBLE_EQ(kept.back(), 119.0);
  EXPECT_DOUBLE_EQ(kept.front(), 111.0);
}

// The launch calibration and the baseline's calibration of one GPU live in files of their own: a
// workload key can never read a probe's excess as a baseline time.
TEST(TritonLaunchCalibration, ItsStoreIsApartFromTheBaselines) {
  TempDir dir("launch-calibration-test");
  TritonLaunchCalibration launch("gpu@0", dir.path());
  BaselineCalibration baseline("gpu@0", dir.path());
  EXPECT_NE(launch.file(), baseline.file());
  launch.record(key(), 120.0);
  EXPECT_FALSE(baseline.judge(key().to_string(), 760.0, 0.15).calibrated_us.has_value());
  EXPECT_EQ(launch.recorded(key()), (std::vector<double>{120.0}));
  // A damaged store recalibrates rather than stopping evaluations.
  write_file_atomic(launch.file(), "{not json");
  EXPECT_TRUE(launch.recorded(key()).empty());
  EXPECT_EQ(launch.record(key(), 125.0), (std::vector<double>{125.0}));
}

TEST(TritonLaunchCalibration, TheRecordSaysWhatWasAllowedAndWhereItCameFrom) {
  const fs::path store = "/cache/calibration/gpu.triton_launch.json";
  LaunchAllowanceRecord measured = launch_allowance_record({131.0, 118.5, 140.0}, 140.0, {150.0, 138.0, 133.0}, key(), store, 300.0);
  EXPECT_DOUBLE_EQ(measured.allowance_us, 131.0);
  EXPECT_EQ(measured.source, "measured");
  EXPECT_EQ(measured.measured_us, 140.0);
  EXPECT_EQ(measured.key, key().to_string());
  EXPECT_EQ(measured.store, store.string());
  EXPECT_DOUBLE_EQ(measured.cap_us, 300.0);
  LaunchAllowanceRecord cached = launch_allowance_record({131.0, 118.5, 140.0}, std::nullopt, {}, key(), store, 300.0);
  EXPECT_EQ(cached.source, "cached");
  EXPECT_FALSE(cached.measured_us.has_value());
  LaunchAllowanceRecord none = launch_allowance_record({}, std::nullopt, {}, key(), store, 300.0);
  EXPECT_EQ(none.source, "uncalibrated");
  EXPECT_EQ(none.allowance_us, 0.0);
  LaunchAllowanceRecord broken = launch_allowance_record({9000.0}, 9000.0, {9000.0}, key(), store, 300.0);
  EXPECT_DOUBLE_EQ(broken.allowance_us, 300.0);
  EXPECT_TRUE(broken.capped);
}

// The record and the host charge's allowance read back from a verdict; CUDA verdicts and older ones
// have neither; the feedback says how much of the allowed time was Triton's launch path.
TEST(TritonLaunchCalibration, TheVerdictReadsBackTheAllowanceAndTheFeedbackTellsIt) {
  Verdict v;
  v.status = Status::PASSED;
  v.arch = "sm_90a";
  v.definition = "gemm_n7168_k5120";
  v.workload_label = "M=8192";
  TimingSection& t = v.stages.timing.emplace();
  TimingResult& r = t.result.emplace();
  r.candidate.mean_us = 930.0;
  r.baseline.mean_us = 737.0;
  r.speedup = 0.79;
  IntegrityRecord& in = t.integrity.emplace();
  in.spot_rows = 8;
  in.spot_checked_calls = 150;
  in.host_charge = HostChargeRecord{151.0, 140.0, 58.0 + 131.0, 0.0, 131.0};
  in.triton_launch_path =
      launch_allowance_record({131.0, 118.5, 140.0}, 140.0, {150.0, 138.0, 133.0}, key(), "/cache/gpu.triton_launch.json", 300.0);
  ordered_json doc = v.to_json();
  const ordered_json& integrity = doc["stages"]["timing"]["integrity"];
  EXPECT_EQ(integrity["host_charge"]["launch_allowance_us"], 131.0);
  EXPECT_EQ(integrity["triton_launch_path"]["source"], "measured");
  EXPECT_EQ(integrity["triton_launch_path"]["measured_trials_us"].size(), 3u);
  Verdict back = Verdict::from_json(doc);
  EXPECT_EQ(back.to_json(), doc);
  ASSERT_TRUE(back.stages.timing->integrity->triton_launch_path.has_value());
  EXPECT_DOUBLE_EQ(back.stages.timing->integrity->triton_launch_path->allowance_us, 131.0);
  EXPECT_EQ(back.stages.timing->integrity->triton_launch_path->calibrations_us, (std::vector<double>{131.0, 118.5, 140.0}));
  std::string text = render_feedback(v);
  EXPECT_NE(text.find("of which 131 us for Triton's own launch path"), std::string::npos) << text;

  in.triton_launch_path.reset();
  in.host_charge->launch_allowance_us.reset();
  ordered_json cuda = v.to_json();
  EXPECT_FALSE(cuda["stages"]["timing"]["integrity"].contains("triton_launch_path"));
  EXPECT_FALSE(cuda["stages"]["timing"]["integrity"]["host_charge"].contains("launch_allowance_us"));
  EXPECT_EQ(Verdict::from_json(cuda).to_json(), cuda);
  EXPECT_EQ(render_feedback(v).find("launch path"), std::string::npos);
}

// The probe is timed as a Triton candidate of the definition under evaluation: it passes the static
// checks with every definition's argument count (run takes the tensors as a candidate's does) and
// names its kernel nothing the kernel-origin checks reserve.
TEST(TritonLaunchCalibration, TheProbeIsAValidTritonCandidateOfEveryDefinition) {
  std::string probe = triton_launch_probe_source();
  EXPECT_EQ(probe, read_file(fs::path(PTXBENCH_SOURCE_DIR) / "src/python/ptxb_triton/launch_probe.py"));
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  std::set<int> arities;
  for (const auto& def : catalog.definitions()) arities.insert(static_cast<int>(def.inputs.size() + def.outputs.size()));
  ASSERT_GE(arities.size(), 3u);
  for (int nargs : arities) {
    TritonCheckOptions o;
    o.sandbox = Enforcement::off;
    o.expected_args = nargs;
    CompileResult r = TritonChecker(o).check(probe);
    EXPECT_EQ(r.status, CompileStatus::ok) << nargs << " tensors: " << r.message;
    EXPECT_EQ(r.kernels, (std::vector<std::string>{"launch_probe_kernel"}));
  }
  EXPECT_EQ(suspicious_triton_kernel_name("launch_probe_kernel"), "");
}

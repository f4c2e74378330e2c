// What a worker uses to evaluate one request: the real evaluator on its GPU, or — for CPU-only
// tests of the service (`--fake-gpus`) — a stand-in whose verdicts are dictated by markers in the
// source, so scheduling, durability and failure handling can be tested without a GPU.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json_check.h"
#include "service/eval_request.h"

namespace ptxbench {

// Complete where a backend is implemented or called; this header is also compiled by nvcc in
// C++17 (a GPU test), which the verdict's headers are not written for.
struct Verdict;

/// One health check of a GPU (docs/design.md §8): a problem found directly (clock throttling, temperature,
/// a canary that failed), or the canary's time, which the worker compares with the calibration.
struct HealthReport {
  std::string problem;              ///< empty: no problem found directly
  std::optional<double> canary_us;  ///< the canary kernel's time, when it ran and passed
  std::string calibration_key;      ///< names the physical GPU (model + PCI bus id)
  ordered_json detail = ordered_json::object();
};

/// Canary tolerance: slower than calibration by more than this is unhealthy.
inline constexpr double kCanaryTolerance = 0.15;
/// Empty when `measured_us` is within tolerance of `calibration_us`, else the problem.
std::string judge_canary(double calibration_us, double measured_us, double tolerance = kCanaryTolerance);

/// The GPU held idle by the service (every worker locked out) must show no kernel activity:
/// `utilization_percent` holds NVML readings one sample period apart. Empty when one of them is 0
/// (idle; earlier ones may still cover the service's own last work), else the problem: another
/// process, such as a runner a killed service left behind, shares the GPU and would skew timings.
std::string judge_idle(const std::vector<unsigned>& utilization_percent);

class EvalBackend {
 public:
  virtual ~EvalBackend() = default;
  /// The verdict; never throws for a bad candidate (our own failures become INFRA_ERROR).
  virtual Verdict evaluate(const EvalRequest& request) = 0;
  /// The compile stage alone, on the CPU (a check worker, TaskLane::check): the verdict of a
  /// candidate that fails it, nullopt for one that passes on to a GPU worker. Never throws for a
  /// bad candidate.
  virtual std::optional<Verdict> check(const EvalRequest& request) = 0;
  /// A stand-in that measures nothing: the worker marks its own verdicts (INFRA_ERROR) as fake too.
  [[nodiscard]] virtual bool fake() const { return false; }
  /// Checks the GPU; run at worker start and after an evaluation that was killed or crashed.
  virtual HealthReport check_health() = 0;
};

/// Markers: PTXB_FAKE_STATUS=<STATUS> (default PASSED), PTXB_FAKE_SECONDS=<s> (default 0.05),
/// PTXB_FAKE_SPEEDUP=<x> (a PASSED verdict's speedup, target instruction met),
/// PTXB_FAKE_CRASH (the worker process aborts), PTXB_FAKE_HANG (never returns). Its check stage
/// fails a candidate whose status marker is a compile-stage one (COMPILE_ERROR, BANNED_API,
/// ABI_ERROR) and passes every other; PTXB_FAKE_CHECK_CRASH aborts a check worker.
/// PTXB_FAKE_BREAKS_GPU makes the next health check fail; $PTXBENCH_FAKE_SICK_DEVICES (comma list)
/// names devices whose every health check fails.
class FakeEvalBackend final : public EvalBackend {
 public:
  /// With a `gpu_lock` path the fake holds it like the real evaluator: shared while it "works",
  /// then exclusive for a short "timing" part; the verdict records both intervals (epoch seconds).
  explicit FakeEvalBackend(int device, std::string gpu_lock = "") : m_device(device), m_gpu_lock(std::move(gpu_lock)) {}
  Verdict evaluate(const EvalRequest& request) override;
  std::optional<Verdict> check(const EvalRequest& request) override;
  HealthReport check_health() override;
  [[nodiscard]] bool fake() const override { return true; }

 private:
  int m_device;
  std::string m_gpu_lock;
  bool m_broken = false;
};

}  // namespace ptxbench

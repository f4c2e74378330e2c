#include "service/eval_backend.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "common/clock.h"
#include "verdict/verdict.h"
#include "evaluator/gpu_lock.h"

namespace ptxbench {
namespace {
std::string marker(const std::string& source, const std::string& key) {
  auto pos = source.find(key + "=");
  if (pos == std::string::npos) return "";
  pos += key.size() + 1;
  auto end = source.find_first_of(" \t\r\n*/;", pos);
  return source.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}
}  // namespace

std::string judge_canary(double calibration_us, double measured_us, double tolerance) {
  if (calibration_us <= 0 || measured_us <= calibration_us * (1.0 + tolerance)) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "canary took %.1f us, %.0f%% over its calibration of %.1f us", measured_us,
                100.0 * (measured_us / calibration_us - 1.0), calibration_us);
  return buf;
}

std::string judge_idle(const std::vector<unsigned>& utilization_percent) {
  if (utilization_percent.empty()) return "";
  for (unsigned u : utilization_percent)
    if (u == 0) return "";
  std::string seen;
  for (unsigned u : utilization_percent) seen += (seen.empty() ? "" : ", ") + std::to_string(u) + "%";
  return "the GPU is busy with work from outside the service: NVML utilization " + seen +
         " while the service held it idle (a process left running on it? see nvidia-smi)";
}

HealthReport FakeEvalBackend::check_health() {
  HealthReport h;
  h.calibration_key = "fake-gpu" + std::to_string(m_device);
  h.canary_us = 100.0;
  h.detail = {{"fake", true}};
  std::string sick = std::getenv("PTXBENCH_FAKE_SICK_DEVICES") ? std::getenv("PTXBENCH_FAKE_SICK_DEVICES") : "";
  std::string me = std::to_string(m_device);
  for (std::size_t start = 0; start <= sick.size();) {
    std::size_t end = std::min(sick.find(',', start), sick.size());
    if (sick.substr(start, end - start) == me) h.problem = "fake device " + me + " is sick";
    start = end + 1;
  }
  if (m_broken) h.problem = "a fake evaluation broke fake device " + me;
  return h;
}

std::optional<Verdict> FakeEvalBackend::check(const EvalRequest& r) {
  if (r.source.find("PTXB_FAKE_CHECK_CRASH") != std::string::npos) std::abort();
  const std::optional<Status> status = parse_status(marker(r.source, "PTXB_FAKE_STATUS"));
  if (!status || !is_compile_stage(*status)) return std::nullopt;
  Verdict v;
  v.status = *status;
  v.message = "fake compile stage of a " + to_string(r.language) + " candidate on the CPU (no compiler used)";
  v.definition = r.definition;
  v.workload_label = r.workload;
  v.started_at = utc_now_iso8601();
  v.fake_backend = true;
  v.extra["checked_by"] = "check worker";
  return v;
}

Verdict FakeEvalBackend::evaluate(const EvalRequest& r) {
  if (r.source.find("PTXB_FAKE_BREAKS_GPU") != std::string::npos) m_broken = true;
  if (r.source.find("PTXB_FAKE_CRASH") != std::string::npos) std::abort();
  if (r.source.find("PTXB_FAKE_HANG") != std::string::npos)
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  std::string status = marker(r.source, "PTXB_FAKE_STATUS");
  std::string seconds = marker(r.source, "PTXB_FAKE_SECONDS");
  double work_s = seconds.empty() ? 0.05 : std::stod(seconds);
  GpuLock lock(m_gpu_lock);
  ordered_json holds = ordered_json::object();
  {
    GpuLock::Hold shared = lock.acquire(GpuLock::Mode::shared);
    double t0 = epoch_seconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(lock.enabled() ? work_s * 0.8 : work_s));
    holds["shared"] = {t0, epoch_seconds()};
  }
  if (lock.enabled()) {
    GpuLock::Hold exclusive = lock.acquire(GpuLock::Mode::exclusive);
    double t0 = epoch_seconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(work_s * 0.2));
    holds["exclusive"] = {t0, epoch_seconds()};
  }
  Verdict v;
  v.status = parse_status(status.empty() ? "PASSED" : status).value_or(Status::INFRA_ERROR);
  // The language the request named, so that tests see it reach the backend.
  v.message = "fake evaluation of a " + to_string(r.language) + " candidate on device " + std::to_string(m_device) +
              " (no GPU used)";
  if (std::string speedup = marker(r.source, "PTXB_FAKE_SPEEDUP"); !speedup.empty() && v.status == Status::PASSED) {
    v.speedup = std::stod(speedup);
    v.target_instruction_correct = true;
  }
  v.definition = r.definition;
  v.workload_label = r.workload;
  v.started_at = utc_now_iso8601();
  v.fake_backend = true;
  if (lock.enabled()) v.extra["gpu_lock_holds"] = holds;
  return v;
}

}  // namespace ptxbench

// The real evaluation backend of a service worker: one Evaluator per GPU (its workload state stays
// cached between tasks); the request's options apply to its evaluation only.
#include <cuda_runtime.h>

#include <chrono>
#include <thread>
#include <vector>

#include "common/fs.h"
#include "gpu/gpu_info.h"
#include "gpu/nvml_probe.h"
#include "service/gpu_eval_backend.h"
#include "evaluator/evaluator.h"
#include "evaluator/gpu_lock.h"

namespace ptxbench {
namespace {

// The canary: the pack's expert GEMM, which must pass and run within tolerance of its calibration.
constexpr const char* kCanaryDefinition = "gemm_n7168_k5120";
constexpr const char* kCanaryKernel = "knowledge/hopper/experts/gemm_n7168_k5120.cu";

class GpuEvalBackend final : public EvalBackend {
 public:
  GpuEvalBackend(const Catalog& catalog, const EvalOptions& base) : m_evaluator(catalog, base), m_device(base.device) {}

  HealthReport check_health() override {
    HealthReport h;
    char bus[32] = {0};
    cudaDeviceGetPCIBusId(bus, sizeof bus, m_device);
    GpuInfo gpu = query_gpu(m_device);
    h.calibration_key = gpu.name + "@" + bus;
    NvmlReading nvml = read_nvml(bus);
    h.detail["nvml"] = to_json(nvml);
    h.problem = health_problem(nvml);
    if (!h.problem.empty()) return h;
    if (!m_idle_checked) {
      // At the worker's first check, with the other workers of this GPU locked out, nothing of the
      // service runs on it: NVML must see it idle (a runner that a killed service left behind, a
      // hung kernel, or another user's job would share every later timing).
      m_idle_checked = true;
      std::vector<unsigned> samples;
      {
        GpuLock lock(m_evaluator.options().gpu_lock);
        GpuLock::Hold alone = lock.acquire(GpuLock::Mode::exclusive);
        for (int i = 0; i < 3; ++i) {
          std::this_thread::sleep_for(std::chrono::seconds(1));  // the longest NVML sample period
          NvmlReading r = read_nvml(bus);
          if (!r.utilization_percent) break;
          samples.push_back(*r.utilization_percent);
          if (samples.back() == 0) break;
        }
      }
      h.detail["idle_utilization_percent"] = samples;
      h.problem = judge_idle(samples);
      if (!h.problem.empty()) return h;
    }
    EvalOptions o = m_evaluator.options();
    o.sanitize = o.profile = false;
    o.correctness_trials = o.timing.trials = 1;
    o.timing.warmup_calls = 3;
    o.timing.timed_calls = 10;
    Verdict v = m_evaluator.evaluate_source(kCanaryDefinition, "", read_file(data_root() / kCanaryKernel), o);
    h.detail["canary"] = {{"status", to_string(v.status)}, {"message", v.message}};
    if (v.status != Status::PASSED || !v.candidate_us) {
      h.problem = "canary kernel " + to_string(v.status) + ": " + v.message;
      return h;
    }
    h.canary_us = *v.candidate_us;
    return h;
  }

  std::optional<Verdict> check(const EvalRequest& r) override {
    try {
      return m_evaluator.check_source(r.definition, r.workload, r.source, r.apply(m_evaluator.options()), r.language);
    } catch (const std::exception& e) {
      return infra_verdict(std::string("compile stage failed: ") + e.what());
    }
  }

  Verdict evaluate(const EvalRequest& r) override {
    try {
      return m_evaluator.evaluate_source(r.definition, r.workload, r.source, r.apply(m_evaluator.options()), r.language);
    } catch (const std::exception& e) {
      return infra_verdict(std::string("evaluator failed: ") + e.what());
    }
  }

 private:
  Evaluator m_evaluator;
  int m_device;
  bool m_idle_checked = false;
};

}  // namespace

std::unique_ptr<EvalBackend> make_gpu_backend(const Catalog& catalog, const EvalOptions& base) {
  return std::make_unique<GpuEvalBackend>(catalog, base);
}

}  // namespace ptxbench

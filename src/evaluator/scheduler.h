// Who holds the GPU while a stage runs (docs/service.md, "Workers sharing a GPU"). Untimed stages
// share it with other workers' untimed stages; timing has it alone. Shared holds are taken stage
// by stage, so a waiting timing stage gets the GPU between them. Runtime-SASS counting runs one at
// a time per GPU (the profiler turnstile): ncu's own cross-process lock lives in a /tmp that each
// runner's filesystem view makes private, and concurrent ncu sessions failed on the H200; CUPTI
// counting keeps the same turnstile. A time-out while other workers shared the GPU may be theirs,
// not the candidate's: the verdict is given only by a second attempt that has the GPU alone (a
// hang hangs there too). Each stage's wall time, and its wait for the locks, go into its section.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "evaluator/gpu_lock.h"
#include "verdict/verdict.h"

namespace ptxbench {

class StageScheduler {
 public:
  /// `gpu_lock`: the GPU's lock file (EvalOptions::gpu_lock); empty: a GPU used by one process.
  explicit StageScheduler(const std::string& gpu_lock)
      : m_gpu(gpu_lock), m_profiler(gpu_lock.empty() ? "" : gpu_lock + ".profiler") {}

  /// A hold of the GPU shared with other workers' untimed work.
  [[nodiscard]] GpuLock::Hold shared() const { return m_gpu.acquire(GpuLock::Mode::shared); }

  /// Runs an untimed stage (`stage()` returns its StageOutcome) under a shared hold, and under the
  /// profiler turnstile when `profiler`. On a time-out with the GPU shared, `reset()` ends what the
  /// first attempt left (it returns the killed runner's output, if any) and the stage runs again
  /// with the GPU alone; its section records the first attempt.
  template <class Stage, class Reset>
  auto untimed(Stage&& stage, bool profiler, Reset&& reset) const -> decltype(stage()) {
    using Outcome = decltype(stage());
    using Section = typename Outcome::SectionType;
    auto wait_start = std::chrono::steady_clock::now();
    GpuLock::Hold turnstile;
    if (profiler) turnstile = m_profiler.acquire(GpuLock::Mode::exclusive);
    GpuLock::Hold hold = m_gpu.acquire(GpuLock::Mode::shared);
    Outcome out = timed(stage, seconds_since(wait_start));
    if (out.passed() || out.failure->status != Status::TIMEOUT || !m_gpu.enabled()) return out;
    SharedTimeoutAttempt<Section> first{out.failure->message, nullptr, std::nullopt};
    if (out.section) first.stage = std::make_shared<const Section>(*out.section);
    first.runner_output = reset();
    hold = GpuLock::Hold{};
    wait_start = std::chrono::steady_clock::now();
    GpuLock::Hold alone = m_gpu.acquire(GpuLock::Mode::exclusive);
    Outcome second = timed(stage, seconds_since(wait_start));
    if (!second.section) second.section.emplace();  // the second attempt recorded nothing: the section holds only this
    second.section->gpu_alone_after_shared_timeout = std::move(first);
    return second;
  }

  /// Runs the timing stage with the GPU alone.
  template <class Stage>
  auto exclusive(Stage&& stage) const -> decltype(stage()) {
    auto wait_start = std::chrono::steady_clock::now();
    GpuLock::Hold alone = m_gpu.acquire(GpuLock::Mode::exclusive);
    return timed(stage, seconds_since(wait_start));
  }

 private:
  template <class Stage>
  auto timed(Stage& stage, double lock_wait_s) const -> decltype(stage()) {
    auto t0 = std::chrono::steady_clock::now();
    auto out = stage();
    if (out.section) {
      out.section->wall_s = seconds_since(t0);
      if (m_gpu.enabled()) out.section->gpu_lock_wait_s = lock_wait_s;
    }
    return out;
  }

  GpuLock m_gpu;
  GpuLock m_profiler;
};

}  // namespace ptxbench

// Per-instruction execution counts of this process's kernels through CUPTI SASS metrics: CUPTI
// patches each kernel at its first launch between start() and stop() and counts, per instruction,
// warp-level executions and predicate-true thread executions (sass/pc_counts.h names the metrics).
// It runs inside the runner, with no separate profiler process: the replacement for one ncu run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sass/pc_counts.h"

struct CUctx_st;

namespace ptxbench {

/// Process-wide (CUPTI's profiler state is global): at most one at a time. Construct it before
/// any kernel of the process runs; it makes `device` current and creates its primary context.
class SassPatching {
 public:
  explicit SassPatching(int device);
  ~SassPatching();
  SassPatching(const SassPatching&) = delete;
  SassPatching& operator=(const SassPatching&) = delete;

  /// Patches every kernel launched from now on, in the current context. Call it before the
  /// context's first kernel: once a kernel has run there, CUPTI records nothing, and it records
  /// only the first module launched after this call (both seen on the H200, CUPTI 13.0).
  void start();
  /// Reads the counts collected since start() and stops patching. Launch-synchronous work must
  /// have finished (synchronize first).
  std::vector<PcCount> stop();

  /// What the last stop() got from CUPTI (diagnostics, written beside the counts).
  [[nodiscard]] std::size_t last_records() const noexcept { return m_last_records; }
  [[nodiscard]] std::size_t last_instances() const noexcept { return m_last_instances; }
  [[nodiscard]] bool lazy() const noexcept { return m_lazy; }

  /// The SASS metrics CUPTI offers on this device's chip ("name: description").
  static std::vector<std::string> metric_names(int device);

 private:
  int m_device;
  CUctx_st* m_context = nullptr;
  bool m_lazy = true;
  std::size_t m_last_records = 0;
  std::size_t m_last_instances = 0;
  bool m_configured = false;
  bool m_enabled = false;
  uint64_t m_warp_id = 0;
  uint64_t m_thread_true_id = 0;
};

}  // namespace ptxbench

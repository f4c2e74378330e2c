// Everything the worker keeps for one resolved workload: the shared input/output buffers (handed to
// the runner as descriptors; outputs guarded), fp32 reference outputs (device and host, never
// shared), the baseline with its plan and its own outputs, the fingerprints that prove inputs
// untouched, and the per-call preparation and checks of a timing trial.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <optional>
#include <memory>
#include <random>
#include <vector>

#include "gpu/guarded_buffer.h"
#include "gpu/trial_timer.h"
#include "ops/operator.h"
#include "common/fd.h"
#include "runner/protocol.h"
#include "verdict/correctness.h"
#include "verdict/output_check.h"

namespace ptxbench {

class WorkloadState {
 public:
  WorkloadState(ResolvedWorkload workload, std::unique_ptr<Operator> op);
  ~WorkloadState();
  WorkloadState(const WorkloadState&) = delete;
  WorkloadState& operator=(const WorkloadState&) = delete;

  [[nodiscard]] const ResolvedWorkload& workload() const noexcept { return m_workload; }
  [[nodiscard]] const Operator& op() const noexcept { return *m_op; }
  [[nodiscard]] cudaStream_t stream() const noexcept { return m_stream; }

  /// Fresh inputs from `seed`, the fp32 reference (copied to the host), guards and fingerprints.
  void prepare_trial(uint64_t seed);
  /// Fills the candidate's outputs with NaN and waits: a call that writes nothing fails.
  void poison_outputs();

  // A timing trial (docs/verdict.md, "Measurement integrity"): every call gets fresh inputs, so
  // none can reuse an earlier call's work; every timed call's output is spot-checked on random
  // rows; one secret call per trial is checked in full.
  /// All inputs from `seed` (derived ones too) and the guards; no reference yet.
  void begin_trial(uint64_t seed);
  enum class Side { candidate, baseline };
  /// Before one call: the op's fresh inputs refilled from `seed` (kept as they are without one:
  /// TimingPolicy::fresh_inputs off), that side's outputs poisoned, L2 overwritten by `flush` (on
  /// our stream), then a wait. With `fingerprint`, the inputs' fingerprints are taken, for a full
  /// check after the call.
  void prepare_call(std::optional<uint64_t> seed, Side side, const std::function<void(cudaStream_t)>& flush,
                    bool fingerprint);
  /// The full fp32 reference of the current inputs (device and host), for check_candidate().
  void compute_reference();
  /// `rows` random rows (from `rng`) of each candidate output against the reference rows of the
  /// current inputs.
  [[nodiscard]] OutputCheck spot_check(std::mt19937_64& rng, int rows, const Tolerance& tol);
  /// Compares the candidate's outputs (written by the runner) with the reference; checks the
  /// guards and that the inputs are unchanged.
  [[nodiscard]] OutputCheck check_candidate(const Tolerance& tol, unsigned threads = 0);
  /// Same rule applied to the baseline's own outputs.
  [[nodiscard]] OutputCheck check_baseline(const Tolerance& tol, unsigned threads = 0);

  /// Inputs then that side's outputs, as a runner maps them, with one descriptor per shared
  /// allocation (the candidate's runner, or the trusted runner that times the baseline).
  struct SharedTensors {
    std::vector<WireTensor> tensors;
    std::vector<Fd> fds;  ///< fds[t.fd_index] names the allocation of tensor t
  };
  [[nodiscard]] SharedTensors shared_tensors(Side side = Side::candidate) const;
  /// The baseline in this process (built on first use), bound to the current inputs and its own
  /// outputs, poisoned like a candidate. Evaluations time it in a trusted runner instead.
  [[nodiscard]] TimedTarget baseline_target();

 private:
  OutputCheck compare(const std::vector<const void*>& device_outputs, const Tolerance& tol, unsigned threads);
  [[nodiscard]] std::vector<DeviceTensor> input_views() const;
  void take_fingerprints();
  ResolvedWorkload m_workload;
  std::unique_ptr<Operator> m_op;
  std::unique_ptr<Baseline> m_baseline;
  cudaStream_t m_stream = nullptr;
  std::vector<TensorSpec> m_input_specs, m_output_specs;
  std::vector<GuardedBuffer> m_inputs, m_outputs;
  std::vector<DeviceBuffer> m_reference;
  /// The same kind of memory as the candidate's outputs (shareable, behind the same guard), so
  /// the two are timed writing alike.
  std::vector<GuardedBuffer> m_baseline_outputs;
  std::vector<std::vector<float>> m_reference_host;
  std::vector<uint64_t> m_input_fingerprints;
  std::vector<ptxb_tensor> m_baseline_args;
  DeviceBuffer m_row_scratch, m_row_reference;
};

}  // namespace ptxbench

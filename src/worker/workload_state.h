// Everything the worker keeps for one resolved workload: the shared input/output buffers (CUDA IPC
// to the runner; outputs guarded), fp32 reference outputs (device and host, never shared), the
// baseline with its plan and its own outputs, and the fingerprints that prove inputs untouched.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "gpu/guarded_buffer.h"
#include "gpu/trial_timer.h"
#include "ops/operator.h"
#include "runner/tensor_wire.h"
#include "verdict/correctness.h"

namespace ptxbench {

struct OutputCheck {
  std::vector<TensorComparison> tensors;
  std::vector<std::string> problems;  ///< guard writes, modified inputs
  [[nodiscard]] bool passed() const;
};

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
  /// Compares the candidate's outputs (written by the runner) with the reference; checks the
  /// guards and that the inputs are unchanged.
  [[nodiscard]] OutputCheck check_candidate(const Tolerance& tol, unsigned threads = 0);
  /// Same rule applied to the baseline's own outputs.
  [[nodiscard]] OutputCheck check_baseline(const Tolerance& tol, unsigned threads = 0);

  /// Inputs then outputs, as the runner maps them.
  [[nodiscard]] std::vector<WireTensor> wire_tensors() const;
  /// The baseline bound to the current inputs and its own outputs, poisoned like a candidate.
  [[nodiscard]] TimedTarget baseline_target();
  [[nodiscard]] std::string baseline_name() const;

 private:
  OutputCheck compare(const std::vector<const void*>& device_outputs, const Tolerance& tol, unsigned threads);
  ResolvedWorkload m_workload;
  std::unique_ptr<Operator> m_op;
  std::unique_ptr<Baseline> m_baseline;
  cudaStream_t m_stream = nullptr;
  std::vector<TensorSpec> m_input_specs, m_output_specs;
  std::vector<GuardedBuffer> m_inputs, m_outputs;
  std::vector<DeviceBuffer> m_reference, m_baseline_outputs;
  std::vector<std::vector<float>> m_reference_host;
  std::vector<uint64_t> m_input_fingerprints;
  std::vector<ptxb_tensor> m_baseline_args;
};

}  // namespace ptxbench

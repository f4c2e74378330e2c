// The trusted side of a definition's op_type: how to make a trial's inputs, the fp32 reference
// outputs, the frontier baseline, and the FLOP count used for TFLOP/s and the roofline floor.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baseline/baseline.h"
#include "definitions/workload.h"
#include "ptxbench_abi.h"

namespace ptxbench {

struct DeviceTensor {
  void* data = nullptr;
  TensorSpec spec;
  [[nodiscard]] ptxb_tensor view() const;
};

/// Rows of one output for a spot check: the output viewed as [rows, row_length(o)].
struct RowSample {
  std::size_t output = 0;     ///< index among the outputs
  std::vector<int64_t> rows;  ///< which rows
};

class Operator {
 public:
  virtual ~Operator() = default;
  /// Fills the inputs of one trial from `seed` per the workload's samplers (standard normal by
  /// default). Overridden where inputs derive from others (backward: O and LSE from the forward).
  virtual void make_inputs(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, uint64_t seed,
                           cudaStream_t stream) const;
  /// Writes every output, in fp32, into `outputs` (one device buffer per output, in order).
  virtual void reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                         const std::vector<float*>& outputs, cudaStream_t stream) const = 0;
  [[nodiscard]] virtual std::unique_ptr<Baseline> make_baseline(const ResolvedWorkload& w) const = 0;

  /// Inputs refilled before every timed call, so that no call can reuse an earlier call's work
  /// (indices among the inputs). Default: every input drawn from a sampler (not derived, not a
  /// constant). The backward keeps Q, K, V (and with them the derived O and LSE) and refreshes dO.
  [[nodiscard]] virtual std::vector<std::size_t> fresh_inputs(const ResolvedWorkload& w) const;
  /// Refills the fresh inputs from `seed`, with the samplers make_inputs uses.
  void refresh_inputs(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, uint64_t seed,
                      cudaStream_t stream) const;
  /// The exact values of input `input` when they are the same for every trial (a "scalar" sampler:
  /// numel copies of its value; a "derived" one an operator writes from the workload alone, as the
  /// GQA layouts); nullopt when the input is drawn from the trial seed. A process that makes its
  /// own inputs (the runner's `once` mode for memcheck and runtime SASS) writes these.
  [[nodiscard]] virtual std::optional<std::vector<double>> fixed_values(const ResolvedWorkload& w, std::size_t input) const;
  /// Elements of one row of output `o` for spot checks (default: its last dimension).
  [[nodiscard]] virtual int64_t row_length(const ResolvedWorkload& w, std::size_t o) const;
  /// Device scratch that reference_rows needs for samples of at most `rows` rows each.
  [[nodiscard]] virtual std::size_t row_scratch_bytes(const ResolvedWorkload& w, int64_t rows) const = 0;
  /// The trusted reference of the sampled rows (fp32), on the current inputs: for each sample k,
  /// out[k] (device) receives rows.size() × row_length floats, row after row.
  virtual void reference_rows(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                              const std::vector<RowSample>& samples, const std::vector<float*>& out, void* scratch,
                              cudaStream_t stream) const = 0;
  [[nodiscard]] virtual double flops(const ResolvedWorkload& w) const = 0;
  /// Bytes every implementation must move: each input read once, each output written once.
  [[nodiscard]] virtual double min_bytes(const ResolvedWorkload& w) const;
};

/// Throws InputError naming the supported op types when `op_type` has no trusted implementation.
std::unique_ptr<Operator> make_operator(const std::string& op_type);

}  // namespace ptxbench

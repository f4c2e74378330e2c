// The trusted side of a definition's op_type: how to make a trial's inputs, the fp32 reference
// outputs, the frontier baseline, and the FLOP count used for TFLOP/s and the roofline floor.
#pragma once

#include <cuda_runtime.h>

#include <memory>
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
  [[nodiscard]] virtual double flops(const ResolvedWorkload& w) const = 0;
  /// Bytes every implementation must move: each input read once, each output written once.
  [[nodiscard]] virtual double min_bytes(const ResolvedWorkload& w) const;
};

/// Throws InputError naming the supported op types when `op_type` has no trusted implementation.
std::unique_ptr<Operator> make_operator(const std::string& op_type);

}  // namespace ptxbench

// A frontier-library baseline behind the candidate ABI's signature, so the same timing loop (and
// even the runner, for the A/A self-test) can drive it like a candidate.
#pragma once

#include <string>

#include "ptxbench_abi.h"

namespace ptxbench {

class Baseline {
 public:
  virtual ~Baseline() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// Same contract as ptxb_run: launch on `stream`, return 0 or an error code.
  virtual int run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) = 0;
};

}  // namespace ptxbench

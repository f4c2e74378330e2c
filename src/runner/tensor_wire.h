// Tensor descriptors as they cross the worker/runner boundary: shape, dtype, strides, and for
// shared buffers the CUDA IPC handle of the allocation plus the offset of the tensor in it.
#pragma once

#include <cuda_runtime.h>

#include <optional>
#include <string>
#include <vector>

#include "common/json_check.h"
#include "definitions/workload.h"

namespace ptxbench {

struct WireTensor {
  TensorSpec spec;
  std::optional<cudaIpcMemHandle_t> ipc;  ///< absent: the runner allocates it itself
  std::size_t offset = 0;                 ///< bytes from the allocation base to element 0
};

ordered_json to_json(const TensorSpec& spec);
TensorSpec tensor_spec_from_json(const ordered_json& j);
ordered_json to_json(const WireTensor& t);
WireTensor wire_tensor_from_json(const ordered_json& j);
std::vector<TensorSpec> tensor_specs_from_json(const ordered_json& list);

}  // namespace ptxbench

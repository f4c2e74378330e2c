// Reproducible standard-normal inputs generated on the device from (seed, element index), so any
// trial's inputs can be regenerated from its recorded seed, in any process.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "definitions/dtype.h"

namespace ptxbench {

/// Fills `n` elements of `dtype` with N(0,1) samples (rounded to the dtype) on `stream`.
void fill_normal(void* data, DType dtype, int64_t n, uint64_t seed, cudaStream_t stream);
/// Fills with a constant (a "scalar" input sampler).
void fill_constant(void* data, DType dtype, int64_t n, double value, cudaStream_t stream);

/// The sample the generator produces for (seed, index), computed on the host (for tests).
float normal_sample_host(uint64_t seed, uint64_t index);
/// fill_normal's samples computed on the host into `host` (on all cores), for a process that must
/// not launch a kernel of its own (runtime SASS counting: sass_patching.h).
void fill_normal_host(void* host, DType dtype, int64_t n, uint64_t seed);

/// Writes `values` (exact, as the dtype rounds them) into `host`, `values.size()` elements of `dtype`.
void fill_values_host(void* host, DType dtype, const std::vector<double>& values);

/// Per-tensor seed derived from the trial seed and the tensor's position.
uint64_t derive_seed(uint64_t seed, uint64_t salt);

}  // namespace ptxbench

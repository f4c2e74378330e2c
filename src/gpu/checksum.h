// A device-side fingerprint of a buffer, to prove a candidate left its inputs untouched.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ptxbench {

/// Order-sensitive 64-bit fingerprint of `bytes` bytes (synchronizes `stream`).
uint64_t device_checksum(const void* data, std::size_t bytes, cudaStream_t stream);

}  // namespace ptxbench

// Device memory the worker shares with a runner process by handing over a file descriptor
// (CUDA virtual memory management, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, passed over the
// control socket). Unlike legacy CUDA IPC handles, importing needs no permission over the
// exporting process: the runner runs as another user in its own PID namespace and can never
// name, trace or read the worker (docs/sandbox.md).
#pragma once

#include <cuda.h>

#include <cstddef>

#include "common/fd.h"

namespace ptxbench {

/// A mapping of one physical allocation into this process, readable and writable by `device`.
/// Move-only; unmapped and released on destruction (the physical memory lives until every
/// importer has released it too).
class SharedAllocation {
 public:
  /// Allocates at least `bytes` (rounded up to the allocation granularity) on `device`.
  SharedAllocation(std::size_t bytes, int device);
  /// Maps an allocation exported by another process; `bytes` is its size as the exporter reported.
  static SharedAllocation import_fd(int fd, std::size_t bytes, int device);
  ~SharedAllocation();
  SharedAllocation(SharedAllocation&& o) noexcept;
  SharedAllocation& operator=(SharedAllocation&& o) noexcept;
  SharedAllocation(const SharedAllocation&) = delete;
  SharedAllocation& operator=(const SharedAllocation&) = delete;

  [[nodiscard]] void* get() const noexcept { return reinterpret_cast<void*>(m_ptr); }
  /// The mapped size (granularity-rounded); what an importer must be told.
  [[nodiscard]] std::size_t bytes() const noexcept { return m_bytes; }
  /// A new descriptor naming the physical allocation, to send to a runner.
  [[nodiscard]] Fd export_fd() const;

 private:
  SharedAllocation() = default;
  void map(int device);
  void release() noexcept;
  CUmemGenericAllocationHandle m_handle = 0;
  CUdeviceptr m_ptr = 0;
  std::size_t m_bytes = 0;
};

}  // namespace ptxbench

#include "gpu/shared_allocation.h"

#include <cuda_runtime.h>

#include <utility>

#include "gpu/cu_call.h"
#include "gpu/driver_entry.h"
#include "gpu/cuda_call.h"

namespace ptxbench {
namespace {

// The driver's virtual-memory functions, looked up once (gpu/driver_entry.h).
struct Vmm {
  decltype(&cuMemGetAllocationGranularity) granularity = driver_function<decltype(granularity)>("cuMemGetAllocationGranularity");
  decltype(&cuMemCreate) create = driver_function<decltype(create)>("cuMemCreate");
  decltype(&cuMemImportFromShareableHandle) import = driver_function<decltype(import)>("cuMemImportFromShareableHandle");
  decltype(&cuMemExportToShareableHandle) export_handle = driver_function<decltype(export_handle)>("cuMemExportToShareableHandle");
  decltype(&cuMemAddressReserve) reserve = driver_function<decltype(reserve)>("cuMemAddressReserve");
  decltype(&cuMemAddressFree) address_free = driver_function<decltype(address_free)>("cuMemAddressFree");
  decltype(&cuMemMap) map = driver_function<decltype(map)>("cuMemMap");
  decltype(&cuMemUnmap) unmap = driver_function<decltype(unmap)>("cuMemUnmap");
  decltype(&cuMemSetAccess) set_access = driver_function<decltype(set_access)>("cuMemSetAccess");
  decltype(&cuMemRelease) release = driver_function<decltype(release)>("cuMemRelease");
};
const Vmm& vmm() {
  static const Vmm v;
  return v;
}

CUmemAllocationProp allocation_prop(int device) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return p;
}

std::size_t round_up(std::size_t bytes, std::size_t granularity) {
  return (bytes + granularity - 1) / granularity * granularity;
}

}  // namespace

SharedAllocation::SharedAllocation(std::size_t bytes, int device) {
  PTXB_CUDA_CALL(cudaFree(nullptr));  // the runtime's primary context is the one we map into
  CUmemAllocationProp prop = allocation_prop(device);
  std::size_t granularity = 0;
  PTXB_CU_CALL(vmm().granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  m_bytes = round_up(bytes == 0 ? 1 : bytes, granularity);
  PTXB_CU_CALL(vmm().create(&m_handle, m_bytes, &prop, 0));
  try {
    map(device);
  } catch (...) {
    release();
    throw;
  }
}

SharedAllocation SharedAllocation::import_fd(int fd, std::size_t bytes, int device) {
  PTXB_CUDA_CALL(cudaFree(nullptr));
  SharedAllocation a;
  a.m_bytes = bytes;
  PTXB_CU_CALL(vmm().import(&a.m_handle, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  a.map(device);
  return a;
}

void SharedAllocation::map(int device) {
  PTXB_CU_CALL(vmm().reserve(&m_ptr, m_bytes, 0, 0, 0));
  PTXB_CU_CALL(vmm().map(m_ptr, m_bytes, 0, m_handle, 0));
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  PTXB_CU_CALL(vmm().set_access(m_ptr, m_bytes, &access, 1));
}

Fd SharedAllocation::export_fd() const {
  int fd = -1;
  PTXB_CU_CALL(vmm().export_handle(&fd, m_handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  return Fd(fd);
}

void SharedAllocation::release() noexcept {
  if (m_ptr) {
    // The device may still be using the memory: wait, then unmap.
    PTXB_CUDA_CALL_NOEXCEPT(cudaDeviceSynchronize());
    PTXB_CU_CALL_NOEXCEPT(vmm().unmap(m_ptr, m_bytes));
    PTXB_CU_CALL_NOEXCEPT(vmm().address_free(m_ptr, m_bytes));
  }
  if (m_handle) PTXB_CU_CALL_NOEXCEPT(vmm().release(m_handle));
  m_ptr = 0;
  m_handle = 0;
}

SharedAllocation::~SharedAllocation() { release(); }

SharedAllocation::SharedAllocation(SharedAllocation&& o) noexcept
    : m_handle(std::exchange(o.m_handle, 0)), m_ptr(std::exchange(o.m_ptr, 0)), m_bytes(o.m_bytes) {}

SharedAllocation& SharedAllocation::operator=(SharedAllocation&& o) noexcept {
  if (this != &o) {
    release();
    m_handle = std::exchange(o.m_handle, 0);
    m_ptr = std::exchange(o.m_ptr, 0);
    m_bytes = o.m_bytes;
  }
  return *this;
}

}  // namespace ptxbench

// CUDA driver API functions looked up through the runtime's entry points, so our binaries need no
// link-time libcuda (they start on CPU-only machines, where the CPU tests run them).
#pragma once

namespace ptxbench {

/// The driver function `name` of the given API version; throws EnvironmentError when absent.
void* driver_symbol(const char* name, unsigned version);

template <class Fn>
Fn driver_function(const char* name, unsigned version = 12000) {
  return reinterpret_cast<Fn>(driver_symbol(name, version));
}

}  // namespace ptxbench

// The ptxas resource report (-Xptxas -v): registers, shared memory, stack, spills per kernel.
#pragma once

#include <string>
#include <vector>

namespace ptxbench {

struct KernelResources {
  std::string name;
  int registers = 0;
  int barriers = 0;
  long smem_bytes = 0;
  long stack_frame_bytes = 0;
  long spill_store_bytes = 0;
  long spill_load_bytes = 0;
  long cmem0_bytes = 0;  ///< constant bank 0 (not kept in the verdict)
};

struct PtxasReport {
  std::vector<KernelResources> kernels;  ///< entry functions, in report order
  std::vector<std::string> warnings;     ///< "ptxas warning" lines (e.g. setmaxnreg ignored)
};

PtxasReport parse_ptxas_report(const std::string& log);

}  // namespace ptxbench

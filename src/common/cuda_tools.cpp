#include "common/cuda_tools.h"

#include <unistd.h>

#include <cstdlib>

#include "common/subprocess.h"

namespace ptxbench {

std::string find_cuda_tool(const std::string& name) {
  for (const char* var : {"PTXBENCH_CUDA_HOME", "CUDA_HOME"}) {
    if (const char* home = std::getenv(var); home && *home) {
      std::string p = std::string(home) + "/bin/" + name;
      if (access(p.c_str(), X_OK) == 0) return p;
    }
  }
  std::string p = "/usr/local/cuda/bin/" + name;
  if (access(p.c_str(), X_OK) == 0) return p;
  return find_on_path(name);
}

}  // namespace ptxbench

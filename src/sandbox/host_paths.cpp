#include "sandbox/host_paths.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace ptxbench {
namespace {
namespace stdfs = std::filesystem;
}

std::vector<std::string> system_paths() {
  std::vector<std::string> out;
  for (const char* p : {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin"})
    if (stdfs::exists(stdfs::symlink_status(p))) out.push_back(p);
  return out;
}

std::vector<std::string> loaded_library_dirs() {
  std::set<std::string> dirs;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    if (path.find(".so") == std::string::npos) continue;
    dirs.insert(stdfs::path(path).parent_path().string());
  }
  return {dirs.begin(), dirs.end()};
}

std::vector<std::string> ld_library_path_dirs() {
  std::vector<std::string> out;
  const char* v = std::getenv("LD_LIBRARY_PATH");
  std::istringstream in(v ? v : "");
  for (std::string dir; std::getline(in, dir, ':');)
    if (!dir.empty() && dir[0] == '/') out.push_back(dir);
  return out;
}

Enforcement sandbox_enforcement_setting() {
  const char* v = std::getenv("PTXBENCH_SANDBOX");
  if (!v || !*v) v = std::getenv("PTXBENCH_SANDBOX_FS");
  return v && *v ? parse_enforcement(v) : Enforcement::best_effort;
}

}  // namespace ptxbench

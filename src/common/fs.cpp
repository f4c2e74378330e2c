#include "common/fs.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "common/error.h"

#ifndef PTXBENCH_SOURCE_DIR
#define PTXBENCH_SOURCE_DIR "."
#endif

namespace ptxbench {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("files", "cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_atomic(const fs::path& path, const std::string& content) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(getpid()) + "." + std::to_string(std::random_device{}());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("files", "cannot write " + tmp.string());
    out << content;
    if (!out.flush()) throw Error("files", "write failed: " + tmp.string());
  }
  fs::rename(tmp, path);
}

TempDir::TempDir(const std::string& prefix, const fs::path& parent) {
  fs::path base = parent.empty() ? fs::temp_directory_path() : parent;
  fs::create_directories(base);
  std::string pattern = (base / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data())) throw Error("files", "mkdtemp failed under " + base.string());
  m_path = pattern;
}

TempDir::~TempDir() {
  if (m_keep) return;
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

fs::path executable_dir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : self.parent_path();
}

fs::path data_root() {
  if (const char* home = std::getenv("PTXBENCH_HOME"); home && *home) return home;
  return PTXBENCH_SOURCE_DIR;
}

fs::path cache_root() {
  if (const char* dir = std::getenv("PTXBENCH_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "ptxbench";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache/ptxbench";
  return fs::temp_directory_path() / "ptxbench-cache";
}

}  // namespace ptxbench

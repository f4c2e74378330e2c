// Files and folders: whole-file reads with clear errors, atomic writes, RAII temp folders.
#pragma once

#include <filesystem>
#include <string>

namespace ptxbench {

namespace fs = std::filesystem;

/// Reads a whole file; throws InputError naming the path when it cannot.
std::string read_file(const fs::path& path);
/// Writes via a temp file in the same folder and rename(2), so readers never see a partial file.
void write_file_atomic(const fs::path& path, const std::string& content);

/// A fresh private folder removed (recursively) on destruction unless keep() was called.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "ptxbench", const fs::path& parent = {});
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const fs::path& path() const noexcept { return m_path; }
  void keep() noexcept { m_keep = true; }

 private:
  fs::path m_path;
  bool m_keep = false;
};

/// The folder holding the running executable.
fs::path executable_dir();
/// Root of the data files (definitions/, workloads/, knowledge/): $PTXBENCH_HOME, else the source
/// tree this binary was built from.
fs::path data_root();
/// Root of caches (compile artifacts): $PTXBENCH_CACHE_DIR, else $XDG_CACHE_HOME/ptxbench, else
/// ~/.cache/ptxbench.
fs::path cache_root();

}  // namespace ptxbench

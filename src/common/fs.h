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
/// Where the data root came from, in the order they are tried.
enum class DataRootSource {
  env,         ///< $PTXBENCH_HOME: an explicit choice wins over everything else
  checkout,    ///< the nearest folder at or above the working directory holding definitions/ and knowledge/
  build_tree,  ///< the source tree this binary was built from
};
/// "PTXBENCH_HOME", "checkout above the working directory", "source tree of the build".
std::string to_string(DataRootSource s);

/// The data root and how it was chosen; `warning` is set when another candidate root differs from
/// the one chosen (it names both), e.g. a binary built in one clone run inside a second clone.
struct DataRoot {
  fs::path path;
  DataRootSource source = DataRootSource::build_tree;
  std::string warning;
};

/// The nearest folder at or above `start` that holds both definitions/ and knowledge/ (as pytest
/// finds its rootdir); empty when none does.
fs::path find_checkout_root(const fs::path& start);
/// The precedence of data_root(), from its inputs (`env`: $PTXBENCH_HOME, empty when unset):
/// $PTXBENCH_HOME, else the checkout at or above `cwd`, else `build_tree`.
DataRoot resolve_data_root(const std::string& env, const fs::path& cwd, const fs::path& build_tree);
/// resolve_data_root for this process (resolved once); its warning is printed on stderr the first
/// time.
const DataRoot& data_root_choice();
/// Root of the data files (definitions/, workloads/, knowledge/): data_root_choice().path.
fs::path data_root();
/// The source tree this binary was built from (the last resort of data_root()).
fs::path build_source_dir();
/// Root of caches (compile artifacts): $PTXBENCH_CACHE_DIR, else $XDG_CACHE_HOME/ptxbench, else
/// ~/.cache/ptxbench.
fs::path cache_root();

}  // namespace ptxbench

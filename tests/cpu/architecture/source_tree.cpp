#include "cpu/architecture/source_tree.h"

#include <algorithm>
#include <fstream>

namespace ptxbench::testing {

std::filesystem::path source_root() { return std::filesystem::path(PTXBENCH_TEST_DATA).parent_path() / "src"; }

std::vector<SourceFile> source_files() {
  std::vector<SourceFile> files;
  const std::filesystem::path root = source_root();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".cu" && ext != ".cuh")) continue;
    SourceFile f{std::filesystem::relative(entry.path(), root), {}};
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) f.lines.push_back(line);
    files.push_back(std::move(f));
  }
  std::sort(files.begin(), files.end(), [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
  return files;
}

}  // namespace ptxbench::testing

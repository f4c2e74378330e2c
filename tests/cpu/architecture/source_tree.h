// The C++ sources under src/, read as text, for the architecture tests: the folders and their
// includes (test_include_graph.cpp), the sizes of files and functions (test_source_sizes.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench::testing {

struct SourceFile {
  std::filesystem::path path;  ///< relative to src/ ("evaluator/evaluator.cpp")
  std::vector<std::string> lines;

  /// Its folder under src/ ("evaluator"; "evaluator" for evaluator/stages/timing.cpp too).
  [[nodiscard]] std::string folder() const { return path.begin()->string(); }
};

/// src/ of this checkout.
std::filesystem::path source_root();

/// Every .h, .cpp, .cu and .cuh file under src/, in path order.
std::vector<SourceFile> source_files();

}  // namespace ptxbench::testing

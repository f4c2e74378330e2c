// The folders of src/ stand on floors (docs/design.md, "Source layout"): a folder includes only
// folders on lower floors, so no include runs back up and no two folders include each other.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "cpu/architecture/source_tree.h"

namespace ptxbench::testing {
namespace {

// Each folder's floor. A new folder must be placed here.
const std::map<std::string, int>& floors() {
  static const std::map<std::string, int> f = {
      {"common", 0},
      // "embedded": the headers the build generates from src/python and src/report/assets.
      {"definitions", 1}, {"embedded", 1}, {"llm", 1}, {"sandbox", 1}, {"timing", 1},
      {"compile", 2}, {"sass", 2},
      {"gpu", 3}, {"verdict", 3},
      {"baseline", 4}, {"notes", 4}, {"prompt", 4}, {"reference", 4}, {"runs", 4},
      {"ops", 5},
      {"runner", 6},
      {"evaluator", 7},
      {"report", 8}, {"service", 8},
      {"adapt", 9}, {"suite", 9},
      {"agent", 10},
      {"mcp", 11},
      {"coding_agent", 12},
      {"cli", 13},
  };
  return f;
}

// folder -> the folders it includes (with one including file each, for the message).
std::map<std::string, std::map<std::string, std::string>> include_graph() {
  static const std::regex include(R"re(^\s*#\s*include\s+"([a-z_]+)/)re");
  std::map<std::string, std::map<std::string, std::string>> graph;
  for (const auto& f : source_files())
    for (const auto& line : f.lines) {
      std::smatch m;
      if (std::regex_search(line, m, include) && m[1] != f.folder()) graph[f.folder()].emplace(m[1], f.path.string());
    }
  return graph;
}

TEST(IncludeGraph, EveryFolderOfSrcHasAFloor) {
  for (const auto& entry : std::filesystem::directory_iterator(source_root())) {
    if (!entry.is_directory() || entry.path().filename() == "python") continue;  // no C++ there
    EXPECT_TRUE(floors().count(entry.path().filename().string()))
        << "src/" << entry.path().filename().string() << " has no floor in this test";
  }
}

TEST(IncludeGraph, NoFolderIncludesAFolderAboveOrBesideIt) {
  const auto graph = include_graph();
  ASSERT_GT(graph.size(), 10u) << "the scan found almost no includes: is " << source_root() << " the source tree?";
  for (const auto& [from, targets] : graph) {
    ASSERT_TRUE(floors().count(from)) << from;
    for (const auto& [to, file] : targets) {
      ASSERT_TRUE(floors().count(to)) << file << " includes an unknown folder " << to;
      EXPECT_LT(floors().at(to), floors().at(from))
          << "src/" << file << " (floor " << floors().at(from) << ") includes " << to << "/ (floor " << floors().at(to) << ")";
    }
  }
}

TEST(IncludeGraph, TheRecordsEveryoneReadsAreBelowTheirReaders) {
  // The run store, the model client and the notes store are read by several folders; each of those
  // includes them from below, never the other way round (the triangle agent → adapt → report → agent).
  const auto graph = include_graph();
  for (const char* reader : {"agent", "adapt", "report", "mcp", "coding_agent"})
    EXPECT_TRUE(graph.count(reader) && (graph.at(reader).count("runs") || graph.at(reader).count("llm")))
        << reader << " reads the shared records";
  for (const char* shared : {"runs", "llm", "notes"})
    for (const char* above : {"agent", "adapt", "report"})
      EXPECT_FALSE(graph.count(shared) && graph.at(shared).count(above)) << shared << " includes " << above;
}

}  // namespace
}  // namespace ptxbench::testing

// Sizes that keep the source readable (docs/design.md, "Source layout"): no file over 600 lines, no
// function over 100. The files and functions that are still larger are listed below with their
// size today: none may grow, and a new one may not join them (a ratchet; docs/status.md says which
// are next to split).
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "cpu/architecture/source_tree.h"

namespace ptxbench::testing {
namespace {

constexpr std::size_t kFileLines = 600;
constexpr std::size_t kFunctionLines = 100;

// Still larger, at most this size.
const std::map<std::string, std::size_t> kLargeFiles = {};
const std::map<std::string, std::size_t> kLargeFunctions = {};

struct Function {
  std::string name;  ///< "file:qualified::name"
  std::size_t lines;
};

// Functions at namespace scope (the house style puts them at column 0): a line at column 0 that
// names a function and opens its body within six lines, to the first `}` at column 0.
std::vector<Function> functions(const SourceFile& f) {
  static const std::regex head(R"re(^(?=[A-Za-z_])(?:[^;{}(]*?[\s*&])?([A-Za-z_~][A-Za-z0-9_:~]*)\s*\()re");
  static const std::regex not_function(R"re(^(namespace|struct|class|enum|union|using|typedef|template|extern|static_assert|#))re");
  static const std::regex raw_open(R"re(R"([^(\s]*)\()re");
  std::vector<Function> out;
  std::string raw_end;  // inside a raw string literal: its closing sequence
  for (std::size_t i = 0; i < f.lines.size(); ++i) {
    std::smatch m;
    if (!raw_end.empty()) {
      if (f.lines[i].find(raw_end) != std::string::npos) raw_end.clear();
      continue;
    }
    if (std::regex_search(f.lines[i], m, raw_open) &&
        f.lines[i].find(")" + m[1].str() + "\"", m.position(0) + m.length(0)) == std::string::npos) {
      raw_end = ")" + m[1].str() + "\"";
      continue;
    }
    if (std::regex_search(f.lines[i], not_function) || !std::regex_search(f.lines[i], m, head)) continue;
    std::size_t open = i;
    while (open < f.lines.size() && open < i + 6 && f.lines[open].find('{') == std::string::npos &&
           f.lines[open].find(';') == std::string::npos)
      ++open;
    if (open >= f.lines.size() || f.lines[open].find('{') == std::string::npos) continue;
    std::size_t close = open;
    while (close < f.lines.size() && !(f.lines[close].rfind('}', 0) == 0)) ++close;
    if (f.lines[open].rfind('}') != std::string::npos && f.lines[open].back() == '}') close = open;  // one line
    out.push_back({f.path.string() + ":" + m[1].str(), close - i + 1});
    i = close;
  }
  return out;
}

TEST(SourceSizes, NoFileOverSixHundredLinesBeyondTheListed) {
  std::size_t files = 0;
  for (const auto& f : source_files()) {
    ++files;
    auto listed = kLargeFiles.find(f.path.string());
    const std::size_t limit = listed == kLargeFiles.end() ? kFileLines : listed->second;
    EXPECT_LE(f.lines.size(), limit) << "src/" << f.path.string() << ": " << f.lines.size() << " lines";
  }
  EXPECT_GT(files, 200u) << "the scan found almost no sources under " << source_root();
  for (const auto& [path, lines] : kLargeFiles) EXPECT_TRUE(std::filesystem::exists(source_root() / path)) << path;
}

TEST(SourceSizes, NoFunctionOverOneHundredLinesBeyondTheListed) {
  std::size_t seen = 0;
  std::map<std::string, std::size_t> listed_found;
  for (const auto& f : source_files())
    for (const auto& fn : functions(f)) {
      ++seen;
      if (kLargeFunctions.count(fn.name)) listed_found[fn.name] = fn.lines;
      auto listed = kLargeFunctions.find(fn.name);
      const std::size_t limit = listed == kLargeFunctions.end() ? kFunctionLines : listed->second;
      EXPECT_LE(fn.lines, limit) << "src/" << fn.name << ": " << fn.lines << " lines";
    }
  EXPECT_GT(seen, 1000u) << "the scan found almost no functions";
  // A listed function that was split (or renamed) leaves the list.
  for (const auto& [name, lines] : kLargeFunctions) {
    auto found = listed_found.find(name);
    EXPECT_TRUE(found != listed_found.end() && found->second > kFunctionLines)
        << "src/" << name << " is listed as over " << kFunctionLines << " lines but is not: take it off the list";
  }
}

TEST(SourceSizes, TheScanMeasuresAFunctionItsBodyLong) {
  SourceFile f{"x/y.cpp",
               {"namespace a {", "int f(int x,", "      int y) {", "  return x;", "}", "", "struct S {", "  int g() {",
                "  }", "};", "const char* k = R\"lua(", "call(x) {", "}", ")lua\";", "void h() { }", "}  // namespace a"}};
  std::vector<Function> fns = functions(f);
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[0].name, "x/y.cpp:f");
  EXPECT_EQ(fns[0].lines, 4u);
  EXPECT_EQ(fns[1].name, "x/y.cpp:h");
  EXPECT_EQ(fns[1].lines, 1u);
}

}  // namespace
}  // namespace ptxbench::testing

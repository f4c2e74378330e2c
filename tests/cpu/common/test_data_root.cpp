// Where ptxbench reads its data (common/fs.h): $PTXBENCH_HOME, else the checkout at or above the
// working directory, else the build's source tree; a warning names both roots when they differ.
#include <gtest/gtest.h>

#include "common/fs.h"

using namespace ptxbench;

namespace {

/// A folder laid out as a checkout: definitions/ and knowledge/ (empty), plus a deeper folder.
struct FakeCheckout {
  TempDir dir{"ptxbench-checkout"};
  FakeCheckout() {
    fs::create_directories(dir.path() / "definitions");
    fs::create_directories(dir.path() / "knowledge");
    fs::create_directories(dir.path() / "src" / "deep");
  }
  [[nodiscard]] fs::path root() const { return fs::canonical(dir.path()); }
};

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

}  // namespace

TEST(DataRoot, FindsTheNearestCheckoutAtOrAboveTheFolder) {
  FakeCheckout c;
  EXPECT_EQ(find_checkout_root(c.root() / "src" / "deep"), c.root());
  EXPECT_EQ(find_checkout_root(c.root()), c.root());
  // A folder with only one of the two is not a checkout.
  TempDir half("ptxbench-half");
  fs::create_directories(half.path() / "definitions");
  EXPECT_EQ(find_checkout_root(half.path()), fs::path());
  // A checkout inside a checkout: the inner one is nearer.
  fs::create_directories(c.root() / "src" / "definitions");
  fs::create_directories(c.root() / "src" / "knowledge");
  EXPECT_EQ(find_checkout_root(c.root() / "src" / "deep"), c.root() / "src");
}

TEST(DataRoot, TheCheckoutAroundTheWorkingFolderBeatsTheBuildTreeAndWarns) {
  FakeCheckout c;
  TempDir build("ptxbench-build-tree");
  DataRoot r = resolve_data_root("", c.root() / "src" / "deep", build.path());
  EXPECT_EQ(r.path, c.root());
  EXPECT_EQ(r.source, DataRootSource::checkout);
  EXPECT_TRUE(contains(r.warning, c.root().string())) << r.warning;
  EXPECT_TRUE(contains(r.warning, build.path().string())) << r.warning;

  // The binary's own checkout: the same root, nothing to warn about (also through a symlink).
  DataRoot same = resolve_data_root("", c.root() / "src", c.root());
  EXPECT_EQ(same.source, DataRootSource::checkout);
  EXPECT_EQ(same.warning, "");
  TempDir links("ptxbench-links");
  fs::create_directory_symlink(c.root(), links.path() / "alias");
  EXPECT_EQ(resolve_data_root("", links.path() / "alias" / "src", c.root()).warning, "");
}

TEST(DataRoot, AnExplicitHomeWinsAndWarnsOnlyAgainstACheckoutAround) {
  FakeCheckout c;
  TempDir home("ptxbench-home"), build("ptxbench-build-tree"), elsewhere("ptxbench-elsewhere");
  DataRoot inside = resolve_data_root(home.path().string(), c.root() / "src", build.path());
  EXPECT_EQ(inside.path, home.path());
  EXPECT_EQ(inside.source, DataRootSource::env);
  EXPECT_TRUE(contains(inside.warning, "PTXBENCH_HOME=" + home.path().string())) << inside.warning;
  EXPECT_TRUE(contains(inside.warning, c.root().string())) << inside.warning;
  // Outside any checkout, a home other than the build tree is what the variable is for.
  DataRoot outside = resolve_data_root(home.path().string(), elsewhere.path(), build.path());
  EXPECT_EQ(outside.source, DataRootSource::env);
  EXPECT_EQ(outside.warning, "");
  // A home that is the checkout around: no warning.
  EXPECT_EQ(resolve_data_root(c.root().string(), c.root() / "src", build.path()).warning, "");
}

TEST(DataRoot, WithoutHomeOrCheckoutTheBuildTreeIsUsedQuietly) {
  TempDir elsewhere("ptxbench-elsewhere"), build("ptxbench-build-tree");
  DataRoot r = resolve_data_root("", elsewhere.path(), build.path());
  EXPECT_EQ(r.path, build.path());
  EXPECT_EQ(r.source, DataRootSource::build_tree);
  EXPECT_EQ(r.warning, "");
  EXPECT_EQ(to_string(DataRootSource::env), "PTXBENCH_HOME");
}

// The trusted Python package ptxb_triton (src/python/ptxb_triton/, src/compile/ptxb_triton_package.h):
// the binary embeds every module of the folder as it is, writes the package to the cache where the
// sandboxed scripts can read it, and the build pass pins the platform key that platform_key.py
// computes, the one the runner's shim pins (tests/cpu/runner/test_triton_shim.cpp runs the shim).
#include <gtest/gtest.h>

#include <set>

#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "compile/ptxb_triton_package.h"
#include "compile/triton_check.h"

using namespace ptxbench;

namespace {
const fs::path kSource = fs::path(PTXBENCH_SOURCE_DIR) / "src/python/ptxb_triton";
}  // namespace

TEST(PtxbTritonPackage, EmbedsEveryModuleOfTheFolderVerbatim) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(kSource))
    if (entry.path().extension() == ".py") names.insert(entry.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"__init__.py", "launch_probe.py", "platform_key.py", "shim_driver.py",
                                          "triton_build.py", "triton_check.py"}));
  for (const auto& name : names) {
    // A module added to the folder but not to src/CMakeLists.txt throws here.
    EXPECT_EQ(ptxb_triton_module(name), read_file(kSource / name)) << name;
  }
  EXPECT_THROW((void)ptxb_triton_module("missing.py"), Error);
}

TEST(PtxbTritonPackage, IsWrittenToTheCacheReadableByEveryone) {
  const fs::path& dir = ptxb_triton_package_dir();
  EXPECT_EQ(dir.filename(), "ptxb_triton");
  EXPECT_EQ(dir.parent_path().parent_path(), cache_root() / "python");
  EXPECT_EQ(dir.parent_path().filename().string().rfind("ptxb_triton-", 0), 0u) << dir;
  EXPECT_EQ(&ptxb_triton_package_dir(), &dir) << "written once per process";
  for (const auto& name : {"__init__.py", "platform_key.py", "triton_build.py", "triton_check.py", "launch_probe.py"}) {
    ASSERT_TRUE(fs::is_regular_file(dir / name)) << name;
    EXPECT_EQ(read_file(dir / name), ptxb_triton_module(name)) << name;
    EXPECT_NE(fs::status(dir / name).permissions() & fs::perms::others_read, fs::perms::none) << name;
  }
  EXPECT_NE(fs::status(dir).permissions() & fs::perms::others_exec, fs::perms::none);
  EXPECT_EQ(default_triton_checker_path(), dir / "triton_check.py");
}

// The build pass (triton_build.py, run as a script: its folder is not on sys.path) pins Triton's
// platform_key to what platform_key.py computes, on a stand-in Triton whose own key differs.
TEST(PtxbTritonPackage, TheBuildPassPinsThePlatformKeyOfTheSharedModule) {
  std::string python;
  try {
    python = python_interpreter(default_python_command()).executable;
  } catch (const EnvironmentError& e) {
    GTEST_SKIP() << e.what();
  }
  TempDir stubs("ptxb-platform-key");
  fs::create_directories(stubs.path() / "triton" / "runtime");
  write_file_atomic(stubs.path() / "triton" / "__init__.py", "");
  write_file_atomic(stubs.path() / "triton" / "runtime" / "__init__.py", "");
  write_file_atomic(stubs.path() / "triton" / "runtime" / "build.py", "def platform_key():\n    return 'asked file'\n");
  const std::string code =
      "import importlib.util, os, sys\n"
      "package, stubs = sys.argv[1], sys.argv[2]\n"
      "sys.path[:0] = [stubs, os.path.dirname(package)]\n"
      "spec = importlib.util.spec_from_file_location('build_pass', os.path.join(package, 'triton_build.py'))\n"
      "build_pass = importlib.util.module_from_spec(spec)\n"
      "spec.loader.exec_module(build_pass)\n"
      "build_pass.pin_platform_key()\n"
      "import triton.runtime.build\n"
      "from ptxb_triton.platform_key import platform_key\n"
      "print(triton.runtime.build.platform_key())\n"
      "print(platform_key())\n";
  ProcessSpec spec;
  spec.argv = {python, "-I", "-S", "-B", "-c", code, ptxb_triton_package_dir().string(), stubs.path().string()};
  ProcessResult r = run_process(spec, 60);
  ASSERT_TRUE(r.status.success()) << r.err.text;
  auto newline = r.out.text.find('\n');
  ASSERT_NE(newline, std::string::npos) << r.out.text;
  std::string pinned = r.out.text.substr(0, newline), computed = r.out.text.substr(newline + 1);
  if (!computed.empty() && computed.back() == '\n') computed.pop_back();
  EXPECT_EQ(pinned, computed);
  EXPECT_NE(pinned, "asked file");
  EXPECT_NE(pinned.find(",64bit,ELF"), std::string::npos) << pinned;
}

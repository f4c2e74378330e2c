// ELF reading and the checks on a built candidate library, on small libraries built here with g++.
#include <gtest/gtest.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "compile/binary_check.h"

using namespace ptxbench;

namespace {
ElfInfo build(const TempDir& dir, const std::string& name, const std::string& source, const std::string& extra = "") {
  fs::path src = dir.path() / (name + ".cpp"), lib = dir.path() / (name + ".so");
  write_file_atomic(src, source);
  auto r = run_process(ProcessSpec{{"/bin/sh", "-c", "g++ -shared -fPIC -o " + lib.string() + " " + src.string() + " " + extra}}, 120);
  EXPECT_TRUE(r.status.success()) << r.err.text;
  return read_elf(read_file(lib), lib.string());
}
}  // namespace

TEST(BinaryCheck, ExportedEntryPointPasses) {
  TempDir dir;
  ElfInfo lib = build(dir, "good", "extern \"C\" __attribute__((visibility(\"default\"))) int ptxb_run(const void*, int, void*) { return 0; }");
  BinaryCheckResult r = check_candidate_library(lib);
  EXPECT_TRUE(r.abi_error.empty()) << r.abi_error;
  EXPECT_TRUE(r.banned.empty());
}

TEST(BinaryCheck, MangledOrMissingEntryPointIsAnAbiError) {
  TempDir dir;
  BinaryCheckResult mangled = check_candidate_library(build(dir, "mangled", "int ptxb_run(const void*, int, void*) { return 0; }"));
  EXPECT_NE(mangled.abi_error.find("C++ linkage"), std::string::npos);
  BinaryCheckResult missing = check_candidate_library(build(dir, "missing", "extern \"C\" int other() { return 0; }"));
  EXPECT_NE(missing.abi_error.find("does not export ptxb_run"), std::string::npos);
}

TEST(BinaryCheck, BannedImportsAreFound) {
  TempDir dir;
  ElfInfo lib = build(dir, "banned", R"(
extern "C" int cublasCreate_v2(void**);
extern "C" void* dlopen(const char*, int);
extern "C" int ptxb_run(const void*, int, void*) { void* h; cublasCreate_v2(&h); return dlopen("x", 0) != nullptr; })");
  BinaryCheckResult r = check_candidate_library(lib);
  std::vector<std::string> symbols;
  for (const auto& b : r.banned) symbols.push_back(b.symbol);
  EXPECT_NE(std::find(symbols.begin(), symbols.end(), "cublasCreate_v2"), symbols.end());
  EXPECT_NE(std::find(symbols.begin(), symbols.end(), "dlopen"), symbols.end());
}

TEST(BinaryCheck, UnexpectedNeededLibraryIsBanned) {
  ElfInfo fake;
  fake.needed = {"libcudart.so.13", "libc.so.6", "libcublas.so.13"};
  BinaryCheckResult r = check_candidate_library(fake);
  ASSERT_EQ(r.banned.size(), 1u);
  EXPECT_EQ(r.banned[0].symbol, "libcublas.so.13");
}

TEST(Elf, MalformedImagesAreRejected) {
  EXPECT_THROW(read_elf("not an elf", "x"), InputError);
  std::string truncated = "\x7f" "ELF";
  truncated += std::string(10, '\x02');
  EXPECT_THROW(read_elf(truncated, "x"), InputError);
}

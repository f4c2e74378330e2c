// ELF reading and the checks on a built candidate library: the ABI export, the needed libraries,
// and the import allowlist (its data file, every group, and real libraries built with g++/nvcc).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "common/cuda_tools.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "compile/binary_check.h"
#include "compile/compiler.h"
#include "verdict/compile_section.h"

using namespace ptxbench;

namespace {

const ImportAllowlist& allowlist() { return ImportAllowlist::shared(default_import_allowlist_path()); }

ElfInfo build(const TempDir& dir, const std::string& name, const std::string& source, const std::string& extra = "") {
  fs::path src = dir.path() / (name + ".cpp"), lib = dir.path() / (name + ".so");
  write_file_atomic(src, source);
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "g++ -O2 -shared -fPIC -o " + lib.string() + " " + src.string() + " " + extra};
  auto r = run_process(spec, 120);
  EXPECT_TRUE(r.status.success()) << r.err.text;
  return read_elf(read_file(lib), lib.string());
}

BinaryCheckResult check(const ElfInfo& lib) { return check_candidate_library(lib, allowlist()); }

/// rule -> symbols, for assertions that name both.
std::map<std::string, std::set<std::string>> by_rule(const BinaryCheckResult& r) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& b : r.banned) out[b.rule].insert(b.symbol);
  return out;
}

ElfInfo importing(std::initializer_list<const char*> names) {
  ElfInfo lib;
  for (const char* n : names) {
    ElfSymbol s;
    s.name = n;
    s.type = 2;
    s.binding = 1;
    lib.dynamic_symbols.push_back(s);
  }
  return lib;
}

std::string group_of(const std::string& symbol) {
  ImportVerdict v = allowlist().classify(symbol);
  return v.group ? v.group->name : std::string("<none>");
}

}  // namespace

TEST(BinaryCheck, ExportedEntryPointPasses) {
  TempDir dir;
  ElfInfo lib = build(dir, "good", "extern \"C\" __attribute__((visibility(\"default\"))) int ptxb_run(const void*, int, void*) { return 0; }");
  BinaryCheckResult r = check(lib);
  EXPECT_TRUE(r.abi_error.empty()) << r.abi_error;
  EXPECT_TRUE(r.banned.empty()) << describe_banned(r.banned);
}

TEST(BinaryCheck, MangledOrMissingEntryPointIsAnAbiError) {
  TempDir dir;
  BinaryCheckResult mangled = check(build(dir, "mangled", "int ptxb_run(const void*, int, void*) { return 0; }"));
  EXPECT_NE(mangled.abi_error.find("C++ linkage"), std::string::npos);
  BinaryCheckResult missing = check(build(dir, "missing", "extern \"C\" int other() { return 0; }"));
  EXPECT_NE(missing.abi_error.find("does not export ptxb_run"), std::string::npos);
}

TEST(BinaryCheck, BannedImportsAreFound) {
  TempDir dir;
  ElfInfo lib = build(dir, "banned", R"(
extern "C" int cublasCreate_v2(void**);
extern "C" void* dlopen(const char*, int);
extern "C" int ptxb_run(const void*, int, void*) { void* h; cublasCreate_v2(&h); return dlopen("x", 0) != nullptr; })");
  auto rules = by_rule(check(lib));
  EXPECT_EQ(rules["vendor-library"], std::set<std::string>{"cublasCreate_v2"});
  EXPECT_EQ(rules["dynamic-loading"], std::set<std::string>{"dlopen"});
}

// The escapes that got past the old denylist, each in a real library: every one is banned with
// the group that explains it, and the rest of the library (C++ runtime, libstdc++ strings) passes.
TEST(BinaryCheck, EscapesThatPassedTheDenylistAreBanned) {
  TempDir dir;
  ElfInfo lib = build(dir, "escapes", R"(
#include <fstream>
#include <string>
#include <thread>
#include <link.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
extern "C" int cuptiActivityEnable(int);
extern "C" __attribute__((visibility("default"))) int ptxb_run(const void*, int, void*) {
  std::ifstream in("/etc/hostname");
  std::string line;
  std::getline(in, line);
  long fd = syscall(SYS_openat, -100, "/etc/hostname", 0);
  dl_iterate_phdr(nullptr, nullptr);
  dup2(1, 3);
  send(3, line.data(), line.size(), 0);
  std::thread([] {}).detach();
  return cuptiActivityEnable(0) + (int)fd;
})");
  BinaryCheckResult r = check(lib);
  auto rules = by_rule(r);
  EXPECT_TRUE(rules["file-io"].count("_ZNSt14basic_ifstreamIcSt11char_traitsIcEED1Ev")) << describe_banned(r.banned);
  EXPECT_TRUE(rules["raw-syscalls"].count("syscall"));
  EXPECT_TRUE(rules["dynamic-loading"].count("dl_iterate_phdr"));
  EXPECT_TRUE(rules["raw-fd-io"].count("dup2"));
  EXPECT_TRUE(rules["network"].count("send"));
  EXPECT_TRUE(rules["threads"].count("_ZNSt6thread6detachEv"));
  EXPECT_TRUE(rules["cupti"].count("cuptiActivityEnable"));
  EXPECT_EQ(rules.count(kNotAllowedRule), 0u) << describe_banned(r.banned);
  for (const auto& b : r.banned) {
    EXPECT_FALSE(b.symbol.rfind("_ZNSt7__cxx1112basic_string", 0) == 0) << b.symbol << " is std::string";
    if (b.symbol.rfind("_Z", 0) == 0) {
      EXPECT_FALSE(b.demangled.empty()) << b.symbol;
    }
  }
  // The message names symbols readably and gives each group's reason once.
  std::string m = describe_banned(r.banned);
  EXPECT_NE(m.find("std::thread::detach()"), std::string::npos) << m;
  EXPECT_NE(m.find("threads: "), std::string::npos);
  EXPECT_NE(m.find(allowlist().classify("pthread_create").group->reason), std::string::npos);
}

TEST(BinaryCheck, UnlistedSymbolsAreBannedAsNotOnTheAllowlist) {
  BinaryCheckResult r = check(importing({"printf", "cudaMalloc", "my_helper_from_nowhere", "nanosleep"}));
  ASSERT_EQ(r.banned.size(), 2u) << describe_banned(r.banned);
  EXPECT_EQ(r.banned[0].rule, kNotAllowedRule);
  EXPECT_EQ(r.banned[0].symbol, "my_helper_from_nowhere");
  EXPECT_EQ(r.banned[1].symbol, "nanosleep");
  std::string m = describe_banned(r.banned);
  EXPECT_NE(m.find("not on the allowlist: my_helper_from_nowhere, nanosleep"), std::string::npos) << m;
  EXPECT_NE(m.find("ABI.md"), std::string::npos);
}

TEST(BinaryCheck, MessageListsAtMostEightSymbolsPerGroup) {
  BinaryCheckResult r = check(importing({"open", "open64", "openat", "creat", "fopen", "fopen64", "freopen",
                                         "fdopen", "tmpfile", "mkstemp", "opendir"}));
  ASSERT_EQ(r.banned.size(), 11u);
  std::string m = describe_banned(r.banned);
  EXPECT_NE(m.find(", and 3 more"), std::string::npos) << m;
  EXPECT_EQ(m.find("file-io:"), m.rfind("file-io:"));
}

TEST(BinaryCheck, UnexpectedNeededLibraryIsBanned) {
  ElfInfo fake;
  fake.needed = {"libcudart.so.13", "libc.so.6", "libcublas.so.13", "libc.so.6/../../tmp/x.so", "libcuda.so.1",
                 "libstdc++.so.6", "ld-linux-x86-64.so.2"};
  BinaryCheckResult r = check(fake);
  ASSERT_EQ(r.banned.size(), 2u);
  EXPECT_EQ(r.banned[0].symbol, "libcublas.so.13");
  EXPECT_EQ(r.banned[1].symbol, "libc.so.6/../../tmp/x.so");  // a path, not a soname
  EXPECT_EQ(r.banned[0].rule, kLibraryRule);
}

// A name built by token pasting passes the source scan; the allowlist on the built library still
// catches it, through the real compile stage.
TEST(BinaryCheck, CompileStageBansWhatTheSourceScanCannotSee) {
  TempDir cache;
  CompileOptions o;
  o.cache_dir = cache.path();
  CompileResult r = Compiler(o).compile(R"(#include "ptxbench_abi.h"
#include <cstdlib>
#define CAT(a, b) a##b
__global__ void k(float* p) { p[threadIdx.x] = 1.f; }
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  if (CAT(get, env)("NV_COMPUTE_PROFILER_PERFWORKS_DIR")) return 1;
  k<<<1, 32, 0, stream>>>((float*)args[0].data);
  return (int)cudaGetLastError();
}
)");
  EXPECT_TRUE(r.source_findings.empty());
  ASSERT_EQ(r.status, CompileStatus::banned_api) << r.message << r.log;
  auto rules = by_rule(r.binary);
  EXPECT_EQ(rules["environment"], std::set<std::string>{"getenv"});
  EXPECT_NE(r.message.find("environment: getenv"), std::string::npos) << r.message;
  EXPECT_NE(ordered_json(compile_section(r))["banned"].dump().find("\"symbol\":\"getenv\""), std::string::npos);
}

// --- the allowlist data ---------------------------------------------------------------------

TEST(ImportAllowlist, ShippedFileParsesAndEveryGroupHasAReason) {
  const ImportAllowlist& list = allowlist();
  EXPECT_GE(list.allowed_groups().size(), 10u);
  EXPECT_GE(list.denied_groups().size(), 15u);
  for (const auto* groups : {&list.allowed_groups(), &list.denied_groups()})
    for (const auto& g : *groups) {
      EXPECT_GT(g.reason.size(), 20u) << g.name;
      EXPECT_FALSE(g.symbols.empty() && g.patterns.empty()) << g.name;
    }
}

// Denied groups win; a listed name that a denied group also matched would be banned silently.
TEST(ImportAllowlist, NoAllowedNameIsAlsoDenied) {
  for (const auto& g : allowlist().allowed_groups())
    for (const auto& s : g.symbols) {
      ImportVerdict v = allowlist().classify(s);
      EXPECT_TRUE(v.allowed) << s << " of " << g.name << " is denied by " << (v.group ? v.group->name : "?");
    }
}

// Every CUDA name on the list exists in this toolkit's libcudart or libcuda stub (as itself or a
// variant): a typo would ban the function it meant.
TEST(ImportAllowlist, EveryAllowedCudaNameExistsInTheToolkit) {
  std::string nvcc = find_cuda_tool("nvcc");
  if (nvcc.empty()) GTEST_SKIP() << "no CUDA toolkit";
  fs::path lib64 = fs::path(nvcc).parent_path().parent_path() / "lib64";
  std::vector<std::string> exported;
  for (fs::path p : {lib64 / "libcudart.so", lib64 / "stubs/libcuda.so"}) {
    ASSERT_TRUE(fs::exists(p)) << p;
    for (const auto& s : read_elf(read_file(p), p.string()).dynamic_symbols)
      if (s.defined) exported.push_back(s.name);
  }
  std::sort(exported.begin(), exported.end());
  const std::regex suffix("(_v[0-9]+)?(_ptsz|_ptds)?");
  int checked = 0;
  for (const auto& g : allowlist().allowed_groups())
    for (const auto& s : g.symbols) {
      if (s.rfind("cu", 0) != 0 && s.rfind("__cuda", 0) != 0) continue;
      ++checked;
      auto it = std::lower_bound(exported.begin(), exported.end(), s);
      bool found = false;
      for (; it != exported.end() && it->rfind(s, 0) == 0 && !found; ++it)
        found = std::regex_match(it->substr(s.size()), suffix);
      EXPECT_TRUE(found) << s << " (" << g.name << ") is not exported by libcudart or libcuda";
    }
  EXPECT_GT(checked, 150);
}

// One representative per group, allowed and denied, including the variant suffixes and the
// precise patterns (nothing of std::thread or the file streams slips through an allowed pattern).
struct GroupCase {
  const char* symbol;
  const char* group;
  bool allowed;
};
class ImportGroups : public ::testing::TestWithParam<GroupCase> {};

TEST_P(ImportGroups, SymbolIsJudgedByItsGroup) {
  const GroupCase& c = GetParam();
  ImportVerdict v = allowlist().classify(c.symbol);
  EXPECT_EQ(v.allowed, c.allowed) << c.symbol;
  EXPECT_EQ(group_of(c.symbol), c.group) << c.symbol;
}

// Test names from the symbol (gtest names need [A-Za-z0-9_]), so ctest sees the same names every run.
std::string group_case_name(const ::testing::TestParamInfo<GroupCase>& info) {
  std::string name;
  for (char c : std::string(info.param.symbol)) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(
    Allowed, ImportGroups,
    ::testing::Values(GroupCase{"__cxa_finalize", "toolchain", true},
                      GroupCase{"__cudaRegisterFatBinary", "cuda-registration", true},
                      GroupCase{"__cudaLaunchKernel_ptsz", "cuda-registration", true},
                      GroupCase{"cudaGetDeviceProperties", "cuda-errors-and-queries", true},
                      GroupCase{"cuDeviceTotalMem_v2", "cuda-errors-and-queries", true},
                      GroupCase{"cudaLaunchKernelExC", "cuda-kernels", true},
                      GroupCase{"cudaFuncSetAttribute", "cuda-kernels", true},
                      GroupCase{"cudaMallocAsync_ptsz", "cuda-memory", true},
                      GroupCase{"cuMemcpyHtoDAsync_v2_ptsz", "cuda-memory", true},
                      GroupCase{"cudaMemcpy_ptds", "cuda-memory", true},
                      GroupCase{"cudaStreamSynchronize", "cuda-streams-and-events", true},
                      GroupCase{"cuEventDestroy_v2", "cuda-streams-and-events", true},
                      GroupCase{"cudaGraphLaunch", "cuda-graphs", true},
                      GroupCase{"cuTensorMapEncodeTiled", "cuda-tensor-maps", true},
                      GroupCase{"cudaCreateTextureObject", "cuda-textures", true},
                      GroupCase{"__isoc23_strtol", "c-memory-and-strings", true},
                      GroupCase{"__printf_chk", "c-stdout", true},
                      GroupCase{"exit", "exit-in-a-call", true},
                      GroupCase{"cudaSetDevice", "current-device", true},
                      GroupCase{"expf", "c-math", true},
                      GroupCase{"sincosl", "c-math", true},
                      GroupCase{"clock_gettime", "clocks", true},
                      GroupCase{"pthread_mutex_lock", "locks", true},
                      GroupCase{"_ZnwmSt11align_val_t", "cxx-runtime", true},
                      GroupCase{"_ZSt24__throw_out_of_range_fmtPKcz", "cxx-runtime", true},
                      GroupCase{"_ZNSt13runtime_errorC1EPKc", "cxx-runtime", true},
                      GroupCase{"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm", "cxx-containers", true},
                      GroupCase{"_ZSt29_Rb_tree_insert_and_rebalancebPSt18_Rb_tree_node_baseS0_RS_", "cxx-containers", true},
                      GroupCase{"_ZSt4cout", "cxx-streams", true},
                      GroupCase{"_ZNSolsEi", "cxx-streams", true},
                      GroupCase{"_ZNSt8ios_base4InitC1Ev", "cxx-streams", true},
                      GroupCase{"_ZTVNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEEE", "cxx-streams", true}), group_case_name);

INSTANTIATE_TEST_SUITE_P(
    Denied, ImportGroups,
    ::testing::Values(GroupCase{"cublasLtMatmul", "vendor-library", false},
                      GroupCase{"cuptiSubscribe", "cupti", false},
                      GroupCase{"cuModuleLoadData", "module-loading", false},
                      GroupCase{"cudaLibraryLoadData", "module-loading", false},
                      GroupCase{"cuLinkAddData_v2", "module-loading", false},
                      GroupCase{"cuGetProcAddress_v2", "driver-entry-points", false},
                      GroupCase{"cudaGetDriverEntryPointByVersion_ptsz", "driver-entry-points", false},
                      GroupCase{"cudaGetExportTable", "driver-entry-points", false},
                      GroupCase{"cuCtxCreate_v4", "context-controls", false},
                      GroupCase{"cuCtxSetCurrent", "context-controls", false},
                      GroupCase{"cuDevicePrimaryCtxReset_v2", "context-controls", false},
                      GroupCase{"cudaDeviceReset", "context-controls", false},
                      GroupCase{"cudaSetDeviceFlags", "context-controls", false},
                      GroupCase{"cudaDeviceSetLimit", "device-wide-settings", false},
                      GroupCase{"cudaDeviceSetCacheConfig", "device-wide-settings", false},
                      GroupCase{"cudaStreamSetAttribute_ptsz", "device-wide-settings", false},
                      GroupCase{"cudaLaunchHostFunc_ptsz", "host-callbacks", false},
                      GroupCase{"cudaStreamAddCallback", "host-callbacks", false},
                      GroupCase{"cudaGraphAddHostNode", "host-callbacks", false},
                      GroupCase{"cudaGraphAddNode", "host-callbacks", false},
                      GroupCase{"cudaIpcOpenMemHandle", "ipc-and-sharing", false},
                      GroupCase{"cuMemExportToShareableHandle", "ipc-and-sharing", false},
                      GroupCase{"cudaDeviceEnablePeerAccess", "peer-access", false},
                      GroupCase{"cudaMemcpyPeerAsync", "peer-access", false},
                      GroupCase{"cudaProfilerStop", "profiler-control", false},
                      GroupCase{"pthread_create", "threads", false},
                      GroupCase{"_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE", "threads", false},
                      GroupCase{"_ZTVNSt13__future_base11_State_baseE", "threads", false},
                      GroupCase{"open64", "file-io", false},
                      GroupCase{"fopen", "file-io", false},
                      GroupCase{"stdin", "file-io", false},
                      GroupCase{"_ZSt3cin", "file-io", false},
                      GroupCase{"_ZNSt13basic_filebufIcSt11char_traitsIcEE4openEPKcSt13_Ios_Openmode", "file-io", false},
                      GroupCase{"_ZNSt14basic_ofstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode", "file-io", false},
                      GroupCase{"_ZTVSt13basic_fstreamIcSt11char_traitsIcEE", "file-io", false},
                      GroupCase{"_ZN9__gnu_cxx13stdio_filebufIcSt11char_traitsIcEEC1EiSt13_Ios_Openmodem", "file-io", false},
                      GroupCase{"_ZNSt10filesystem7__cxx114pathC1ERKS1_", "file-io", false},
                      GroupCase{"cudaGraphDebugDotPrint", "file-io", false},
                      GroupCase{"write", "raw-fd-io", false},
                      GroupCase{"dup3", "raw-fd-io", false},
                      GroupCase{"close", "raw-fd-io", false},
                      GroupCase{"sendmsg", "network", false},
                      GroupCase{"recvfrom", "network", false},
                      GroupCase{"posix_spawnp", "process-control", false},
                      GroupCase{"execve", "process-control", false},
                      GroupCase{"_exit", "process-exit", false},
                      GroupCase{"quick_exit", "process-exit", false},
                      GroupCase{"sigaction", "signals", false},
                      GroupCase{"raise", "signals", false},
                      GroupCase{"dlsym", "dynamic-loading", false},
                      GroupCase{"getauxval", "dynamic-loading", false},
                      GroupCase{"syscall", "raw-syscalls", false},
                      GroupCase{"mmap", "memory-mapping", false},
                      GroupCase{"mprotect", "memory-mapping", false},
                      GroupCase{"secure_getenv", "environment", false},
                      GroupCase{"environ", "environment", false}), group_case_name);

INSTANTIATE_TEST_SUITE_P(
    Unlisted, ImportGroups,
    ::testing::Values(GroupCase{"nanosleep", "<none>", false},
                      GroupCase{"cudaHostRegister", "<none>", false},
                      GroupCase{"cuModuleGetFunction", "<none>", false},
                      GroupCase{"cuStreamWriteValue32_v2", "<none>", false},
                      GroupCase{"_ZNSt13random_device7_M_initERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE", "<none>", false},
                      GroupCase{"_ZNSt6localeC1EPKc", "<none>", false},
                      GroupCase{"_ZNSt11this_thread11__sleep_forENSt6chrono8durationIlSt5ratioILl1ELl1EEEENS1_IlS2_ILl1ELl1000000000EEEE", "<none>", false},
                      GroupCase{"cudaMallocXYZ", "<none>", false},
                      GroupCase{"cudaMalloc_v2x", "<none>", false},
                      GroupCase{"__cxa_something_new", "<none>", false}), group_case_name);

TEST(ImportAllowlist, MalformedFilesNameTheField) {
  auto error = [](const std::string& text) -> std::string {
    try {
      (void)ImportAllowlist::parse(text, "test.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string head = R"({"schema": "ptxbench.allowed_imports", "schema_version": 1, "variant_suffix": "(_v2)?",)";
  EXPECT_EQ(error(head + R"("allowed": [{"group": "a", "reason": "r", "symbols": ["x"]}], "denied": []})"), "");
  EXPECT_NE(error(head + R"("allowed": [{"group": "a", "reason": "r", "symbols": ["x"], "extra": 1}], "denied": []})")
                .find("allowed[0].extra"), std::string::npos);
  EXPECT_NE(error(head + R"("allowed": [{"group": "a", "reason": "r", "patterns": ["(unclosed"]}], "denied": []})")
                .find("not a regular expression"), std::string::npos);
  EXPECT_NE(error(head + R"("allowed": [{"group": "a", "reason": "r", "symbols": ["x"]}], "denied": [{"group": "a", "reason": "r", "symbols": ["y"]}]})")
                .find("names two groups"), std::string::npos);
  EXPECT_NE(error(head + R"("allowed": [{"group": "a", "reason": "r", "symbols": ["x", "x"]}], "denied": []})")
                .find("listed twice"), std::string::npos);
  EXPECT_NE(error(head + R"("allowed": [{"group": "a", "reason": "r"}], "denied": []})").find("no symbols"),
            std::string::npos);
  EXPECT_NE(error(head + R"("allowed": []})").find("denied"), std::string::npos);
}

TEST(Elf, MalformedImagesAreRejected) {
  EXPECT_THROW(read_elf("not an elf", "x"), InputError);
  std::string truncated = "\x7f" "ELF";
  truncated += std::string(10, '\x02');
  EXPECT_THROW(read_elf(truncated, "x"), InputError);
}

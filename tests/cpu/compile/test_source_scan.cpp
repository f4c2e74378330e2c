// The banned-API scan: comments do not count, string literals do, every rule has a reason and a
// line; the lexer reads the source as the compiler does (line splices, raw strings, digit
// separators), and the repository's own kernels and pack headers scan clean.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "compile/source_scan.h"

using namespace ptxbench;

namespace {
std::vector<std::string> rules(const std::string& src) {
  std::vector<std::string> out;
  for (const auto& f : scan_source(src)) out.push_back(f.rule);
  return out;
}
using Rules = std::vector<std::string>;

/// The one finding of `src`, which must have exactly one.
SourceFinding only(const std::string& src) {
  auto f = scan_source(src);
  EXPECT_EQ(f.size(), 1u) << src;
  return f.empty() ? SourceFinding{} : f[0];
}
}  // namespace

TEST(SourceScan, CommentsAreStrippedKeepingLines) {
  std::string s = "a // cublas\nb /* cudnn\n x */ c \"// kept\" 'x'\n";
  std::string t = strip_comments(s);
  EXPECT_EQ(t.size(), s.size());
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 3);
  EXPECT_EQ(t.find("cublas"), std::string::npos);
  EXPECT_EQ(t.find("cudnn"), std::string::npos);
  EXPECT_NE(t.find("\"// kept\""), std::string::npos);
  EXPECT_TRUE(scan_source("// uses cublasGemmEx? no.\n/* cutlass */ int x;").empty());
}

TEST(SourceScan, BannedLibrariesAreFoundWithLines) {
  auto f = scan_source("#include <cuda.h>\n#include <cublas_v2.h>\nint main() { cublasCreate(0); }\n");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].rule, "cublas");
  EXPECT_EQ(f[0].line, 2);
  EXPECT_EQ(f[1].line, 3);
  EXPECT_EQ(rules("#include \"cutlass/gemm.h\""), Rules{"cutlass"});
  EXPECT_EQ(rules("using namespace cute::detail;"), Rules{"cute"});
  EXPECT_EQ(rules("cudnnHandle_t h;"), Rules{"cudnn"});
}

TEST(SourceScan, EscapeHatchesAreFound) {
  EXPECT_EQ(rules("void* h = dlopen(\"libfoo.so\", 2);"), Rules{"dynamic-loading"});
  EXPECT_EQ(rules("auto p = dlsym(h, \"x\");"), Rules{"dynamic-loading"});
  EXPECT_EQ(rules("system(\"nvidia-smi\");"), Rules{"process-creation"});
  EXPECT_EQ(rules("if (fork() == 0) {}"), Rules{"process-creation"});
  EXPECT_EQ(rules("#include \"/etc/passwd\""), Rules{"include-path"});
  EXPECT_EQ(rules("#include \"../x.h\""), Rules{"include-path"});
  // A string that names a banned library is still caught (it could be handed to a loader).
  EXPECT_FALSE(rules("const char* n = \"libcublasLt.so\";").empty());
}

// --- one test per rule ------------------------------------------------------------------------

TEST(SourceScan, FileStreamsAndFileCalls) {
  EXPECT_EQ(rules("std::ifstream in(\"x\");"), Rules{"file-io"});
  EXPECT_EQ(rules("ifstream in; in.open(p);"), Rules{"file-io"});
  EXPECT_EQ(rules("std::basic_ifstream<char> in;"), Rules{"file-io"});
  EXPECT_EQ(rules("std::filebuf b;"), Rules{"file-io"});
  EXPECT_EQ(rules("__gnu_cxx::stdio_filebuf<char> b(3, std::ios::out);"), Rules{"file-io"});
  EXPECT_EQ(rules("std::ofstream out;"), Rules{"file-io"});
  EXPECT_EQ(rules("#include <fstream>"), Rules{"file-io"});
  EXPECT_EQ(rules("for (auto& e : std::filesystem::directory_iterator(p)) {}"), Rules{"file-io"});
  EXPECT_EQ(rules("int fd = openat(AT_FDCWD, p, 0);"), Rules{"file-io"});
  EXPECT_EQ(rules("FILE* f = std::fopen(p, \"r\");"), Rules{"file-io"});
  EXPECT_EQ(only("int a;\nauto f = fopen(p, \"r\");").line, 2);
}

TEST(SourceScan, RawSystemCalls) {
  EXPECT_EQ(rules("long r = syscall(SYS_openat, -100, p, 0);"), (Rules{"raw-syscall", "raw-syscall"}));
  EXPECT_EQ(rules("asm volatile(\"syscall\" ::: \"rcx\", \"r11\");"), Rules{"raw-syscall"});
  EXPECT_EQ(rules("asm(\"int $0x80\");"), Rules{"raw-syscall"});
  EXPECT_EQ(rules("long n = __NR_write;"), Rules{"raw-syscall"});
  EXPECT_EQ(rules("#include <sys/syscall.h>"), Rules{"raw-syscall"});
}

TEST(SourceScan, LoaderIntrospection) {
  EXPECT_EQ(rules("dl_iterate_phdr(cb, nullptr);"), Rules{"dynamic-loading"});
  EXPECT_EQ(rules("Dl_info i; dladdr((void*)&printf, &i);"), Rules{"dynamic-loading"});
  EXPECT_EQ(rules("auto base = getauxval(AT_PHDR);"), Rules{"dynamic-loading"});
  EXPECT_EQ(rules("#include <link.h>"), Rules{"dynamic-loading"});
}

TEST(SourceScan, FileDescriptorDuplication) {
  EXPECT_EQ(rules("dup2(fd, 3);"), Rules{"file-descriptor"});
  EXPECT_EQ(rules("int d = dup3(1, 5, 0);"), Rules{"file-descriptor"});
  EXPECT_EQ(rules("int d = dup(3);"), Rules{"file-descriptor"});
  EXPECT_EQ(rules("fcntl(3, F_GETFL);"), Rules{"file-descriptor"});
  EXPECT_TRUE(rules("int duplicate(int); x.dup(); int dupe = 1;").empty());
}

TEST(SourceScan, SocketCalls) {
  EXPECT_EQ(rules("int s = socket(AF_INET, SOCK_STREAM, 0);"), Rules{"network"});
  EXPECT_EQ(rules("connect(s, addr, len);"), Rules{"network"});
  EXPECT_EQ(rules("send(3, buf, n, 0);"), Rules{"network"});
  EXPECT_EQ(rules("::send(3, buf, n, 0);"), Rules{"network"});
  EXPECT_EQ(rules("sendmsg(3, &m, 0);"), Rules{"network"});
  EXPECT_EQ(rules("sendto(3, b, n, 0, a, l);"), Rules{"network"});
  EXPECT_EQ(rules("recv(3, b, n, 0); recvmsg(3, &m, 0);"), (Rules{"network", "network"}));
  EXPECT_EQ(rules("#include <sys/socket.h>"), Rules{"network"});
  // Member calls, longer identifiers and std::bind are not socket calls.
  EXPECT_TRUE(rules("q.send(1); p->connect(2); resend(3); do_send(4); sender(5); auto b = std::bind(f, 1);").empty());
}

TEST(SourceScan, Threads) {
  EXPECT_EQ(rules("std::thread t([] {}); t.detach();"), Rules{"threads"});
  EXPECT_EQ(rules("std :: jthread t(f);"), Rules{"threads"});
  EXPECT_EQ(rules("auto f = std::async(std::launch::async, g);"), Rules{"threads"});
  EXPECT_EQ(rules("pthread_create(&t, nullptr, f, nullptr);"), Rules{"threads"});
  EXPECT_EQ(rules("#include <thread>"), Rules{"threads"});
  EXPECT_TRUE(rules("// std::thread in a comment\n__syncthreads(); int threads = 128;").empty());
}

TEST(SourceScan, Cupti) {
  EXPECT_EQ(rules("#include <cupti.h>"), Rules{"cupti"});
  EXPECT_EQ(rules("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL);"), (Rules{"cupti", "cupti"}));
}

TEST(SourceScan, HostPathsInStringLiterals) {
  EXPECT_EQ(rules("const char* p = \"/proc/self/maps\";"), Rules{"host-path"});
  EXPECT_EQ(rules("auto p = \"/dev/shm/x\";"), Rules{"host-path"});
  EXPECT_EQ(rules("auto p = \"/etc/passwd\";"), Rules{"host-path"});
  EXPECT_EQ(rules("auto p = \"/proc\";"), Rules{"host-path"});
  EXPECT_EQ(rules("auto p = R\"(/home/user/.ssh/id_rsa)\";"), Rules{"host-path"});
  EXPECT_EQ(rules("FILE* f = fopen(\"/proc/self/environ\", \"r\");"), (Rules{"file-io", "host-path"}));
  EXPECT_TRUE(rules("printf(\"%d/%d tiles, 50/50 split, a/proc b\\n\", x, y); auto s = \"/\";").empty());
}

TEST(SourceScan, Environment) {
  EXPECT_EQ(rules("if (getenv(\"CUDA_INJECTION64_PATH\")) return 0;"), Rules{"environment"});
  EXPECT_EQ(rules("const char* v = std::getenv(\"X\");"), Rules{"environment"});
  EXPECT_EQ(rules("extern char** environ;"), Rules{"environment"});
  EXPECT_EQ(rules("secure_getenv(\"X\");"), Rules{"environment"});
}

TEST(SourceScan, ProcessExit) {
  // exit() itself is the field's CUDA_CHECK habit: allowed, and the runner fails the call (candidate_exit.h).
  EXPECT_TRUE(rules("if (bad) exit(12);").empty());
  EXPECT_TRUE(rules("std::exit(1);").empty());
  EXPECT_EQ(rules("_exit(0); quick_exit(0);"), (Rules{"process-exit", "process-exit"}));
  EXPECT_EQ(rules("std::_Exit(3); at_quick_exit(f);"), (Rules{"process-exit", "process-exit"}));
  EXPECT_TRUE(rules("asm volatile(\"exit;\"); int on_exit_code = 0; loop.exit();").empty());
}

TEST(SourceScan, SignalsAndMemoryMapping) {
  EXPECT_EQ(rules("sigaction(SIGSEGV, &sa, nullptr);"), Rules{"signals"});
  EXPECT_EQ(rules("std::signal(SIGSEGV, h);"), Rules{"signals"});
  EXPECT_EQ(rules("#include <csignal>"), Rules{"signals"});
  EXPECT_EQ(rules("mprotect(p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC);"), Rules{"memory-mapping"});
  EXPECT_EQ(rules("void* p = mmap(0, n, 3, 0x22, -1, 0);"), Rules{"memory-mapping"});
}

TEST(SourceScan, ModuleLoadingAndDriverEntryPoints) {
  EXPECT_EQ(rules("cuModuleLoadData(&m, image);"), Rules{"module-loading"});
  EXPECT_EQ(rules("cudaLibraryLoadData(&l, image, 0, 0, 0, 0, 0, 0);"), Rules{"module-loading"});
  EXPECT_EQ(rules("nvrtcCreateProgram(&p, src, 0, 0, 0, 0);"), Rules{"module-loading"});
  EXPECT_EQ(rules("cudaGetDriverEntryPoint(\"cuTensorMapEncodeTiled\", &fn, 0, &q);"), Rules{"driver-entry-point"});
  EXPECT_EQ(rules("cuGetProcAddress(\"cuLaunchKernel\", &fn, 12000, 0, nullptr);"), Rules{"driver-entry-point"});
}

// #define F "/some/host/file" then #include F makes nvcc print the file's tokens in the compile log.
TEST(SourceScan, MacroIncludesAreRejected) {
  auto f = only("#define F \"/some/host/file\"\n#include F\n");
  EXPECT_EQ(f.rule, "include-form");
  EXPECT_EQ(f.line, 2);
  EXPECT_EQ(f.excerpt, "#include F");
  EXPECT_EQ(rules("  #  include\tHEADER(x)"), Rules{"include-form"});
  EXPECT_EQ(rules("%:include F"), Rules{"include-form"});                   // digraph
  EXPECT_EQ(rules("#/* c */include F"), Rules{"include-form"});             // comment as whitespace
  EXPECT_EQ(only("int a;\n#inc\\\nlude F\n").rule, "include-form");         // spliced directive
  EXPECT_EQ(only("int a;\n#inc\\\nlude F\n").line, 2);
  EXPECT_EQ(rules("#if __has_include(F)\n#endif"), Rules{"include-form"});
  EXPECT_EQ(rules("#define H(x) __has_include(x)"), Rules{"include-form"});
  EXPECT_TRUE(rules("#include <cuda.h>\n#include\"ptxbench_abi.h\"\n#  include <cstdio>\n#ifdef __has_include\n"
                    "#if __has_include(<cuda/barrier>)\n#endif\n#endif")
                  .empty());
}

TEST(SourceScan, OtherFileReadingDirectives) {
  EXPECT_EQ(rules("#include_next <stdio.h>"), Rules{"include-directive"});
  EXPECT_EQ(rules("#import \"x.h\""), Rules{"include-directive"});
  EXPECT_EQ(rules("const char d[] = {\n#embed \"data.bin\"\n};"), Rules{"include-directive"});
  EXPECT_EQ(rules("#if __has_include_next(<x.h>)\n#endif"), Rules{"include-directive"});
  EXPECT_EQ(rules("#if __has_include(\"/etc/shadow\")\n#endif"), Rules{"include-path"});
  EXPECT_EQ(rules("#include <ptxb/../../secret.h>"), Rules{"include-path"});
  // GCC prints the source line of a host-compiler diagnostic by re-reading the file a marker names.
  EXPECT_EQ(rules("#line 1 \"/etc/os-release\""), Rules{"line-directive"});
  EXPECT_EQ(rules("# 7 \"x.cu\""), Rules{"line-directive"});
  EXPECT_EQ(rules("#pragma GCC dependency \"x.h\""), Rules{"pragma-dependency"});
  EXPECT_EQ(rules("_Pragma(\"GCC dependency \\\"x.h\\\"\")"), Rules{"pragma-dependency"});
  EXPECT_EQ(rules("asm(\".section .rodata\\n.incbin \\\"secret\\\"\");"), Rules{"assembler-include"});
  EXPECT_TRUE(rules("#pragma once\n#pragma unroll\n#pragma nv_diag_suppress 177\n#define LINE __LINE__").empty());
}

// --- the lexer: what a fake comment or string would otherwise hide ---------------------------

TEST(SourceScan, RawStringsDoNotHideCode) {
  // The scanner must not take "/*" inside the raw string for a comment.
  EXPECT_EQ(rules("const char* r = R\"x(\" /* )x\";\n#include F\n// */\n"), Rules{"include-form"});
  EXPECT_EQ(rules("auto r = R\"(#include F)\";"), Rules{});  // inside a string: not a directive
  EXPECT_EQ(rules("auto r = u8R\"d(getenv)d\"; getenv(\"x\");"), (Rules{"environment", "environment"}));
}

TEST(SourceScan, DigitSeparatorsAreNotCharacterLiterals) {
  // With 1'0 read as a character literal, `// '` would end it and `/*` start a fake comment.
  EXPECT_EQ(rules("int a = 1'0; // ' /*\n#include F\n// */\n"), Rules{"include-form"});
  EXPECT_EQ(rules("int a = 0x1'FF'00, b = 1'000'000; /* 'x */ getenv(\"y\");"), Rules{"environment"});
  EXPECT_EQ(rules("char c = u8'a'; char d = 'x'; int q = c + d;"), Rules{});
}

TEST(SourceScan, LineSplicesAreAppliedBeforeComments) {
  // `*\<newline>/` closes the comment for the compiler: the include after it is live code.
  auto f = only("/* a *\\\n/ #include F\n");
  EXPECT_EQ(f.rule, "include-form");
  EXPECT_EQ(f.line, 2);
  // A line comment continued by a backslash swallows the next line, as in the compiler.
  EXPECT_TRUE(rules("// note \\\ngetenv(\"X\");\n").empty());
  // A spliced string keeps its contents a string.
  EXPECT_TRUE(rules("const char* s = \"abc\\\n#include F\";").empty());
  EXPECT_EQ(only("int a;\nint b;\nget\\\nenv(\"X\");\n").line, 3);
}

TEST(SourceScan, LongTokensDoNotBreakTheScanner) {
  // libstdc++'s std::regex recurses per repetition: `cublas\w*` over a 64 KiB identifier overflows
  // an 8 MiB stack (measured), which would crash the process. The spaces after '#' would hide a
  // directive from a bounded pattern.
  const std::size_t n = 64 << 10;
  std::string big = "int x = 1;\nconst char* s = \"" + std::string(n, 'a') + "\";\nint " + std::string(n, 'b') +
                    " = 0;\nauto c = cublas" + std::string(n, 'c') + ";\n#" + std::string(n, ' ') + "include F\n";
  Rules r = rules(big);
  EXPECT_EQ(r, (Rules{"cublas", "include-form"}));
}

TEST(SourceScan, FindingsAreCappedForTheMessage) {
  std::string src;
  for (int i = 0; i < 5000; ++i) src += "cublasCreate(&h" + std::to_string(i) + ");\n";
  auto f = scan_source(src);
  ASSERT_EQ(f.size(), kMaxSourceFindings);
  EXPECT_EQ(f.front().line, 1);
  EXPECT_EQ(f.back().line, static_cast<int>(kMaxSourceFindings));
}

TEST(SourceScan, OrdinaryKernelCodeIsClean) {
  EXPECT_TRUE(scan_source(R"(
#include "ptxbench_abi.h"
#include <cuda.h>
__global__ void k(float* p) { asm volatile("wgmma.fence.sync.aligned;"); p[0] = 1; }
PTXB_EXPORT int ptxb_run(const ptxb_tensor* a, int32_t n, cudaStream_t s) {
  cudaMemsetAsync(a[0].data, 0, 4, s); k<<<1, 1, 0, s>>>((float*)a[0].data); return cudaGetLastError();
})").empty());
  EXPECT_TRUE(scan_source("int ecosystem(int x); int subsystem = 1; int flat_at = 0;").empty());
}

// The repository's kernels and the headers models copy from: no false positives. (cublas_call.cu
// is the one fixture that must be caught.)
TEST(SourceScan, RepositoryKernelsAndPackHeadersAreClean) {
  const fs::path root = PTXBENCH_SOURCE_DIR;
  std::vector<fs::path> files;
  for (const char* dir : {"tests/fixtures/gemm", "tests/fixtures/attention", "tests/fixtures/gqa",
                          "knowledge/hopper/experts", "knowledge/hopper/include/ptxb",
                          "knowledge/blackwell/include/ptxb", "knowledge/blackwell/examples", "knowledge/abi"})
    for (const auto& e : fs::directory_iterator(root / dir)) {
      std::string ext = e.path().extension().string();
      if (ext == ".cu" || ext == ".cuh" || ext == ".h") files.push_back(e.path());
    }
  ASSERT_GE(files.size(), 15u);
  for (const auto& p : files) {
    auto f = scan_source(read_file(p));
    if (p.filename() == "cublas_call.cu") {
      EXPECT_FALSE(f.empty());
      for (const auto& x : f) EXPECT_EQ(x.rule, "cublas") << x.excerpt;
    } else {
      EXPECT_TRUE(f.empty()) << p << ": line " << f[0].line << " " << f[0].rule << " '" << f[0].excerpt << "'";
    }
  }
}

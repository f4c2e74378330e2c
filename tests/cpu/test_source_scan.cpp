// The banned-API scan: comments do not count, string literals do, every rule has a reason.
#include <gtest/gtest.h>

#include "compile/source_scan.h"

using namespace ptxbench;

namespace {
std::vector<std::string> rules(const std::string& src) {
  std::vector<std::string> out;
  for (const auto& f : scan_source(src)) out.push_back(f.rule);
  return out;
}
}  // namespace

TEST(SourceScan, CommentsAreStrippedKeepingLines) {
  std::string s = "a // cublas\nb /* cudnn\n x */ c \"// kept\" 'x'\n";
  std::string t = strip_comments(s);
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
  EXPECT_EQ(rules("#include \"cutlass/gemm.h\""), std::vector<std::string>{"cutlass"});
  EXPECT_EQ(rules("using namespace cute::detail;"), std::vector<std::string>{"cute"});
  EXPECT_EQ(rules("cudnnHandle_t h;"), std::vector<std::string>{"cudnn"});
}

TEST(SourceScan, EscapeHatchesAreFound) {
  EXPECT_EQ(rules("void* h = dlopen(\"libfoo.so\", 2);"), std::vector<std::string>{"dynamic-loading"});
  EXPECT_EQ(rules("auto p = dlsym(h, \"x\");"), std::vector<std::string>{"dynamic-loading"});
  EXPECT_EQ(rules("system(\"nvidia-smi\");"), std::vector<std::string>{"process-creation"});
  EXPECT_EQ(rules("if (fork() == 0) {}"), std::vector<std::string>{"process-creation"});
  EXPECT_EQ(rules("#include \"/etc/passwd\""), std::vector<std::string>{"include-path"});
  EXPECT_EQ(rules("#include \"../x.h\""), std::vector<std::string>{"include-path"});
  // A string that names a banned library is still caught (it could be handed to a loader).
  EXPECT_FALSE(rules("const char* n = \"libcublasLt.so\";").empty());
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

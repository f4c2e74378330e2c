// The compile stage with the real nvcc: statuses, artifacts, kernel names, PTX and ptxas data,
// the content-hash cache, and the time limit.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "compile/compiler.h"
#include "verdict/compile_section.h"

using namespace ptxbench;

namespace {

const char* kGood = R"(#include "ptxbench_abi.h"
__global__ void scale(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= 2.0f;
  asm volatile("fence.proxy.async.shared::cta;");
}
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  int n = (int)args[0].shape[0];
  scale<<<(n + 255) / 256, 256, 0, stream>>>((float*)args[0].data, n);
  return (int)cudaGetLastError();
}
)";

class CompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = std::make_unique<TempDir>("ptxbench-test-cache");
    m_options.cache_dir = m_dir->path();
  }
  CompileOptions m_options;
  std::unique_ptr<TempDir> m_dir;
};

}  // namespace

TEST_F(CompilerTest, GoodCandidateBuildsWithArtifactsAndReports) {
  Compiler compiler(m_options);
  CompileResult r = compiler.compile(kGood);
  ASSERT_TRUE(r.ok()) << r.message << "\n" << r.log;
  EXPECT_FALSE(r.cache_hit);
  EXPECT_TRUE(fs::exists(r.library()));
  EXPECT_TRUE(fs::exists(r.cubin()));
  EXPECT_TRUE(fs::exists(r.ptx_file()));
  EXPECT_EQ(r.kernels, std::vector<std::string>{"_Z5scalePfi"});
  ASSERT_EQ(r.ptxas.kernels.size(), 1u);
  EXPECT_GT(r.ptxas.kernels[0].registers, 0);
  EXPECT_EQ(r.ptx.count("fence.proxy.async"), 1);
  EXPECT_EQ(r.key.size(), 64u);
  ordered_json j = compile_section(r);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["kernels"][0], "_Z5scalePfi");

  CompileResult again = compiler.compile(kGood);
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.key, r.key);
  EXPECT_EQ(again.dir, r.dir);
  EXPECT_EQ(again.kernels, r.kernels);
  EXPECT_EQ(again.ptxas.kernels.size(), 1u);
  EXPECT_NE(compiler.compile(std::string(kGood) + "\n// changed\n").key, r.key);
}

TEST_F(CompilerTest, CompileErrorKeepsTheLog) {
  Compiler compiler(m_options);
  std::string bad = std::string(kGood) + "\n__global__ void broken() { undeclared_thing = 1; }\n";
  CompileResult r = compiler.compile(bad);
  EXPECT_EQ(r.status, CompileStatus::compile_error);
  EXPECT_NE(r.log.find("undeclared_thing"), std::string::npos);
  EXPECT_NE(r.message.find("error"), std::string::npos);
  EXPECT_TRUE(compiler.compile(bad).cache_hit);
}

TEST_F(CompilerTest, BannedSourceNeverReachesNvcc) {
  CompileResult r = Compiler(m_options).compile("#include <cublas_v2.h>\n" + std::string(kGood));
  EXPECT_EQ(r.status, CompileStatus::banned_api);
  EXPECT_TRUE(r.key.empty());
  ASSERT_FALSE(r.source_findings.empty());
  EXPECT_EQ(r.source_findings[0].line, 1);
  EXPECT_NE(r.message.find("line 1"), std::string::npos);
}

TEST_F(CompilerTest, MissingExportIsAnAbiError) {
  // A signature that differs from the header's declaration is a C++ overload: mangled, not exported.
  std::string src = kGood;
  const std::string declared = "PTXB_EXPORT int ptxb_run(const ptxb_tensor* args";
  src.replace(src.find(declared), declared.size(), "int ptxb_run(ptxb_tensor* args");
  CompileResult r = Compiler(m_options).compile(src);
  EXPECT_EQ(r.status, CompileStatus::abi_error) << r.message;
  EXPECT_NE(r.message.find("C++ linkage"), std::string::npos);
}

TEST_F(CompilerTest, TimeLimitKillsNvccAndIsNotCached) {
  m_options.timeout_s = 0.05;
  Compiler compiler(m_options);
  CompileResult r = compiler.compile(kGood);
  EXPECT_EQ(r.status, CompileStatus::timeout);
  EXPECT_FALSE(compiler.compile(kGood).cache_hit);
}

TEST_F(CompilerTest, OversizedSourceIsRejected) {
  m_options.max_source_bytes = 100;
  CompileResult r = Compiler(m_options).compile(kGood);
  EXPECT_EQ(r.status, CompileStatus::compile_error);
  EXPECT_NE(r.message.find("limit"), std::string::npos);
}

TEST(CompilerArch, UnknownArchitectureIsAnInputError) {
  EXPECT_THROW(arch_target("sm_80"), std::exception);
  EXPECT_EQ(arch_target("sm_100a").gencode, "arch=compute_100a,code=sm_100a");
}

// The TVM-FFI binding through the real compile stage (nvcc, the import allowlist): kernels written
// the way the field writes them (CUDA_CHECK with exit(1), cudaSetDevice to the tensors' device,
// TVMFFIEnvGetStream, TVM_FFI_DLL_EXPORT_TYPED_FUNC) build and pass the static checks; the real
// escapes stay banned.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "compile/compiler.h"
#include "compile/solution.h"
#include "suite/candidate_suite.h"
#include "verdict/compile_section.h"

using namespace ptxbench;

namespace {

const std::string kData = PTXBENCH_TEST_DATA;

const char* kTvmHead = R"(#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/tvm_ffi.h>
#define CUDA_CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)
__global__ void copy(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i];
}
)";

class TvmFfiCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = std::make_unique<TempDir>("ptxbench-test-cache");
    m_options.cache_dir = m_dir->path();
  }
  CompileResult compile(const std::string& source) const { return Compiler(m_options).compile(source); }
  CompileOptions m_options;
  std::unique_ptr<TempDir> m_dir;
};

// A case of a suite in tests/fixtures/tvm_ffi/, materialized as the evaluator gets it (the field's
// kernels are edits of the project's fixtures).
std::string case_source(const std::string& suite, const std::string& name) {
  return load_suite(kData + "/fixtures/tvm_ffi/" + suite).case_named(name).source;
}

std::string banned_symbols(const CompileResult& r) {
  std::string out;
  for (const auto& b : r.binary.banned) out += b.symbol + " (" + b.rule + ") ";
  for (const auto& f : r.source_findings) out += f.excerpt + " (" + f.rule + ") ";
  return out;
}

}  // namespace

TEST_F(TvmFfiCompile, TheFieldsGemmBuildsAsItIs) {
  CompileResult r = compile(case_source("suite.json", "gemm_wgmma_tvm_ffi"));
  ASSERT_TRUE(r.ok()) << to_string(r.status) << ": " << r.message << "\n" << banned_symbols(r) << "\n" << r.log;
  ASSERT_TRUE(r.binding);
  EXPECT_EQ(*r.binding, CandidateBinding::tvm_ffi);
  EXPECT_GT(r.ptx.count("wgmma.mma_async"), 0);
  // The verdict's compile section records the binding.
  CompileSection s = compile_section(r);
  ordered_json j;
  to_json(j, s);
  EXPECT_EQ(j["binding"], "tvm-ffi");
  EXPECT_EQ(ordered_json(compile_section(r))["binding"], "tvm-ffi");
}

TEST_F(TvmFfiCompile, TheAttentionBackwardAndTheSolutionBuild) {
  CompileResult bwd = compile(case_source("mha_bwd_suite.json", "mha_bwd_simt_tvm_ffi"));
  EXPECT_TRUE(bwd.ok()) << to_string(bwd.status) << ": " << bwd.message << "\n" << banned_symbols(bwd) << "\n" << bwd.log;
  CandidateFile solution = read_candidate_file(kData + "/fixtures/tvm_ffi/gemm_wgmma_solution.json");
  CompileResult r = compile(solution.source);
  ASSERT_TRUE(r.ok()) << to_string(r.status) << ": " << r.message << "\n" << banned_symbols(r) << "\n" << r.log;
  EXPECT_EQ(r.binding, CandidateBinding::tvm_ffi);
  // The Solution is the gemm_wgmma_tvm_ffi case split in two: the same kernels come out.
  CompileResult cu = compile(case_source("suite.json", "gemm_wgmma_tvm_ffi"));
  EXPECT_EQ(r.kernels, cu.kernels);
}

TEST_F(TvmFfiCompile, ExitAndCudaSetDeviceAreAllowedTheRealEscapesAreNot) {
  const std::string run = R"(
void run(tvm::ffi::TensorView A, tvm::ffi::TensorView C) {
  CUDA_CHECK(cudaSetDevice(A.device().device_id));
  cudaStream_t s = static_cast<cudaStream_t>(TVMFFIEnvGetStream(A.device().device_type, A.device().device_id));
  int n = (int)A.numel();
  copy<<<(n + 255) / 256, 256, 0, s>>>((const float*)A.data_ptr(), (float*)C.data_ptr(), n);
  CUDA_CHECK(cudaGetLastError());
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run);
)";
  CompileResult ok = compile(kTvmHead + run);
  EXPECT_TRUE(ok.ok()) << ok.message << "\n" << banned_symbols(ok) << "\n" << ok.log;

  CompileResult quick = compile(kTvmHead + run + "void leave() { _exit(0); }\n");
  EXPECT_EQ(quick.status, CompileStatus::banned_api);
  EXPECT_NE(quick.message.find("_exit"), std::string::npos) << quick.message;

  CompileResult flags = compile(kTvmHead + run + "void flags() { cudaSetDeviceFlags(0); }\n");
  EXPECT_EQ(flags.status, CompileStatus::banned_api);
  EXPECT_NE(flags.message.find("cudaSetDeviceFlags"), std::string::npos) << flags.message;
}

TEST_F(TvmFfiCompile, AnExportMustTakeTensorsOnly) {
  CompileResult r = compile(std::string(kTvmHead) +
                            "void run(tvm::ffi::TensorView A, int64_t n) {}\nTVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run);\n");
  EXPECT_EQ(r.status, CompileStatus::compile_error);
  EXPECT_NE(r.log.find("every parameter must be a tvm::ffi::TensorView"), std::string::npos) << r.log;
}

TEST_F(TvmFfiCompile, TvmHeadersWithoutAnExportAreAnAbiErrorBeforeNvcc) {
  CompileResult r = compile(std::string(kTvmHead) + "void run(tvm::ffi::TensorView A) {}\n");
  EXPECT_EQ(r.status, CompileStatus::abi_error);
  EXPECT_NE(r.message.find("TVM_FFI_DLL_EXPORT_TYPED_FUNC"), std::string::npos);
  EXPECT_TRUE(r.log.empty());  // nvcc never ran
}

TEST_F(TvmFfiCompile, APtxbCandidateMayCallExitToo) {
  CompileResult r = compile(R"(#include "ptxbench_abi.h"
#include <cstdio>
#include <cstdlib>
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  if (nargs != 3) { fprintf(stderr, "bad arity\n"); exit(1); }
  return 0;
}
)");
  EXPECT_TRUE(r.ok()) << r.message << "\n" << banned_symbols(r);
  EXPECT_EQ(r.binding, CandidateBinding::ptxb);
}

// The import allowlist on real code, with the real nvcc: every case of the GEMM and attention
// fixture suites and of the Hopper experts keeps its compile-stage outcome, and typical host code
// (the runtime API a kernel uses, the Hopper and Blackwell packs, C++ containers, exceptions and
// iostreams) compiles. Each distinct source is built once, into a compile cache kept in the build
// tree, so only the first run pays for nvcc (a few seconds per file) and no other cache is touched.
#include <gtest/gtest.h>

#include <iostream>
#include <map>

#include "common/fs.h"
#include "compile/compiler.h"
#include "suite/candidate_suite.h"

using namespace ptxbench;

namespace {

const fs::path kRoot = PTXBENCH_SOURCE_DIR;

// Uses the runtime API a Hopper kernel typically needs, with every pack header included.
const char* kTypicalRuntime = R"(#include "ptxbench_abi.h"
#include <cuda.h>
#include <cmath>
#include <cstdio>
#include <cstring>
#include "ptxb/sm90.cuh"

__global__ void __cluster_dims__(1, 1, 1) k(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = sqrtf(p[i]);
  if (i == 0) printf("n=%d\n", n);
}
__constant__ float c_scale[4];

PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  static int sms = 0;
  if (!sms) {
    int dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, dev);
    fprintf(stderr, "%s: %d SMs\n", prop.name, sms);
  }
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000);
  int n = (int)args[0].shape[0];
  void* scratch = nullptr;
  cudaMalloc(&scratch, 1024);
  cudaFree(scratch);
  cudaMallocAsync(&scratch, 1024, stream);
  cudaMemsetAsync(scratch, 0, 1024, stream);
  cudaMemcpyAsync(scratch, args[0].data, 4, cudaMemcpyDeviceToDevice, stream);
  float h[4] = {1, 2, 3, 4};
  cudaMemcpyToSymbolAsync(c_scale, h, sizeof h, 0, cudaMemcpyHostToDevice, stream);
  cudaFreeAsync(scratch, stream);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((n + 255) / 256);
  cfg.blockDim = dim3(256);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = attr[0].val.clusterDim.y = attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  cudaOccupancyMaxActiveClusters(&clusters, (void*)k, &cfg);
  cudaLaunchKernelEx(&cfg, k, (float*)args[0].data, n);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreateWithFlags(&e1, cudaEventDisableTiming);
  cudaEventRecord(e0, stream);
  cudaStream_t side;
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  cudaStreamWaitEvent(side, e0, 0);
  cudaEventRecord(e1, side);
  cudaStreamWaitEvent(stream, e1, 0);
  cudaEventSynchronize(e1);
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e0);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(side);
  cudaStreamSynchronize(stream);
  CUtensorMap map;
  cuuint64_t dims[2] = {64, 64}, strides[1] = {128};
  cuuint32_t box[2] = {64, 64}, es[2] = {1, 1};
  CUresult cr = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, args[0].data, dims, strides, box, es,
                                       CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                       CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (cr != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(cr, &s);
    printf("%s\n", s);
  }
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    printf("%s %s\n", cudaGetErrorString(err), cudaGetErrorName(err));
    return (int)err;
  }
  char buf[64];
  snprintf(buf, sizeof buf, "%f", std::exp((double)n) + std::log2((double)n) + std::pow(2.0, n));
  puts(buf);
  return (int)cudaPeekAtLastError() + (int)strlen(buf) * 0;
}
)";

// C++ host code: containers, strings, exceptions, RTTI, locks, call_once, thread_local, chrono.
const char* kTypicalCxx = R"(#include "ptxbench_abi.h"
#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

__global__ void k(float* p) { p[threadIdx.x] = 1.f; }
struct Base { virtual ~Base() = default; virtual int f() const = 0; };
struct Derived : Base { int f() const override { return 3; } };
static std::mutex g_mu;
static std::once_flag g_once;
static std::map<int, std::string> g_names;
static std::unordered_map<long, std::vector<float>> g_cache;
thread_local int t_calls = 0;

PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::call_once(g_once, [] { g_names[1] = "one"; });
  ++t_calls;
  try {
    if (nargs < 1) throw std::runtime_error("need " + std::to_string(1) + " args");
    if (nargs > 100) throw std::invalid_argument("too many");
    std::vector<int64_t> shape(args[0].shape, args[0].shape + args[0].ndim);
    std::sort(shape.begin(), shape.end());
    std::string s = "shape:";
    for (auto d : shape) s += std::to_string(d) + ",";
    g_cache[shape.empty() ? 0 : shape[0]].push_back(1.f);
    std::unique_ptr<Base> b = std::make_unique<Derived>();
    std::shared_ptr<int> sp = std::make_shared<int>(b->f());
    std::function<int(int)> fn = [&](int x) { return x + *sp; };
    std::list<int> l = {1, 2};
    l.push_back(fn(1));
    std::optional<int> o = l.back();
    auto t0 = std::chrono::steady_clock::now();
    float* arr = new (std::nothrow) float[16];
    delete[] arr;
    float* al = new (std::align_val_t(64)) float[16];
    ::operator delete[](al, std::align_val_t(64));
    assert(o.has_value());
    std::printf("%s %lld\n", s.c_str(),
                (long long)std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
    int v = std::stoi("42") + (int)g_names.size() + (int)shape.at(0) * 0;
    k<<<1, 32, 0, stream>>>((float*)args[0].data);
    return v * 0 + (int)cudaGetLastError();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return (int)cudaErrorInvalidValue;
  }
}
)";

// Printing with iostreams and formatting with string streams.
const char* kTypicalIostream = R"(#include "ptxbench_abi.h"
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

__global__ void k(float* p) { p[threadIdx.x] = 1.f; }
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  std::ostringstream os;
  os << "nargs=" << nargs << " " << std::setprecision(3) << 1.5 << std::hex << 255;
  std::cout << os.str() << std::endl;
  std::cerr << "shape " << args[0].shape[0] << '\n';
  std::stringstream ss("1 2");
  int a = 0, b = 0;
  ss >> a >> b;
  std::string word;
  std::istringstream("x y") >> word;
  k<<<1, 32, 0, stream>>>((float*)args[0].data);
  return (a + b) * 0 + (int)word.size() * 0 + (int)cudaGetLastError();
}
)";

// Graph capture, cooperative launch, __device__/__managed__ variables, function queries.
const char* kTypicalGraphs = R"(#include "ptxbench_abi.h"
__managed__ int m_flag;
__device__ float g_buf[32];
__global__ void k(float* p) { p[threadIdx.x] = g_buf[threadIdx.x] + m_flag; }
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  void* kargs[] = {(void*)&args[0].data};
  cudaLaunchCooperativeKernel((void*)k, dim3(1), dim3(32), kargs, 0, stream);
  cudaGraph_t g;
  cudaGraphExec_t ge;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  k<<<1, 32, 0, stream>>>((float*)args[0].data);
  cudaStreamEndCapture(stream, &g);
  cudaGraphInstantiate(&ge, g, 0);
  cudaGraphLaunch(ge, stream);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  void* p = nullptr;
  cudaGetSymbolAddress(&p, g_buf);
  cudaFuncAttributes fa;
  cudaFuncGetAttributes(&fa, k);
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, 32, 0);
  cudaFunction_t f;
  cudaGetFuncBySymbol(&f, (const void*)k);
  return (int)cudaGetLastError();
}
)";

// libcu++ and cooperative groups on the device, bf16 conversions on the host: header-only, nothing
// imported beyond the launch. (Thrust and CUB host code are a different matter: CCCL's host side
// calls dlopen/dlsym and getenv, banned as before: docs/imports.md.)
const char* kTypicalLibcudacxx = R"(#include "ptxbench_abi.h"
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/std/array>
#include <cuda_bf16.h>
#include <mma.h>
namespace cg = cooperative_groups;
__global__ void k(float* p) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ float s[32];
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, s, p, sizeof(s), bar);
  bar.arrive_and_wait();
  cuda::std::array<float, 2> a{1.f, 2.f};
  p[threadIdx.x] = s[threadIdx.x] + a[1] + __bfloat162float(__float2bfloat16(1.f));
}
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  __nv_bfloat16 h = __float2bfloat16(2.f);
  k<<<1, 32, 0, stream>>>((float*)args[0].data);
  return (int)cudaGetLastError() + (int)__bfloat162float(h) * 0;
}
)";

// A Blackwell candidate with the sm100 pack and a TMA descriptor.
const char* kTypicalBlackwell = R"(#include "ptxbench_abi.h"
#include <cuda.h>
#include "ptxb/sm100.cuh"
__global__ void k(float* p) { p[threadIdx.x] = 2.f; }
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  CUtensorMap map;
  cuuint64_t dims[2] = {128, 128}, strides[1] = {256};
  cuuint32_t box[2] = {64, 64}, es[2] = {1, 1};
  if (cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, args[0].data, dims, strides, box, es,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
    return (int)cudaErrorInvalidValue;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
  k<<<1, 32, 0, stream>>>((float*)args[0].data);
  return (int)cudaGetLastError();
}
)";

struct Build {
  std::string what;
  std::string arch;
  std::string source;
  CompileStatus expect;
};

CompileStatus compile_outcome(Status verdict) {
  switch (verdict) {
    case Status::COMPILE_ERROR: return CompileStatus::compile_error;
    case Status::BANNED_API: return CompileStatus::banned_api;
    case Status::ABI_ERROR: return CompileStatus::abi_error;
    default: return CompileStatus::ok;  // every later verdict needs a build that compiled
  }
}

}  // namespace

TEST(ImportAllowlistOnRealCode, EveryFixtureExpertAndTypicalCandidateKeepsItsCompileOutcome) {
  std::vector<Build> builds;
  for (fs::path suite : {kRoot / "tests/fixtures/gemm/suite.json", kRoot / "tests/fixtures/attention/mha_fwd_suite.json",
                         kRoot / "tests/fixtures/attention/mha_fwd_causal_suite.json",
                         kRoot / "tests/fixtures/attention/mha_bwd_suite.json",
                         kRoot / "tests/fixtures/attention/mha_bwd_causal_suite.json",
                         kRoot / "knowledge/hopper/experts/gemm_n7168_k5120_suite.json",
                         kRoot / "knowledge/hopper/experts/mha_with_lse_d128_suite.json",
                         kRoot / "knowledge/hopper/experts/mha_with_lse_d128_causal_suite.json",
                         kRoot / "knowledge/hopper/experts/mha_bwd_d128_suite.json",
                         kRoot / "knowledge/hopper/experts/mha_bwd_d128_causal_suite.json"}) {
    CandidateSuite s = load_suite(suite);
    for (const auto& c : s.cases)
      builds.push_back({(suite.parent_path().filename() / suite.filename()).string() + " " + c.name, "sm_90a",
                        c.source, compile_outcome(c.expect.status)});
  }
  builds.push_back({"typical: runtime API + ptxb/sm90.cuh", "sm_90a", kTypicalRuntime, CompileStatus::ok});
  builds.push_back({"typical: C++ containers, exceptions, locks", "sm_90a", kTypicalCxx, CompileStatus::ok});
  builds.push_back({"typical: iostreams and string streams", "sm_90a", kTypicalIostream, CompileStatus::ok});
  builds.push_back({"typical: graphs, cooperative launch, managed", "sm_90a", kTypicalGraphs, CompileStatus::ok});
  builds.push_back({"typical: libcu++ barrier, cooperative groups, bf16", "sm_90a", kTypicalLibcudacxx, CompileStatus::ok});
  builds.push_back({"typical: Blackwell + ptxb/sm100.cuh", "sm_100a", kTypicalBlackwell, CompileStatus::ok});
  ASSERT_GE(builds.size(), 28u);

  std::map<std::string, Compiler> compilers;
  std::map<std::pair<std::string, std::string>, CompileStatus> built;  // (arch, source) -> status
  for (const auto& b : builds) {
    auto key = std::make_pair(b.arch, b.source);
    auto hit = built.find(key);
    CompileStatus status;
    std::string message;
    if (hit != built.end()) {
      status = hit->second;
    } else {
      CompileOptions o;
      o.arch = b.arch;
      o.cache_dir = fs::path(PTXBENCH_BUILD_DIR) / "test-compile-cache";
      Compiler& compiler = compilers.try_emplace(b.arch, o).first->second;
      CompileResult r = compiler.compile(b.source);
      status = built[key] = r.status;
      message = r.message;
      if (status == CompileStatus::compile_error) message += "\n" + r.log.substr(0, 2000);
    }
    EXPECT_EQ(to_string(status), to_string(b.expect)) << b.what << ": " << message;
    std::cout << "  " << to_string(status) << "  " << b.what << "\n";  // the outcome table, for the record
  }
}

// The macro-include trick never reaches nvcc, so the host file never reaches the compile log.
TEST(ImportAllowlistOnRealCode, MacroIncludeOfAHostFileStopsBeforeNvcc) {
  TempDir cache;
  CompileOptions o;
  o.cache_dir = cache.path();
  CompileResult r = Compiler(o).compile(
      "#include \"ptxbench_abi.h\"\n#define F \"/etc/os-release\"\n#include F\n"
      "PTXB_EXPORT int ptxb_run(const ptxb_tensor*, int32_t, cudaStream_t) { return 0; }\n");
  EXPECT_EQ(r.status, CompileStatus::banned_api);
  EXPECT_TRUE(r.log.empty());
  EXPECT_TRUE(r.key.empty());
  ASSERT_EQ(r.source_findings.size(), 2u);
  EXPECT_EQ(r.source_findings[0].rule, "host-path");  // the #define's "/etc/..." literal
  EXPECT_EQ(r.source_findings[0].line, 2);
  EXPECT_EQ(r.source_findings[1].rule, "include-form");
  EXPECT_EQ(r.source_findings[1].line, 3);
  EXPECT_NE(r.message.find("line 3: '#include F'"), std::string::npos) << r.message;
}

// The cuDNN GQA baselines (paged decode, paged causal prefill, ragged causal prefill) on the GPU
// against fp64 on the CPU for small layouts, plus argument checks. The GqaCudnnDeviceless tests
// need no GPU: they plan the graphs of the released workloads for an H200 described by its
// properties, and check GqaProblem's layout validation.
//
// Run alone: build/bin/ptxbench_gpu_tests --gtest_filter='GqaCudnn*'
#include <cuda_bf16.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "baseline/gqa_cudnn.h"
#include "baseline/gqa_cudnn_graph.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"
#include "gpu/random_fill.h"
#include "gpu_test_support.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;
using Kind = GqaProblem::Kind;

namespace {

// ---- sequence layouts -------------------------------------------------------------------------

/// `n` lengths ≥ 1 summing to `total`, uneven (weights from a fixed LCG), the same on every run.
std::vector<int32_t> lengths(int64_t n, int64_t total, uint32_t seed) {
  std::vector<double> w(static_cast<std::size_t>(n));
  uint32_t x = seed;
  for (double& v : w) {
    x = x * 1664525u + 1013904223u;
    v = 0.25 + (x >> 8) / double(1 << 24);
  }
  const double sum_w = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<int32_t> len(w.size());
  int64_t used = 0;
  for (std::size_t i = 0; i < w.size(); ++i) used += len[i] = 1 + static_cast<int32_t>((total - n) * w[i] / sum_w);
  len.back() += static_cast<int32_t>(total - used);
  return len;
}

std::vector<int32_t> indptr_of(const std::vector<int32_t>& len) {
  std::vector<int32_t> p{0};
  for (int32_t l : len) p.push_back(p.back() + l);
  return p;
}

/// `n` distinct page ids in [0, num_pages), scattered (a stride coprime with num_pages).
std::vector<int32_t> pages(int64_t n, int64_t num_pages, int64_t stride) {
  while (std::gcd(stride, num_pages) != 1) ++stride;
  std::vector<int32_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<int32_t>((i * stride + 3) % num_pages));
  return out;
}

GqaProblem make_problem(Kind kind, int64_t Hq, int64_t Hkv, const std::vector<int32_t>& q_len,
                        const std::vector<int32_t>& kv_len, int64_t num_pages) {
  GqaProblem p;
  p.kind = kind;
  p.num_qo_heads = Hq;
  p.num_kv_heads = Hkv;
  p.head_dim = 128;
  p.sm_scale = 1.0f / std::sqrt(128.0f);
  p.qo_indptr = indptr_of(q_len);
  p.kv_indptr = indptr_of(kv_len);
  p.total_q = p.qo_indptr.back();
  p.total_kv = p.kv_indptr.back();
  if (kind != Kind::ragged_prefill_causal) {
    p.num_pages = num_pages;
    p.kv_indices = pages(p.total_kv, num_pages, 7919);
  }
  return p;
}

/// The released workloads' shapes (the layouts are stand-ins with the same totals).
GqaProblem released(Kind kind) {
  switch (kind) {
    case Kind::paged_decode:
      return make_problem(kind, 24, 8, std::vector<int32_t>(15, 1), lengths(15, 9625, 1), 42784);
    case Kind::paged_prefill_causal:
      return make_problem(kind, 24, 8, {892}, {892}, 43676);
    case Kind::ragged_prefill_causal: {
      std::vector<int32_t> len = lengths(33, 16294, 2);
      return make_problem(kind, 32, 4, len, len, 0);
    }
  }
  return {};
}

// An H200 as cuDNN describes a device in JSON (the same properties as test_mha_cudnn.cpp's).
constexpr const char* kH200Properties =
    R"({"deviceName":"NVIDIA H200","maxGridSize":[2147483647,65535,65535],"maxBlockSize":[1024,1024,64],)"
    R"("regsPerBlock":65536,"multiProcessorCount":132,"warpSize":32,"maxSharedMemoryPerBlock":49152,)"
    R"("maxSharedMemoryPerBlockOptin":232448,"reservedSharedMemoryPerBlock":1024,"maxRegistersPerSM":65536,)"
    R"("maxCtasPerSM":32,"maxThreadsPerBlock":1024,"maxThreadsPerSM":2048,"pciDeviceId":0,"isTccDriver":0,)"
    R"("supportCoopLaunch":1,"smClockRateKHz":1980000,"memClockRateKHz":3201000,"l2CacheSize":52428800,)"
    R"("smVersion":900,"deviceVer":900,"cudnnVersion":91900,"schemaVersion":1,"driverVer":13000,)"
    R"("driverVersion":13000,"runtimeVer":13000,"runtimeVersion":13000,"totalGlobalMem":150754820096,"cudaDeviceId":0})";

// cuDNN's runtime-compiled engines dlopen libcuda.so.1 to load what NVRTC built; without a driver
// the toolkit's stub stands in, so planning goes as far as loading the module.
bool load_libcuda_or_stub() {
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) return true;
  for (const char* path : {"/usr/local/cuda/lib64/stubs/libcuda.so", "/usr/local/cuda/lib/stubs/libcuda.so",
                           "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"})
    if (dlopen(path, RTLD_NOW | RTLD_GLOBAL)) return true;
  return false;
}

bool planned(cudnnStatus_t st) { return st == CUDNN_STATUS_SUCCESS || st == CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER; }

}  // namespace

// Needs no GPU: for each class at its released shape, the graph the baseline tries first (the
// call's sm_scale as a device tensor; a packed page table for the paged kinds) is taken by the
// engine heuristics put first for an H200, and that engine compiles it (fused flash attention,
// runtime-compiled). On a machine without a driver the last step, loading the kernel, fails with
// CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER. The fallback forms are probed and printed too.
TEST(GqaCudnnDeviceless, FlashEnginesTakeTheReleasedShapesForAnH200) {
  if (cudnn::runtime_version_number() < 91100) GTEST_SKIP() << "deviceless planning needs cuDNN 9.11+";
  if (!load_libcuda_or_stub()) GTEST_SKIP() << "neither libcuda.so.1 nor the CUDA toolkit's stub is loadable";
  cudnn::Descriptor props = cudnn::device_properties_from_json(kH200Properties);
  for (Kind kind : {Kind::paged_decode, Kind::paged_prefill_causal, Kind::ragged_prefill_causal}) {
    GqaProblem p = released(kind);
    for (bool packed : {true, false})
      for (bool by_value : {false, true}) {
        if (!packed && !p.paged()) continue;
        GqaGraphOptions o{by_value, packed};
        const bool first_choice = packed && !by_value;
        std::string what = p.describe() + " [" + gqa_graph_form(p, o) + "]";
        cudnn::GraphBuilder g = build_gqa_sdpa_graph(p, o, nullptr);
        cudnn::PlanProbe probe = cudnn::probe_first_config(g, props);
        std::printf("%s: %s; %s\n", what.c_str(), probe.choice.describe().c_str(), probe.detail.c_str());
        if (!first_choice) continue;
        EXPECT_TRUE(planned(probe.status)) << what << ": " << probe.detail << "\n" << g.describe();
        EXPECT_NE(std::find(probe.choice.notes.begin(), probe.choice.notes.end(), "runtime_compilation"),
                  probe.choice.notes.end())
            << what << ": expected cuDNN's runtime-compiled fused attention engine, got " << probe.choice.describe();
      }
  }
}

TEST(GqaCudnnDeviceless, LayoutValidationRejectsInconsistentProblems) {
  GqaProblem ok = make_problem(Kind::paged_prefill_causal, 8, 2, {3, 4}, {5, 4}, 64);
  EXPECT_NO_THROW(ok.validate());
  EXPECT_EQ(ok.max_q_len(), 4);
  EXPECT_EQ(ok.max_kv_len(), 5);

  GqaProblem p = ok;
  p.kv_indices[2] = 64;  // page outside [0, num_pages)
  EXPECT_THROW(p.validate(), InputError);
  p = ok;
  p.kv_indptr.back() += 1;  // kv_indptr disagrees with kv_indices
  EXPECT_THROW(p.validate(), InputError);
  p = make_problem(Kind::paged_prefill_causal, 8, 2, {5}, {4}, 64);  // bottom-right row 0 sees no key
  EXPECT_THROW(p.validate(), InputError);
  p = make_problem(Kind::ragged_prefill_causal, 6, 4, {2}, {2}, 0);  // 6 heads over 4 kv heads
  EXPECT_THROW(p.validate(), InputError);
  p = make_problem(Kind::paged_decode, 8, 2, {1, 2}, {3, 3}, 64);  // decode: one query per sequence
  p.total_q = 2;
  EXPECT_THROW(p.validate(), InputError);
  EXPECT_NO_THROW(released(Kind::paged_decode).validate());
  EXPECT_EQ(released(Kind::ragged_prefill_causal).total_q, 16294);
}

// ---- on the GPU ---------------------------------------------------------------------------------

namespace {

struct Tensor {
  DeviceBuffer buf;
  ptxb_tensor view{};
  Tensor(int32_t dtype, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const std::size_t elem = dtype == PTXB_BF16 ? 2 : 4;
    buf = DeviceBuffer(static_cast<std::size_t>(std::max<int64_t>(n, 1)) * elem);
    view.data = buf.get();
    view.dtype = dtype;
    view.ndim = static_cast<int32_t>(shape.size());
    int64_t stride = 1;
    for (int i = view.ndim - 1; i >= 0; --i) {
      view.shape[i] = shape[static_cast<std::size_t>(i)];
      view.stride[i] = stride;
      stride *= shape[static_cast<std::size_t>(i)];
    }
  }
  [[nodiscard]] int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < view.ndim; ++i) n *= view.shape[i];
    return n;
  }
  [[nodiscard]] std::vector<float> bf16() const {
    std::vector<__nv_bfloat16> h(static_cast<std::size_t>(numel()));
    PTXB_CUDA_CALL(cudaMemcpy(h.data(), buf.get(), h.size() * 2, cudaMemcpyDeviceToHost));
    std::vector<float> f(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) f[i] = __bfloat162float(h[i]);
    return f;
  }
  [[nodiscard]] std::vector<float> f32() const {
    std::vector<float> h(static_cast<std::size_t>(numel()));
    PTXB_CUDA_CALL(cudaMemcpy(h.data(), buf.get(), h.size() * 4, cudaMemcpyDeviceToHost));
    return h;
  }
  void upload(const void* host) { PTXB_CUDA_CALL(cudaMemcpy(buf.get(), host, buf.bytes(), cudaMemcpyHostToDevice)); }
};

/// A problem's arguments on the device, in ABI order, with random q/k/v (every page too).
struct Args {
  std::vector<Tensor> t;
  explicit Args(const GqaProblem& p) {
    const int64_t Hq = p.num_qo_heads, Hkv = p.num_kv_heads, D = p.head_dim, n = p.batch() + 1;
    auto add = [&](int32_t dtype, std::vector<int64_t> shape) -> Tensor& { return t.emplace_back(dtype, shape); };
    add(PTXB_BF16, {p.total_q, Hq, D});
    const std::vector<int64_t> kv_shape = p.paged() ? std::vector<int64_t>{p.num_pages, 1, Hkv, D}
                                                    : std::vector<int64_t>{p.total_kv, Hkv, D};
    add(PTXB_BF16, kv_shape);
    add(PTXB_BF16, kv_shape);
    if (p.kind != Kind::paged_decode) add(PTXB_I32, {n}).upload(p.qo_indptr.data());
    add(PTXB_I32, {n}).upload(p.kv_indptr.data());
    if (p.paged()) add(PTXB_I32, {static_cast<int64_t>(p.kv_indices.size())}).upload(p.kv_indices.data());
    add(PTXB_F32, {}).upload(&p.sm_scale);
    add(PTXB_BF16, {p.total_q, Hq, D});
    add(PTXB_F32, {p.total_q, Hq});
    for (int i = 0; i < 3; ++i) fill_normal(t[i].buf.get(), DType::bf16, t[i].numel(), 211 + i, nullptr);
    PTXB_CUDA_CALL(cudaDeviceSynchronize());
  }
  [[nodiscard]] std::vector<ptxb_tensor> views() const {
    std::vector<ptxb_tensor> v;
    for (const Tensor& x : t) v.push_back(x.view);
    return v;
  }
  [[nodiscard]] const Tensor& output() const { return t[t.size() - 2]; }
  [[nodiscard]] const Tensor& lse() const { return t.back(); }
};

int run(Baseline& b, const Args& a) {
  auto v = a.views();
  return b.run(v.data(), static_cast<int32_t>(v.size()), nullptr);
}

/// Max |got − want| over entries, failing entries beyond atol + rtol·|want| (NaN fails).
struct Check {
  const char* what;
  double atol, rtol;
  int64_t count = 0, bad = 0;
  double max_err = 0;
  void add(double got, double want) {
    ++count;
    const double err = std::fabs(got - want);
    if (!(err <= atol + rtol * std::fabs(want))) ++bad;
    max_err = std::max(max_err, std::isnan(err) ? INFINITY : err);
  }
  void expect_ok(const std::string& ctx) const {
    std::printf("  %-6s %s: %lld values, %lld outside tolerance, max |err| %.3g\n", what, ctx.c_str(),
                static_cast<long long>(count), static_cast<long long>(bad), max_err);
    EXPECT_GT(count, 0) << what << " " << ctx;
    EXPECT_EQ(bad, 0) << what << " " << ctx;
  }
};

/// output and lse (base 2) against fp64 from the same bf16 inputs, every row.
void expect_matches_fp64(const GqaProblem& p, const Args& a) {
  const int64_t Hq = p.num_qo_heads, Hkv = p.num_kv_heads, D = p.head_dim, group = Hq / Hkv;
  const std::vector<float> q = a.t[0].bf16(), k = a.t[1].bf16(), v = a.t[2].bf16();
  const std::vector<float> out = a.output().bf16(), lse = a.lse().f32();
  Check co{"output", 2e-2, 2e-2}, cl{"lse", 1e-3, 1e-4};
  for (int64_t b = 0; b < p.batch(); ++b) {
    const int64_t q0 = p.kind == Kind::paged_decode ? b : p.qo_indptr[b];
    const int64_t q_len = p.kind == Kind::paged_decode ? 1 : p.qo_indptr[b + 1] - q0;
    const int64_t kv0 = p.kv_indptr[b], kv_len = p.kv_indptr[b + 1] - kv0;
    // Row of key j of sequence b in k / v ([row, head, d]; a page is one row).
    auto kv_row = [&](int64_t j) { return p.paged() ? int64_t(p.kv_indices[kv0 + j]) : kv0 + j; };
    for (int64_t i = 0; i < q_len; ++i)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t hk = h / group, visible = p.causal() ? i + kv_len - q_len + 1 : kv_len;
        const float* qi = &q[((q0 + i) * Hq + h) * D];
        std::vector<double> s(static_cast<std::size_t>(visible));
        double mx = -INFINITY;
        for (int64_t j = 0; j < visible; ++j) {
          const float* kj = &k[(kv_row(j) * Hkv + hk) * D];
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += double(qi[d]) * kj[d];
          mx = std::max(mx, s[j] = dot * p.sm_scale);
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - mx));
        std::vector<double> o(static_cast<std::size_t>(D), 0.0);
        for (int64_t j = 0; j < visible; ++j) {
          const float* vj = &v[(kv_row(j) * Hkv + hk) * D];
          for (int64_t d = 0; d < D; ++d) o[d] += s[j] / sum * vj[d];
        }
        const float* got = &out[((q0 + i) * Hq + h) * D];
        for (int64_t d = 0; d < D; ++d) co.add(got[d], o[d]);
        cl.add(lse[(q0 + i) * Hq + h], (mx + std::log(sum)) / std::log(2.0));
      }
  }
  co.expect_ok(p.describe());
  cl.expect_ok(p.describe());
}

/// Small layouts of each class with the definitions' head counts: uneven lengths, a sequence of
/// one key, lengths that are not multiples of any tile, and (prefill) queries fewer than keys.
std::vector<GqaProblem> small_problems() {
  return {
      make_problem(Kind::paged_decode, 24, 8, {1, 1, 1, 1}, {5, 130, 1, 67}, 700),
      make_problem(Kind::paged_prefill_causal, 24, 8, {7, 40, 1}, {20, 40, 9}, 500),
      make_problem(Kind::paged_prefill_causal, 24, 8, {89}, {89}, 300),
      make_problem(Kind::ragged_prefill_causal, 32, 4, {33, 1, 70, 10}, {33, 1, 70, 50}, 0),
  };
}

}  // namespace

class GqaCudnnTest : public GpuTest {};

TEST_F(GqaCudnnTest, EveryClassMatchesFp64OnSmallLayouts) {
  for (const GqaProblem& p : small_problems()) {
    SCOPED_TRACE(p.describe());
    GqaCudnnBaseline baseline(p);
    std::printf("%s\n", baseline.describe().c_str());
    Args a(p);
    PTXB_CUDA_CALL(cudaMemset(a.output().buf.get(), 0xff, a.output().buf.bytes()));  // NaN poison
    PTXB_CUDA_CALL(cudaMemset(a.lse().buf.get(), 0xff, a.lse().buf.bytes()));
    ASSERT_EQ(run(baseline, a), 0);
    PTXB_CUDA_CALL(cudaDeviceSynchronize());
    expect_matches_fp64(p, a);

    // A second call (cached variant pack, lse converted again from fresh Stats) gives the same lse.
    const std::vector<float> first = a.lse().f32();
    ASSERT_EQ(run(baseline, a), 0);
    PTXB_CUDA_CALL(cudaDeviceSynchronize());
    EXPECT_EQ(a.lse().f32(), first) << "lse changed between two identical calls";
  }
}

TEST_F(GqaCudnnTest, PaddedPageTableFormMatchesFp64) {
  GqaProblem p = small_problems()[1];
  setenv("PTXBENCH_CUDNN_GQA_PAGE_TABLE", "padded", 1);
  try {
    GqaCudnnBaseline baseline(p);
    unsetenv("PTXBENCH_CUDNN_GQA_PAGE_TABLE");
    std::printf("%s\n", baseline.describe().c_str());
    EXPECT_NE(baseline.plan_info().form.find("padded"), std::string::npos);
    Args a(p);
    ASSERT_EQ(run(baseline, a), 0);
    PTXB_CUDA_CALL(cudaDeviceSynchronize());
    expect_matches_fp64(p, a);
  } catch (...) {
    unsetenv("PTXBENCH_CUDNN_GQA_PAGE_TABLE");
    throw;
  }
}

TEST_F(GqaCudnnTest, RejectsWrongArguments) {
  GqaProblem p = small_problems()[3];
  std::unique_ptr<Baseline> baseline = make_gqa_cudnn_baseline(p);
  Args a(p);
  std::vector<ptxb_tensor> v = a.views();
  EXPECT_EQ(baseline->run(v.data(), static_cast<int32_t>(v.size()) - 1, nullptr), int(cudaErrorInvalidValue));
  std::vector<ptxb_tensor> bad = v;
  bad[0].dtype = PTXB_F16;
  EXPECT_EQ(baseline->run(bad.data(), static_cast<int32_t>(bad.size()), nullptr), int(cudaErrorInvalidValue));
  bad = v;
  bad.back().shape[0] += 1;  // lse rows
  EXPECT_EQ(baseline->run(bad.data(), static_cast<int32_t>(bad.size()), nullptr), int(cudaErrorInvalidValue));
  EXPECT_EQ(baseline->run(v.data(), static_cast<int32_t>(v.size()), nullptr), 0);
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
}

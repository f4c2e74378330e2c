// The cuDNN SDPA baselines (graph API) on the GPU: forward (O, LSE) and backward (dQ, dK, dV)
// against fp64 on the CPU for small shapes, spot rows at the evaluation shape, argument checks,
// and the speed at B4 H48 S4096 D128 as JSON lines (the same format as
// scripts/bench/torch_sdpa.py, so both can be compared from one device call). One test needs no
// GPU: it plans the graphs for an H200 described by its properties (MhaCudnnDeviceless).
//
// Run alone: build/bin/ptxbench_gpu_tests --gtest_filter='MhaCudnn*'
// PTXBENCH_MHA_BENCH_ITERS=<n> times n calls per case (default 10); PTXBENCH_MHA_NO_SPEED_CHECK=1
// turns the "is this the flash engine" throughput floor into a warning.
#include <cuda_bf16.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "baseline/mha_cudnn.h"
#include "baseline/mha_cudnn_graph.h"
#include "gpu/activity_recorder.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"
#include "gpu/random_fill.h"
#include "gpu_test_support.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

// ---- device tensors in the ABI's view ---------------------------------------------------------

struct Tensor {
  DeviceBuffer buf;
  ptxb_tensor view{};
  Tensor(int32_t dtype, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    buf = DeviceBuffer(static_cast<std::size_t>(n) * (dtype == PTXB_F32 ? 4 : 2));
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
};

std::vector<float> read_bf16(const Tensor& t, int64_t offset, int64_t n) {
  std::vector<__nv_bfloat16> h(static_cast<std::size_t>(n));
  PTXB_CUDA_CALL(cudaMemcpy(h.data(), t.buf.as<__nv_bfloat16>() + offset, n * 2, cudaMemcpyDeviceToHost));
  std::vector<float> f(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

std::vector<float> read_f32(const Tensor& t, int64_t offset, int64_t n) {
  std::vector<float> h(static_cast<std::size_t>(n));
  PTXB_CUDA_CALL(cudaMemcpy(h.data(), t.buf.as<float>() + offset, n * 4, cudaMemcpyDeviceToHost));
  return h;
}

void write_bf16(Tensor& t, const std::vector<double>& values) {
  std::vector<__nv_bfloat16> h(values.size());
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = __float2bfloat16(static_cast<float>(values[i]));
  PTXB_CUDA_CALL(cudaMemcpy(t.buf.get(), h.data(), h.size() * 2, cudaMemcpyHostToDevice));
}

void write_f32(Tensor& t, const std::vector<double>& values) {
  std::vector<float> h(values.begin(), values.end());
  PTXB_CUDA_CALL(cudaMemcpy(t.buf.get(), h.data(), h.size() * 4, cudaMemcpyHostToDevice));
}

// ---- fp64 reference on one (batch, head) slice ------------------------------------------------

/// One head on the host. O and LSE are what the backward is given (bf16 O, fp32 LSE), exactly as
/// the device sees them.
struct Head {
  int64_t S = 0, D = 0;
  bool causal = false;
  std::vector<float> q, k, v, o, d_o, lse;
  std::vector<double> dsum;  // rowsum(dO∘O), filled by prepare_backward()

  [[nodiscard]] double scale() const { return 1.0 / std::sqrt(static_cast<double>(D)); }
  [[nodiscard]] double dot(const std::vector<float>& a, int64_t i, const std::vector<float>& b, int64_t j) const {
    double s = 0;
    for (int64_t d = 0; d < D; ++d) s += double(a[i * D + d]) * double(b[j * D + d]);
    return s;
  }
  [[nodiscard]] int64_t last_key(int64_t i) const { return causal ? i : S - 1; }

  /// O row i and LSE_i from Q, K, V.
  void forward_row(int64_t i, std::vector<double>& o_row, double& lse_i) const {
    std::vector<double> s(static_cast<std::size_t>(last_key(i) + 1));
    double mx = -INFINITY;
    for (int64_t j = 0; j <= last_key(i); ++j) mx = std::max(mx, s[j] = scale() * dot(q, i, k, j));
    double sum = 0;
    for (double& x : s) sum += (x = std::exp(x - mx));
    o_row.assign(static_cast<std::size_t>(D), 0.0);
    for (int64_t j = 0; j <= last_key(i); ++j)
      for (int64_t d = 0; d < D; ++d) o_row[d] += s[j] / sum * v[j * D + d];
    lse_i = mx + std::log(sum);
  }

  void prepare_backward() {
    dsum.assign(static_cast<std::size_t>(S), 0.0);
    for (int64_t i = 0; i < S; ++i) dsum[i] = dot(d_o, i, o, i);
  }
  [[nodiscard]] double p(int64_t i, int64_t j) const { return std::exp(scale() * dot(q, i, k, j) - lse[i]); }
  [[nodiscard]] double ds(int64_t i, int64_t j, double p_ij) const { return p_ij * (dot(d_o, i, v, j) - dsum[i]); }

  void dq_row(int64_t i, std::vector<double>& out) const {
    out.assign(static_cast<std::size_t>(D), 0.0);
    for (int64_t j = 0; j <= last_key(i); ++j) {
      double g = scale() * ds(i, j, p(i, j));
      for (int64_t d = 0; d < D; ++d) out[d] += g * k[j * D + d];
    }
  }
  void dk_dv_row(int64_t j, std::vector<double>& dk, std::vector<double>& dv) const {
    dk.assign(static_cast<std::size_t>(D), 0.0);
    dv.assign(static_cast<std::size_t>(D), 0.0);
    for (int64_t i = causal ? j : 0; i < S; ++i) {
      double p_ij = p(i, j), g = scale() * ds(i, j, p_ij);
      for (int64_t d = 0; d < D; ++d) {
        dv[d] += p_ij * d_o[i * D + d];
        dk[d] += g * q[i * D + d];
      }
    }
  }
};

/// The verdict's rule (an element fails only if both |x−y| > 1e-2 and |x−y|/|y| > 1e-2) plus a
/// tighter one that catches wrong scales on small values: max |x−y| ≤ 3% of max |y|.
struct Comparison {
  const char* what;
  int64_t count = 0, mismatches = 0;
  double max_abs_err = 0, max_abs_ref = 0;
  void add(double got, double want) {
    ++count;
    double err = std::fabs(got - want);
    if (!(err <= 1e-2 || err / (std::fabs(want) + 1e-8) <= 1e-2)) ++mismatches;  // NaN fails
    max_abs_err = std::max(max_abs_err, std::isnan(err) ? INFINITY : err);
    max_abs_ref = std::max(max_abs_ref, std::fabs(want));
  }
  void add_row(const float* got, const std::vector<double>& want) {
    for (std::size_t d = 0; d < want.size(); ++d) add(got[d], want[d]);
  }
  void expect_ok(const std::string& context) const {
    std::printf("  %-4s %s: %lld values, %lld mismatches, max |err| %.3g, max |ref| %.3g\n", what, context.c_str(),
                static_cast<long long>(count), static_cast<long long>(mismatches), max_abs_err, max_abs_ref);
    EXPECT_GT(count, 0) << what << " " << context;
    EXPECT_EQ(mismatches, 0) << what << " " << context;
    EXPECT_LE(max_abs_err, 3e-2 * max_abs_ref + 1e-6) << what << " " << context;
  }
};

// ---- the problem on the device ------------------------------------------------------------------

struct Problem {
  MhaShape s;
  Tensor q, k, v, o, lse, d_o, dq, dk, dv;
  explicit Problem(const MhaShape& shape)
      : s(shape),
        q(PTXB_BF16, bhsd()), k(PTXB_BF16, bhsd()), v(PTXB_BF16, bhsd()), o(PTXB_BF16, bhsd()),
        lse(PTXB_F32, {s.B, s.H, s.S}), d_o(PTXB_BF16, bhsd()), dq(PTXB_BF16, bhsd()), dk(PTXB_BF16, bhsd()),
        dv(PTXB_BF16, bhsd()) {
    fill_normal(q.buf.get(), DType::bf16, q.numel(), 101, nullptr);
    fill_normal(k.buf.get(), DType::bf16, k.numel(), 102, nullptr);
    fill_normal(v.buf.get(), DType::bf16, v.numel(), 103, nullptr);
    fill_normal(d_o.buf.get(), DType::bf16, d_o.numel(), 104, nullptr);
    PTXB_CUDA_CALL(cudaDeviceSynchronize());
  }
  [[nodiscard]] std::vector<int64_t> bhsd() const { return {s.B, s.H, s.S, s.D}; }
  [[nodiscard]] std::vector<ptxb_tensor> fwd_args() const { return {q.view, k.view, v.view, o.view, lse.view}; }
  [[nodiscard]] std::vector<ptxb_tensor> bwd_args() const {
    return {q.view, k.view, v.view, o.view, d_o.view, lse.view, dq.view, dk.view, dv.view};
  }
  /// Head (b, h) as the host sees the device tensors right now.
  [[nodiscard]] Head head(int64_t b, int64_t h) const {
    Head x;
    x.S = s.S;
    x.D = s.D;
    x.causal = s.causal;
    const int64_t off = (b * s.H + h) * s.S * s.D, n = s.S * s.D;
    x.q = read_bf16(q, off, n);
    x.k = read_bf16(k, off, n);
    x.v = read_bf16(v, off, n);
    x.o = read_bf16(o, off, n);
    x.d_o = read_bf16(d_o, off, n);
    x.lse = read_f32(lse, (b * s.H + h) * s.S, s.S);
    return x;
  }
};

int run_fwd(MhaFwdCudnn& fwd, const Problem& p, cudaStream_t stream) {
  auto a = p.fwd_args();
  return fwd.run(a.data(), static_cast<int32_t>(a.size()), stream);
}
int run_bwd(MhaBwdCudnn& bwd, const Problem& p, cudaStream_t stream) {
  auto a = p.bwd_args();
  return bwd.run(a.data(), static_cast<int32_t>(a.size()), stream);
}

std::string shape_text(const MhaShape& s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "B%lld H%lld S%lld D%lld%s", static_cast<long long>(s.B),
                static_cast<long long>(s.H), static_cast<long long>(s.S), static_cast<long long>(s.D),
                s.causal ? " causal" : "");
  return buf;
}

/// Kernels one call launches, by name and duration (which engine really ran).
void print_kernels(const char* what, const std::function<int(cudaStream_t)>& call) {
  ActivityRecorder recorder;
  ASSERT_EQ(call(nullptr), 0);
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  for (const DeviceRecord& r : recorder.drain()) {
    if (r.kind != DeviceRecord::Kind::kernel) continue;
    std::string name = r.name.size() > 140 ? r.name.substr(0, 140) + "..." : r.name;
    std::printf("  %s kernel %.1f us: %s\n", what, (r.end_ns - r.start_ns) / 1e3, name.c_str());
  }
}

int bench_iters() {
  const char* v = std::getenv("PTXBENCH_MHA_BENCH_ITERS");
  int n = v ? std::atoi(v) : 0;
  return n > 0 ? n : 10;
}

/// Median milliseconds of `iters` calls (each bracketed by its own events) after 3 warm-ups.
double median_ms(const std::function<int(cudaStream_t)>& call, cudaStream_t stream, int iters) {
  for (int i = 0; i < 3; ++i) EXPECT_EQ(call(stream), 0);
  std::vector<cudaEvent_t> ev(static_cast<std::size_t>(2 * iters));
  for (auto& e : ev) PTXB_CUDA_CALL(cudaEventCreate(&e));
  for (int i = 0; i < iters; ++i) {
    PTXB_CUDA_CALL(cudaEventRecord(ev[2 * i], stream));
    EXPECT_EQ(call(stream), 0);
    PTXB_CUDA_CALL(cudaEventRecord(ev[2 * i + 1], stream));
  }
  PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    float t = 0;
    PTXB_CUDA_CALL(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
    ms.push_back(t);
  }
  for (auto& e : ev) PTXB_CUDA_CALL_NOEXCEPT(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// FLOPs of the forward: 4·B·H·S²·D, halved when causal; the backward counts 2.5×.
double forward_flops(const MhaShape& s) {
  double f = 4.0 * s.B * s.H * double(s.S) * s.S * s.D;
  return s.causal ? f / 2 : f;
}

void print_json(const char* pass, const MhaShape& s, double ms, double flops, const MhaPlanInfo& info, int iters) {
  std::printf(
      "{\"impl\": \"ptxbench-cudnn-graph\", \"pass\": \"%s\", \"causal\": %s, \"B\": %lld, \"H\": %lld, \"S\": %lld, "
      "\"D\": %lld, \"dtype\": \"bf16\", \"ms\": %.4f, \"tflops\": %.1f, \"iters\": %d, \"cudnn\": \"%s\", "
      "\"graph\": \"%s\", \"engine\": \"%s\"}\n",
      pass, s.causal ? "true" : "false", static_cast<long long>(s.B), static_cast<long long>(s.H),
      static_cast<long long>(s.S), static_cast<long long>(s.D), ms, flops / (ms * 1e-3) / 1e12, iters,
      info.cudnn_version.c_str(), info.graph_style.c_str(), info.engine_config.c_str());
  std::fflush(stdout);
}

// An H200 as cuDNN describes a device in JSON (cudnn's own serialization writes these keys).
constexpr const char* kH200Properties =
    R"({"deviceName":"NVIDIA H200","maxGridSize":[2147483647,65535,65535],"maxBlockSize":[1024,1024,64],)"
    R"("regsPerBlock":65536,"multiProcessorCount":132,"warpSize":32,"maxSharedMemoryPerBlock":49152,)"
    R"("maxSharedMemoryPerBlockOptin":232448,"reservedSharedMemoryPerBlock":1024,"maxRegistersPerSM":65536,)"
    R"("maxCtasPerSM":32,"maxThreadsPerBlock":1024,"maxThreadsPerSM":2048,"pciDeviceId":0,"isTccDriver":0,)"
    R"("supportCoopLaunch":1,"smClockRateKHz":1980000,"memClockRateKHz":3201000,"l2CacheSize":52428800,)"
    R"("smVersion":900,"deviceVer":900,"cudnnVersion":91900,"schemaVersion":1,"driverVer":13000,)"
    R"("driverVersion":13000,"runtimeVer":13000,"runtimeVersion":13000,"totalGlobalMem":150754820096,"cudaDeviceId":0})";

// cuDNN's runtime-compiled engines dlopen libcuda.so.1 to load what NVRTC built. Where there is no
// driver, the toolkit's stub stands in (loaded first, under its soname libcuda.so.1), so planning
// goes as far as loading the module. Each test runs in its own process (gtest_discover_tests).
bool load_libcuda_or_stub() {
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) return true;
  for (const char* path : {"/usr/local/cuda/lib64/stubs/libcuda.so", "/usr/local/cuda/lib/stubs/libcuda.so",
                           "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"})
    if (dlopen(path, RTLD_NOW | RTLD_GLOBAL)) return true;
  return false;
}

}  // namespace

// Needs no GPU: the graphs are planned for an H200 from its properties, and the engine heuristics
// pick must take them (fused flash attention: it compiles them with NVRTC). On a machine without a
// driver the last step, loading the kernel, fails with CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER.
// Every head dimension of the catalog: 128 (evaluation), 64 and 96 (generalisation definitions).
TEST(MhaCudnnDeviceless, FlashEnginesTakeTheGraphsForAnH200) {
  if (cudnn::runtime_version_number() < 91100) GTEST_SKIP() << "deviceless planning needs cuDNN 9.11+";
  if (!load_libcuda_or_stub()) GTEST_SKIP() << "neither libcuda.so.1 nor the CUDA toolkit's stub is loadable";
  cudnn::Descriptor props = cudnn::device_properties_from_json(kH200Properties);
  for (int64_t D : {128, 64, 96})
    for (bool backward : {false, true})
      for (bool causal : {false, true}) {
        MhaShape s{4, 48, 4096, D, causal};
        std::string what = std::string(backward ? "bwd " : "fwd ") + shape_text(s);
        cudnn::GraphBuilder g = build_sdpa_graph(backward, s, "fe113", nullptr);
        cudnn::PlanProbe probe = cudnn::probe_first_config(g, props);
        std::printf("%s: %s; %s\n", what.c_str(), probe.choice.describe().c_str(), probe.detail.c_str());
        EXPECT_TRUE(probe.status == CUDNN_STATUS_SUCCESS || probe.status == CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER)
            << what << ": " << probe.detail << "\n" << g.describe();
        EXPECT_NE(std::find(probe.choice.notes.begin(), probe.choice.notes.end(), "runtime_compilation"),
                  probe.choice.notes.end())
            << what << ": expected cuDNN's runtime-compiled fused attention engine, got " << probe.choice.describe();
      }
}

class MhaCudnnTest : public GpuTest {};

TEST_F(MhaCudnnTest, ForwardAndBackwardMatchFp64OnSmallShapes) {
  // Each plan compiles its kernels with NVRTC on first use (seconds), so the cases are few.
  for (MhaShape s : {MhaShape{1, 2, 128, 128, false}, MhaShape{2, 2, 256, 128, true}, MhaShape{1, 3, 256, 128, false}}) {
    SCOPED_TRACE(shape_text(s));
    Problem p(s);
    MhaFwdCudnn fwd(s);
    MhaBwdCudnn bwd(s);
    std::printf("%s\n  %s\n  %s\n", shape_text(s).c_str(), fwd.describe().c_str(), bwd.describe().c_str());

    // Forward against fp64 from the same bf16 inputs.
    PTXB_CUDA_CALL(cudaMemset(p.o.buf.get(), 0xff, p.o.buf.bytes()));  // NaN poison
    PTXB_CUDA_CALL(cudaMemset(p.lse.buf.get(), 0xff, p.lse.buf.bytes()));
    ASSERT_EQ(run_fwd(fwd, p, nullptr), 0);
    PTXB_CUDA_CALL(cudaDeviceSynchronize());
    Comparison co{"O"}, cl{"LSE"};
    std::vector<double> o_ref(static_cast<std::size_t>(s.B * s.H * s.S * s.D));
    std::vector<double> lse_ref(static_cast<std::size_t>(s.B * s.H * s.S));
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t h = 0; h < s.H; ++h) {
        Head x = p.head(b, h);
        const int64_t bh = b * s.H + h;
        std::vector<double> row;
        for (int64_t i = 0; i < s.S; ++i) {
          double lse_i = 0;
          x.forward_row(i, row, lse_i);
          co.add_row(&x.o[i * s.D], row);
          cl.add(x.lse[i], lse_i);
          std::copy(row.begin(), row.end(), o_ref.begin() + (bh * s.S + i) * s.D);
          lse_ref[bh * s.S + i] = lse_i;
        }
      }
    co.expect_ok(shape_text(s));
    cl.expect_ok(shape_text(s));

    // Backward given the exact forward (rounded as a model's kernel would be given it).
    write_bf16(p.o, o_ref);
    write_f32(p.lse, lse_ref);
    for (Tensor* t : {&p.dq, &p.dk, &p.dv}) PTXB_CUDA_CALL(cudaMemset(t->buf.get(), 0xff, t->buf.bytes()));
    ASSERT_EQ(run_bwd(bwd, p, nullptr), 0);
    PTXB_CUDA_CALL(cudaDeviceSynchronize());
    Comparison cq{"dQ"}, ck{"dK"}, cv{"dV"};
    const int64_t n = s.S * s.D;
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t h = 0; h < s.H; ++h) {
        Head x = p.head(b, h);
        x.prepare_backward();
        const int64_t off = (b * s.H + h) * n;
        std::vector<float> dq = read_bf16(p.dq, off, n), dk = read_bf16(p.dk, off, n), dv = read_bf16(p.dv, off, n);
        std::vector<double> r1, r2;
        for (int64_t i = 0; i < s.S; ++i) {
          x.dq_row(i, r1);
          cq.add_row(&dq[i * s.D], r1);
          x.dk_dv_row(i, r1, r2);
          ck.add_row(&dk[i * s.D], r1);
          cv.add_row(&dv[i * s.D], r2);
        }
      }
    cq.expect_ok(shape_text(s));
    ck.expect_ok(shape_text(s));
    cv.expect_ok(shape_text(s));

    // A second call on the same buffers (the cached variant pack) gives the same dQ: no state
    // (such as an accumulator that is not cleared) leaks from one call into the next.
    std::vector<float> first = read_bf16(p.dq, 0, p.dq.numel());
    ASSERT_EQ(run_bwd(bwd, p, nullptr), 0);
    PTXB_CUDA_CALL(cudaDeviceSynchronize());
    std::vector<float> second = read_bf16(p.dq, 0, p.dq.numel());
    int64_t differ = 0;
    for (std::size_t i = 0; i < first.size(); ++i)
      differ += std::fabs(first[i] - second[i]) > 1e-2f * (std::fabs(first[i]) + 1e-2f);
    EXPECT_EQ(differ, 0) << "dQ changed between two identical backward calls";
  }
}

TEST_F(MhaCudnnTest, RejectsArgumentsThatDoNotMatchThePlan) {
  MhaShape s{1, 2, 128, 128, false};
  Problem p(s);
  MhaFwdCudnn fwd(s);
  auto args = p.fwd_args();
  EXPECT_EQ(fwd.run(args.data(), 4, nullptr), cudaErrorInvalidValue);
  auto bad = args;
  bad[0].dtype = PTXB_F16;
  EXPECT_EQ(fwd.run(bad.data(), 5, nullptr), cudaErrorInvalidValue);
  bad = args;
  bad[1].shape[2] = 64;
  EXPECT_EQ(fwd.run(bad.data(), 5, nullptr), cudaErrorInvalidValue);
  bad = args;
  std::swap(bad[2].stride[2], bad[2].stride[3]);  // a transposed view
  EXPECT_EQ(fwd.run(bad.data(), 5, nullptr), cudaErrorInvalidValue);
  bad = args;
  bad[4].dtype = PTXB_BF16;
  EXPECT_EQ(fwd.run(bad.data(), 5, nullptr), cudaErrorInvalidValue);
  // LSE as [B, H, S, 1] is the same memory and is accepted.
  auto lse4 = args;
  lse4[4].ndim = 4;
  lse4[4].shape[3] = 1;
  lse4[4].stride[3] = 1;
  EXPECT_EQ(fwd.run(lse4.data(), 5, nullptr), 0);
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  EXPECT_TRUE(fwd.matches(s));
  EXPECT_FALSE(fwd.matches(MhaShape{1, 2, 128, 128, true}));

  MhaBwdCudnn bwd(s);
  auto bargs = p.bwd_args();
  EXPECT_EQ(bwd.run(bargs.data(), 8, nullptr), cudaErrorInvalidValue);
  bargs[8].shape[0] = 2;
  EXPECT_EQ(bwd.run(bargs.data(), 9, nullptr), cudaErrorInvalidValue);
}

// The evaluation shape: which engine runs, spot rows against fp64, and the speed.
TEST_F(MhaCudnnTest, EvaluationShapeRunsTheFlashEngine) {
  const int iters = bench_iters();
  const bool speed_check = !std::getenv("PTXBENCH_MHA_NO_SPEED_CHECK");
  cudaStream_t stream = nullptr;
  PTXB_CUDA_CALL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (bool causal : {false, true}) {
    MhaShape s{4, 48, 4096, 128, causal};
    SCOPED_TRACE(shape_text(s));
    Problem p(s);
    MhaFwdCudnn fwd(s);
    MhaBwdCudnn bwd(s);
    std::printf("%s\n  %s\n  %s\n", shape_text(s).c_str(), fwd.describe().c_str(), bwd.describe().c_str());
    auto call_fwd = [&](cudaStream_t st) { return run_fwd(fwd, p, st); };
    auto call_bwd = [&](cudaStream_t st) { return run_bwd(bwd, p, st); };
    print_kernels("fwd", call_fwd);  // also produces the O and LSE the backward is given
    print_kernels("bwd", call_bwd);

    // Spot rows: first, last and a middle query/key of two heads.
    Comparison co{"O"}, cl{"LSE"}, cq{"dQ"}, ck{"dK"}, cv{"dV"};
    const int64_t n = s.S * s.D;
    for (auto [b, h] : {std::pair<int64_t, int64_t>{0, 0}, {3, 47}}) {
      Head x = p.head(b, h);
      x.prepare_backward();
      const int64_t off = (b * s.H + h) * n;
      std::vector<float> dq = read_bf16(p.dq, off, n), dk = read_bf16(p.dk, off, n), dv = read_bf16(p.dv, off, n);
      for (int64_t i : {int64_t{0}, int64_t{1}, s.S / 2 + 3, s.S - 1}) {
        std::vector<double> r1, r2;
        double lse_i = 0;
        x.forward_row(i, r1, lse_i);
        co.add_row(&x.o[i * s.D], r1);
        cl.add(x.lse[i], lse_i);
        x.dq_row(i, r1);
        cq.add_row(&dq[i * s.D], r1);
        x.dk_dv_row(i, r1, r2);
        ck.add_row(&dk[i * s.D], r1);
        cv.add_row(&dv[i * s.D], r2);
      }
    }
    for (const Comparison* c : {&co, &cl, &cq, &ck, &cv}) c->expect_ok(shape_text(s) + " spot rows");

    const double f = forward_flops(s);
    const double fwd_ms = median_ms(call_fwd, stream, iters);
    const double bwd_ms = median_ms(call_bwd, stream, iters);
    print_json("fwd", s, fwd_ms, f, fwd.plan_info(), iters);
    print_json("bwd", s, bwd_ms, 2.5 * f, bwd.plan_info(), iters);
    // Unfused or fallback engines are several times slower than these floors on an H100/H200
    // (cuDNN's flash kernels reach ~500-650 TFLOP/s forward, ~350-500 backward there).
    const double fwd_tflops = f / (fwd_ms * 1e-3) / 1e12, bwd_tflops = 2.5 * f / (bwd_ms * 1e-3) / 1e12;
    if (speed_check) {
      EXPECT_GT(fwd_tflops, 200.0) << "forward too slow for cuDNN's flash engine: " << fwd.describe();
      EXPECT_GT(bwd_tflops, 120.0) << "backward too slow for cuDNN's flash engine: " << bwd.describe();
    } else if (fwd_tflops < 200.0 || bwd_tflops < 120.0) {
      std::printf("  WARNING: below the flash-engine floor (fwd %.0f, bwd %.0f TFLOP/s)\n", fwd_tflops, bwd_tflops);
    }
  }
  PTXB_CUDA_CALL(cudaStreamDestroy(stream));
}

// The trusted attention references on the GPU: forward O/LSE and backward dQ/dK/dV against fp64 on
// the CPU (small shapes everywhere, S = 16384 on sampled rows and keys, which crosses the reference's
// head and row chunking), the backward against finite differences of the fp64 forward (so the
// derivation from O and LSE is the true gradient), the backward operator's derived inputs, and the
// FLOP convention of the four attention op types.
#include <cuda_bf16.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "common/error.h"
#include "definitions/catalog.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"
#include "gpu/random_fill.h"
#include "gpu_test_support.h"
#include "ops/operator.h"
#include "reference/mha_reference.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

using Vec = std::vector<double>;

std::vector<float> bf16_to_host(const DeviceBuffer& d, std::size_t n) {
  std::vector<__nv_bfloat16> h(n);
  PTXB_CUDA_CALL(cudaMemcpy(h.data(), d.get(), n * 2, cudaMemcpyDeviceToHost));
  std::vector<float> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

std::vector<float> f32_to_host(const DeviceBuffer& d, std::size_t n) {
  std::vector<float> f(n);
  PTXB_CUDA_CALL(cudaMemcpy(f.data(), d.get(), n * 4, cudaMemcpyDeviceToHost));
  return f;
}

// One head's tensors on the device (bf16 inputs from the benchmark's own generator) and as host values.
struct Attention {
  int64_t heads, S, D = 128;
  bool causal;
  DeviceBuffer q, k, v, dout;
  std::vector<float> hq, hk, hv, hdo;
  Attention(int64_t heads_, int64_t S_, bool causal_, uint64_t seed) : heads(heads_), S(S_), causal(causal_) {
    const int64_t n = heads * S * D;
    DeviceBuffer* bufs[] = {&q, &k, &v, &dout};
    std::vector<float>* hosts[] = {&hq, &hk, &hv, &hdo};
    for (int i = 0; i < 4; ++i) {
      *bufs[i] = DeviceBuffer(static_cast<std::size_t>(n) * 2);
      fill_normal(bufs[i]->get(), DType::bf16, n, derive_seed(seed, i), nullptr);
      *hosts[i] = bf16_to_host(*bufs[i], static_cast<std::size_t>(n));
    }
  }
  [[nodiscard]] AttentionDims dims() const { return {heads, S, D, causal}; }
  [[nodiscard]] std::size_t numel() const { return static_cast<std::size_t>(heads * S * D); }
  [[nodiscard]] static const __nv_bfloat16* dev(const DeviceBuffer& b) { return b.as<__nv_bfloat16>(); }
  [[nodiscard]] bool attends(int64_t i, int64_t j) const { return !causal || j <= i; }
  [[nodiscard]] double scale() const { return 1.0 / std::sqrt(static_cast<double>(D)); }
  [[nodiscard]] std::size_t at(int64_t h, int64_t row) const { return static_cast<std::size_t>((h * S + row) * D); }

  // fp64 scores of query row i against every key of head h (Q, K given as host values or doubles).
  template <typename T>
  Vec scores(const T* Q, const T* K, int64_t h, int64_t i) const {
    Vec s(static_cast<std::size_t>(S));
    for (int64_t j = 0; j < S; ++j) {
      double acc = 0;
      for (int64_t c = 0; c < D; ++c) acc += double(Q[at(h, i) + c]) * double(K[at(h, j) + c]);
      s[j] = acc * scale();
    }
    return s;
  }
  // fp64 forward of query row i of head h: O row (D values) and LSE.
  template <typename T>
  double forward_row(const T* Q, const T* K, const T* V, int64_t h, int64_t i, double* o) const {
    Vec s = scores(Q, K, h, i);
    double mx = -INFINITY, l = 0;
    for (int64_t j = 0; j < S; ++j)
      if (attends(i, j)) mx = std::max(mx, s[j]);
    for (int64_t j = 0; j < S; ++j)
      if (attends(i, j)) l += std::exp(s[j] - mx);
    for (int64_t c = 0; c < D; ++c) o[c] = 0;
    for (int64_t j = 0; j < S; ++j) {
      if (!attends(i, j)) continue;
      double p = std::exp(s[j] - mx) / l;
      for (int64_t c = 0; c < D; ++c) o[c] += p * double(V[at(h, j) + c]);
    }
    return mx + std::log(l);
  }
};

// Standard backward in fp64 from the given O (bf16 values) and LSE, for one query row (dQ row) or
// one key (dK and dV rows): P = exp(scale·q·k − LSE), D_i = dO_i·O_i, dS = P (dO_i·V_j − D_i).
struct HostBackward {
  const Attention& a;
  const std::vector<float>& O;
  const std::vector<float>& LSE;
  double p(int64_t h, int64_t i, int64_t j) const {
    if (!a.attends(i, j)) return 0.0;
    double s = 0;
    for (int64_t c = 0; c < a.D; ++c) s += double(a.hq[a.at(h, i) + c]) * double(a.hk[a.at(h, j) + c]);
    return std::exp(s * a.scale() - double(LSE[h * a.S + i]));
  }
  double ds(int64_t h, int64_t i, int64_t j, double pij) const {
    double dp = 0, delta = 0;
    for (int64_t c = 0; c < a.D; ++c) {
      dp += double(a.hdo[a.at(h, i) + c]) * double(a.hv[a.at(h, j) + c]);
      delta += double(a.hdo[a.at(h, i) + c]) * double(O[a.at(h, i) + c]);
    }
    return pij * (dp - delta);
  }
  void dq_row(int64_t h, int64_t i, double* out) const {
    for (int64_t c = 0; c < a.D; ++c) out[c] = 0;
    for (int64_t j = 0; j < a.S; ++j) {
      double pij = p(h, i, j);
      if (pij == 0.0) continue;
      double g = ds(h, i, j, pij) * a.scale();
      for (int64_t c = 0; c < a.D; ++c) out[c] += g * double(a.hk[a.at(h, j) + c]);
    }
  }
  void dkv_row(int64_t h, int64_t j, double* dk, double* dv) const {
    for (int64_t c = 0; c < a.D; ++c) dk[c] = dv[c] = 0;
    for (int64_t i = 0; i < a.S; ++i) {
      double pij = p(h, i, j);
      if (pij == 0.0) continue;
      double g = ds(h, i, j, pij) * a.scale();
      for (int64_t c = 0; c < a.D; ++c) {
        dk[c] += g * double(a.hq[a.at(h, i) + c]);
        dv[c] += pij * double(a.hdo[a.at(h, i) + c]);
      }
    }
  }
};

std::size_t count_differences(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t n = a.size() == b.size() ? 0 : std::max(a.size(), b.size());
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) n += a[i] != b[i];
  return n;
}

double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, std::fabs(double(x)));
  return m;
}

struct Outputs {
  std::vector<float> O, LSE, Ob, dQ, dK, dV;
};

// Runs the reference forward (fp32 O and the bf16 overload) and backward (from the bf16 O).
Outputs run_reference(const Attention& a) {
  const std::size_t n = a.numel(), rows = static_cast<std::size_t>(a.heads * a.S);
  DeviceBuffer O(n * 4), LSE(rows * 4), Ob(n * 2), LSE2(rows * 4), dQ(n * 4), dK(n * 4), dV(n * 4);
  mha_forward_reference(a.dev(a.q), a.dev(a.k), a.dev(a.v), O.as<float>(), LSE.as<float>(), a.dims(), nullptr);
  mha_forward_reference(a.dev(a.q), a.dev(a.k), a.dev(a.v), Ob.as<__nv_bfloat16>(), LSE2.as<float>(), a.dims(),
                        nullptr);
  mha_backward_reference(a.dev(a.q), a.dev(a.k), a.dev(a.v), Ob.as<__nv_bfloat16>(), a.dev(a.dout), LSE2.as<float>(),
                         dQ.as<float>(), dK.as<float>(), dV.as<float>(), a.dims(), nullptr);
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  Outputs out{f32_to_host(O, n),  f32_to_host(LSE, rows), bf16_to_host(Ob, n),
              f32_to_host(dQ, n), f32_to_host(dK, n),     f32_to_host(dV, n)};
  EXPECT_EQ(count_differences(f32_to_host(LSE2, rows), out.LSE), 0u) << "the bf16 overload must compute the same LSE";
  for (std::size_t i = 0; i < n; ++i)  // and O rounded once from the same fp32 value
    if (out.Ob[i] != __bfloat162float(__float2bfloat16_rn(out.O[i]))) {
      ADD_FAILURE() << "bf16 O differs from the rounded fp32 O at " << i;
      break;
    }
  return out;
}

// Checks the given rows (query rows for O/LSE/dQ, keys for dK/dV) of every head against fp64, each
// element within `rel` of its tensor's largest magnitude (fp32 sums of S terms).
void expect_rows_match_fp64(const Attention& a, const Outputs& r, const std::vector<int64_t>& rows, double rel) {
  HostBackward hb{a, r.Ob, r.LSE};
  const double o_tol = rel * max_abs(r.O) + 1e-6, dq_tol = rel * max_abs(r.dQ) + 1e-6,
               dk_tol = rel * max_abs(r.dK) + 1e-6, dv_tol = rel * max_abs(r.dV) + 1e-6;
  Vec o(a.D), g(a.D), g2(a.D);
  for (int64_t h = 0; h < a.heads; ++h)
    for (int64_t i : rows) {
      SCOPED_TRACE("head " + std::to_string(h) + " row " + std::to_string(i));
      double lse = a.forward_row(a.hq.data(), a.hk.data(), a.hv.data(), h, i, o.data());
      EXPECT_NEAR(r.LSE[h * a.S + i], lse, rel * (1 + std::fabs(lse)));
      hb.dq_row(h, i, g.data());
      for (int64_t c = 0; c < a.D; ++c) {
        EXPECT_NEAR(r.O[a.at(h, i) + c], o[c], o_tol) << "O col " << c;
        EXPECT_NEAR(r.dQ[a.at(h, i) + c], g[c], dq_tol) << "dQ col " << c;
      }
      hb.dkv_row(h, i, g.data(), g2.data());
      for (int64_t c = 0; c < a.D; ++c) {
        EXPECT_NEAR(r.dK[a.at(h, i) + c], g[c], dk_tol) << "dK col " << c;
        EXPECT_NEAR(r.dV[a.at(h, i) + c], g2[c], dv_tol) << "dV col " << c;
      }
      if (::testing::Test::HasFailure()) return;  // one bad row says enough
    }
}

std::vector<int64_t> all_rows(int64_t S) {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < S; ++i) r.push_back(i);
  return r;
}

}  // namespace

class MhaReferenceTest : public GpuTest {};

TEST_F(MhaReferenceTest, SmallShapesMatchFp64Everywhere) {
  for (int64_t S : {64, 128, 100})
    for (bool causal : {false, true}) {
      SCOPED_TRACE("S=" + std::to_string(S) + (causal ? " causal" : ""));
      Attention a(2, S, causal, 100 + S + causal);
      expect_rows_match_fp64(a, run_reference(a), all_rows(S), 2e-5);
    }
}

// S = 16384 at two heads: the forward runs one head per chunk and the backward two row slices per
// head (dK and dV accumulate across them); sampled rows include both slices' edges.
TEST_F(MhaReferenceTest, LongSequenceChunksMatchFp64OnSampledRows) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    Attention a(2, 16384, causal, 7 + causal);
    Outputs r = run_reference(a);
    expect_rows_match_fp64(a, r, {0, 1, 63, 64, 4097, 8191, 8192, 8193, 12345, 16383}, 1e-4);
  }
}

// The backward derivation (from O rounded to bf16 and the fp32 LSE) is the gradient of
// L = Σ dO∘O(Q, K, V): central differences of the fp64 forward at sampled entries of Q, K and V.
// The tolerance covers O's bf16 rounding in D_i = dO_i·O_i (up to ~2e-3 of the gradient's scale).
TEST_F(MhaReferenceTest, BackwardIsTheGradientOfTheForward) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    Attention a(1, 64, causal, 31 + causal);
    Outputs r = run_reference(a);
    Vec q(a.hq.begin(), a.hq.end()), k(a.hk.begin(), a.hk.end()), v(a.hv.begin(), a.hv.end());
    auto loss = [&] {
      double L = 0;
      Vec o(a.D);
      for (int64_t i = 0; i < a.S; ++i) {
        a.forward_row(q.data(), k.data(), v.data(), 0, i, o.data());
        for (int64_t c = 0; c < a.D; ++c) L += double(a.hdo[a.at(0, i) + c]) * o[c];
      }
      return L;
    };
    std::mt19937_64 rng(5);
    struct Target {
      const char* name;
      Vec* x;
      const std::vector<float>* grad;
    } targets[] = {{"dQ", &q, &r.dQ}, {"dK", &k, &r.dK}, {"dV", &v, &r.dV}};
    for (const auto& t : targets) {
      const double tol = 1e-2 * max_abs(*t.grad) + 1e-5;
      for (int s = 0; s < 16; ++s) {
        std::size_t e = rng() % t.x->size();
        if (s == 0) e = 0;                // row 0: attends to itself only when causal
        if (s == 1) e = t.x->size() - 1;  // last row / key
        const double x0 = (*t.x)[e], h = 1e-3;
        (*t.x)[e] = x0 + h;
        double up = loss();
        (*t.x)[e] = x0 - h;
        double down = loss();
        (*t.x)[e] = x0;
        EXPECT_NEAR((*t.grad)[e], (up - down) / (2 * h), tol) << t.name << " element " << e;
      }
    }
  }
}

// O and LSE of a backward trial are the trusted forward on the trial's own Q, K, V; the other
// inputs are the standard samplers (as for any op).
TEST_F(MhaReferenceTest, BackwardOperatorDerivesOAndLseFromTheTrustedForward) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  for (const char* name : {"mha_bwd_d128", "mha_bwd_d128_causal"}) {
    SCOPED_TRACE(name);
    const Definition& def = catalog.definition(name);
    ResolvedWorkload w = resolve_workload(def, catalog.find_workload(name, "S=512"));
    auto op = make_operator(def.op_type);
    std::vector<DeviceBuffer> bufs;
    std::vector<DeviceTensor> inputs;
    for (const auto& t : w.tensors)
      if (!t.is_output) {
        bufs.emplace_back(t.bytes());
        inputs.push_back({bufs.back().get(), t});
      }
    ASSERT_EQ(inputs.size(), 6u);
    const uint64_t seed = 1234;
    op->make_inputs(w, inputs, seed, nullptr);
    const int64_t B = w.axis("B"), H = w.axis("H"), S = w.axis("S"), D = w.axis("D");
    const std::size_t n = static_cast<std::size_t>(B * H * S * D), rows = static_cast<std::size_t>(B * H * S);
    DeviceBuffer q2(n * 2), O(n * 4), LSE(rows * 4);
    fill_normal(q2.get(), DType::bf16, static_cast<int64_t>(n), derive_seed(seed, 0), nullptr);
    mha_forward_reference(static_cast<const __nv_bfloat16*>(inputs[0].data),
                          static_cast<const __nv_bfloat16*>(inputs[1].data),
                          static_cast<const __nv_bfloat16*>(inputs[2].data), O.as<float>(), LSE.as<float>(),
                          AttentionDims{B * H, S, D, def.op_type == "mha_bwd_causal"}, nullptr);
    PTXB_CUDA_CALL(cudaDeviceSynchronize());
    std::vector<__nv_bfloat16> got_q(n);
    PTXB_CUDA_CALL(cudaMemcpy(got_q.data(), inputs[0].data, n * 2, cudaMemcpyDeviceToHost));
    std::vector<float> want_q = bf16_to_host(q2, n);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad += __bfloat162float(got_q[i]) != want_q[i];
    EXPECT_EQ(bad, 0u) << "Q must be the standard sampler's";
    std::vector<__nv_bfloat16> got_o(n);
    std::vector<float> got_lse(rows);
    PTXB_CUDA_CALL(cudaMemcpy(got_o.data(), inputs[3].data, n * 2, cudaMemcpyDeviceToHost));
    PTXB_CUDA_CALL(cudaMemcpy(got_lse.data(), inputs[5].data, rows * 4, cudaMemcpyDeviceToHost));
    std::vector<float> want_o = f32_to_host(O, n), want_lse = f32_to_host(LSE, rows);
    EXPECT_EQ(count_differences(got_lse, want_lse), 0u) << "LSE must be the trusted forward's";
    bad = 0;
    for (std::size_t i = 0; i < n; ++i)
      bad += __bfloat162float(got_o[i]) != __bfloat162float(__float2bfloat16_rn(want_o[i]));
    EXPECT_EQ(bad, 0u) << "O must be the trusted forward's, rounded to bf16";
  }
}

// No GPU needed: the op types are known and the FLOP convention is FlashAttention's, at every
// head dimension the catalog has (d128 for evaluation, d64 and d96 for generalisation).
TEST(MhaOperators, FourOpTypesWithTheFlashAttentionFlopConvention) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  for (int D : {128, 64, 96}) {
    const std::string d = "_d" + std::to_string(D);
    const double full = 4.0 * 4 * 48 * 4096.0 * 4096.0 * D;  // 4·B·H·S²·D at the default S = 4096
    struct Case {
      std::string definition;
      double flops;
    } cases[] = {{"mha_with_lse" + d, full},
                 {"mha_with_lse" + d + "_causal", full / 2},
                 {"mha_bwd" + d, 2.5 * full},
                 {"mha_bwd" + d + "_causal", 2.5 * full / 2}};
    for (const auto& c : cases) {
      SCOPED_TRACE(c.definition);
      const Definition& def = catalog.definition(c.definition);
      ResolvedWorkload w = resolve_workload(def, catalog.default_workload(c.definition));
      auto op = make_operator(def.op_type);
      EXPECT_DOUBLE_EQ(op->flops(w), c.flops);
      EXPECT_GT(op->min_bytes(w), 0.0);
    }
  }
  EXPECT_THROW((void)make_operator("mha_fwd_sliding"), InputError);
}

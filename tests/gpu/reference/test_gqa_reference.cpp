// The trusted GQA reference (src/reference/gqa_reference.*) and the GQA operators (src/ops/gqa_op.*):
// the fp32 GPU reference against an fp64 CPU reference written here, on hand-made layouts with an
// empty sequence, a sequence with fewer queries than keys (delta > 0), one with more (queries that
// see no key) and GQA head groups, for the three classes; through each operator on its small
// workload (inputs from make_inputs, the index inputs equal to the layout, spot-check rows equal to
// the full reference). GqaOperators.* need no GPU (cpu label): FLOPs, bytes, fresh inputs, the
// baseline's problem, and the checks of the workload's tensors and samplers.
#include <cuda_bf16.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/error.h"
#include "definitions/catalog.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"
#include "gpu_test_support.h"
#include "ops/gqa_op.h"
#include "reference/gqa_reference.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

using bf16 = __nv_bfloat16;

// The layout and tensors of one case, on the host (bf16 values as floats) and the device.
struct GqaCase {
  GqaDims dims;
  bool paged = false;
  int64_t kv_rows = 0;
  std::vector<int32_t> qo_indptr, kv_indptr, kv_indices;  // qo_indptr empty: decode (one query each)
  std::vector<float> q, k, v;
};

// fp64 on the CPU, straight from the definitions' text: out and lse (base 2), 0 and −inf for a
// query that sees no key.
void cpu_reference(const GqaCase& c, std::vector<double>& out, std::vector<double>& lse) {
  const GqaDims& g = c.dims;
  const int64_t Hq = g.num_qo_heads, Hkv = g.num_kv_heads, D = g.head_dim;
  out.assign(static_cast<std::size_t>(g.total_q * Hq * D), 0.0);
  lse.assign(static_cast<std::size_t>(g.total_q * Hq), -INFINITY);
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t q0 = c.qo_indptr.empty() ? b : c.qo_indptr[b];
    const int64_t q_len = c.qo_indptr.empty() ? 1 : c.qo_indptr[b + 1] - q0;
    const int64_t k0 = c.kv_indptr[b], kv_len = c.kv_indptr[b + 1] - k0;
    for (int64_t i = 0; i < q_len; ++i)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t kvh = h / (Hq / Hkv), row = (q0 + i) * Hq + h;
        std::vector<double> s;
        std::vector<int64_t> krow;
        for (int64_t j = 0; j < kv_len; ++j) {
          if (g.causal && j > i + kv_len - q_len) break;
          const int64_t r = c.paged ? c.kv_indices[k0 + j] : k0 + j;
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += double(c.q[row * D + d]) * c.k[(r * Hkv + kvh) * D + d];
          s.push_back(dot * double(g.sm_scale));
          krow.push_back(r);
        }
        if (s.empty()) continue;
        double m = -INFINITY, l = 0;
        for (double x : s) m = std::max(m, x);
        for (double x : s) l += std::exp(x - m);
        lse[row] = (m + std::log(l)) / std::log(2.0);
        for (std::size_t j = 0; j < s.size(); ++j)
          for (int64_t d = 0; d < D; ++d)
            out[row * D + d] += std::exp(s[j] - m) / l * c.v[(krow[j] * Hkv + kvh) * D + d];
      }
  }
}

std::vector<float> random_bf16_values(std::size_t n, std::mt19937_64& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> out(n);
  for (auto& x : out) x = __bfloat162float(__float2bfloat16(normal(rng)));
  return out;
}

DeviceBuffer to_device_bf16(const std::vector<float>& h) {
  std::vector<bf16> b(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) b[i] = __float2bfloat16(h[i]);
  DeviceBuffer d(b.size() * sizeof(bf16));
  PTXB_CUDA_CALL(cudaMemcpy(d.get(), b.data(), b.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  return d;
}

DeviceBuffer to_device_i32(const std::vector<int32_t>& h) {
  DeviceBuffer d(std::max<std::size_t>(1, h.size()) * sizeof(int32_t));
  if (!h.empty()) PTXB_CUDA_CALL(cudaMemcpy(d.get(), h.data(), h.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  return d;
}

template <typename T>
std::vector<T> to_host(const void* d, std::size_t n) {
  std::vector<T> h(n);
  PTXB_CUDA_CALL(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

std::vector<float> bf16_to_host(const void* d, std::size_t n) {
  std::vector<float> out;
  for (bf16 x : to_host<bf16>(d, n)) out.push_back(__bfloat162float(x));
  return out;
}

// Output and lse of the GPU reference against fp64: |got − want| ≤ 1e-4·(|want| + 1), and exactly
// 0 / −inf where the query sees no key. Returns how many rows saw no key.
int64_t expect_matches_fp64(const GqaCase& c, const std::vector<float>& out, const std::vector<float>& lse) {
  std::vector<double> want_out, want_lse;
  cpu_reference(c, want_out, want_lse);
  EXPECT_EQ(out.size(), want_out.size());
  int64_t empty_rows = 0;
  for (std::size_t r = 0; r < want_lse.size(); ++r) {
    if (std::isinf(want_lse[r])) {
      ++empty_rows;
      EXPECT_TRUE(std::isinf(lse[r]) && lse[r] < 0) << "row " << r << ": " << lse[r];
      for (int64_t d = 0; d < c.dims.head_dim; ++d) EXPECT_EQ(out[r * c.dims.head_dim + d], 0.0f) << "row " << r;
      continue;
    }
    EXPECT_LE(std::abs(lse[r] - want_lse[r]), 1e-4 * (std::abs(want_lse[r]) + 1)) << "lse row " << r;
  }
  double worst = 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    worst = std::max(worst, std::abs(out[i] - want_out[i]) / (std::abs(want_out[i]) + 1));
  EXPECT_LT(worst, 1e-4);
  return empty_rows;
}

// Runs the GPU reference (full, and on every row through the rows entry point) on case `c`.
void check_case(const GqaCase& c) {
  DeviceBuffer q = to_device_bf16(c.q), k = to_device_bf16(c.k), v = to_device_bf16(c.v);
  DeviceBuffer qo = to_device_i32(c.qo_indptr), kv = to_device_i32(c.kv_indptr), ix = to_device_i32(c.kv_indices);
  GqaIndexView view{c.qo_indptr.empty() ? nullptr : qo.as<int32_t>(), kv.as<int32_t>(),
                    c.paged ? ix.as<int32_t>() : nullptr};
  const int64_t rows = c.dims.total_q * c.dims.num_qo_heads, D = c.dims.head_dim;
  DeviceBuffer out(static_cast<std::size_t>(rows * D) * 4), lse(static_cast<std::size_t>(rows) * 4);
  gqa_reference(q.as<bf16>(), k.as<bf16>(), v.as<bf16>(), view, c.dims, out.as<float>(), lse.as<float>(), nullptr);
  PTXB_CUDA_CALL(cudaDeviceSynchronize());
  const std::vector<float> h_out = to_host<float>(out.get(), static_cast<std::size_t>(rows * D));
  const std::vector<float> h_lse = to_host<float>(lse.get(), static_cast<std::size_t>(rows));
  EXPECT_GT(expect_matches_fp64(c, h_out, h_lse), 0) << "the case should hold rows that see no key";

  // Rows in reverse order, through the spot-check entry point: the same values, slot by slot.
  std::vector<int64_t> order(static_cast<std::size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) order[static_cast<std::size_t>(r)] = rows - 1 - r;
  DeviceBuffer d_order(order.size() * 8), r_out(out.bytes()), r_lse(lse.bytes());
  PTXB_CUDA_CALL(cudaMemcpy(d_order.get(), order.data(), order.size() * 8, cudaMemcpyHostToDevice));
  gqa_reference_rows(q.as<bf16>(), k.as<bf16>(), v.as<bf16>(), view, c.dims, d_order.as<int64_t>(), rows,
                     r_out.as<float>(), r_lse.as<float>(), nullptr);
  const std::vector<float> g_out = to_host<float>(r_out.get(), h_out.size()), g_lse = to_host<float>(r_lse.get(), h_lse.size());
  for (int64_t s = 0; s < rows; ++s) {
    const int64_t r = order[static_cast<std::size_t>(s)];
    EXPECT_EQ(g_lse[s], h_lse[r]) << "row " << r;
    for (int64_t d = 0; d < D; ++d) EXPECT_EQ(g_out[s * D + d], h_out[r * D + d]) << "row " << r;
  }
}

// A case with random values for the given layout.
GqaCase make_case(GqaDims dims, bool paged, int64_t kv_rows, std::vector<int32_t> qo, std::vector<int32_t> kv,
                  std::vector<int32_t> indices, uint64_t seed) {
  GqaCase c;
  c.dims = dims;
  c.paged = paged;
  c.kv_rows = kv_rows;
  c.qo_indptr = std::move(qo);
  c.kv_indptr = std::move(kv);
  c.kv_indices = std::move(indices);
  c.dims.batch = static_cast<int64_t>(c.kv_indptr.size()) - 1;
  std::mt19937_64 rng(seed);
  c.q = random_bf16_values(static_cast<std::size_t>(dims.total_q * dims.num_qo_heads * dims.head_dim), rng);
  c.k = random_bf16_values(static_cast<std::size_t>(kv_rows * dims.num_kv_heads * dims.head_dim), rng);
  c.v = random_bf16_values(static_cast<std::size_t>(kv_rows * dims.num_kv_heads * dims.head_dim), rng);
  return c;
}

// Pages 0 … n − 1 in a scrambled order (a bijection of 0 … n − 1 for n coprime with 7).
std::vector<int32_t> scrambled_pages(int32_t count, int32_t n) {
  std::vector<int32_t> out;
  for (int32_t i = 0; i < count; ++i) out.push_back((i * 7 + 3) % n);
  return out;
}

class GqaReference : public GpuTest {};

// An inputs/outputs set for an operator's workload, as the worker allocates it.
struct OpBuffers {
  std::vector<DeviceBuffer> in, out;
  std::vector<DeviceTensor> inputs;
  std::vector<float*> outputs;
  explicit OpBuffers(const ResolvedWorkload& w) {
    for (const auto& t : w.tensors) {
      if (t.is_output) {
        out.emplace_back(static_cast<std::size_t>(t.numel()) * 4);
        outputs.push_back(out.back().as<float>());
      } else {
        in.emplace_back(t.bytes());
        inputs.push_back({in.back().get(), t});
      }
    }
  }
};

}  // namespace

TEST_F(GqaReference, PagedDecodeMatchesFp64) {
  // 4 sequences of 9, 0 (empty: output 0, lse −inf), 1 and 40 keys over 64 pages; 6 query heads on
  // 2 kv heads.
  GqaDims dims{6, 2, 128, 0, 4, 0.0883883f, false};
  check_case(make_case(dims, true, 64, {}, {0, 9, 9, 10, 50}, scrambled_pages(50, 64), 1));
}

TEST_F(GqaReference, PagedCausalPrefillMatchesFp64) {
  // Sequences (q_len, kv_len): (3, 7) delta 4; (0, 0) empty; (5, 5); (4, 2) where queries 0 and 1 see
  // no key; (2, 0) queries without keys. 8 query heads on 2 kv heads, head_dim 64.
  GqaDims dims{8, 2, 64, 0, 14, 0.125f, true};
  check_case(make_case(dims, true, 20, {0, 3, 3, 8, 12, 14}, {0, 7, 7, 12, 14, 14}, scrambled_pages(14, 20), 2));
}

TEST_F(GqaReference, RaggedCausalPrefillMatchesFp64) {
  // (3, 10) delta 7; (0, 4) keys without queries; (6, 6); (2, 1): query 0 sees no key.
  GqaDims dims{8, 1, 128, 0, 11, 0.0883883f, true};
  check_case(make_case(dims, false, 21, {0, 3, 3, 9, 11}, {0, 10, 14, 20, 21}, {}, 3));
}

// Through the operators on their small workloads: make_inputs fills the index inputs with the
// layout and sm_scale with the workload's scalar; the reference equals fp64 on the inputs it made;
// spot-check rows (edges, repeats) equal the full reference's.
TEST_F(GqaReference, OperatorsOnTheirSmallWorkloads) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  for (const char* name : {"gqa_paged_decode_h24_kv8_d128_ps1", "gqa_paged_prefill_causal_h24_kv8_d128_ps1",
                           "gqa_ragged_prefill_causal_h32_kv4_d128"}) {
    SCOPED_TRACE(name);
    const Definition& def = catalog.definition(name);
    ResolvedWorkload w = resolve_workload(def, catalog.find_workload(name, std::string(name) + "-small"));
    auto op = make_operator(def.op_type);
    auto* gqa = dynamic_cast<GqaOperator*>(op.get());
    ASSERT_NE(gqa, nullptr);
    OpBuffers b(w);
    op->make_inputs(w, b.inputs, 5, nullptr);
    op->reference(w, b.inputs, b.outputs, nullptr);
    PTXB_CUDA_CALL(cudaDeviceSynchronize());

    const GqaProblem p = gqa->problem(w);
    GqaCase c;
    c.dims = {p.num_qo_heads, p.num_kv_heads, p.head_dim, p.batch(), p.total_q, p.sm_scale, p.causal()};
    c.paged = p.kind != GqaProblem::Kind::ragged_prefill_causal;
    c.kv_rows = c.paged ? p.num_pages : p.total_kv;
    c.qo_indptr = p.qo_indptr;
    c.kv_indptr = p.kv_indptr;
    c.kv_indices = p.kv_indices;
    c.q = bf16_to_host(b.inputs[0].data, static_cast<std::size_t>(b.inputs[0].spec.numel()));
    c.k = bf16_to_host(b.inputs[1].data, static_cast<std::size_t>(b.inputs[1].spec.numel()));
    c.v = bf16_to_host(b.inputs[2].data, static_cast<std::size_t>(b.inputs[2].spec.numel()));
    for (const auto& t : b.inputs) {
      if (t.spec.dtype == DType::i32) {
        const auto got = to_host<int32_t>(t.data, static_cast<std::size_t>(t.spec.numel()));
        const auto& want = t.spec.name == "qo_indptr" ? p.qo_indptr : t.spec.name == "kv_indptr" ? p.kv_indptr : p.kv_indices;
        EXPECT_EQ(got, want) << t.spec.name;
      }
      if (t.spec.name == "sm_scale") {
        EXPECT_EQ(to_host<float>(t.data, 1)[0], 0.08838834764831843f);
      }
    }
    const int64_t rows = p.total_q * p.num_qo_heads;
    const auto out = to_host<float>(b.outputs[0], static_cast<std::size_t>(rows * p.head_dim));
    const auto lse = to_host<float>(b.outputs[1], static_cast<std::size_t>(rows));
    EXPECT_EQ(expect_matches_fp64(c, out, lse), 0);  // our layouts give every query a key

    // Spot-check rows of both outputs, as the worker samples them.
    std::vector<RowSample> samples = {{0, {0, rows - 1, rows - 1, 17 % rows}}, {1, {rows - 1, 0, 5 % rows}}};
    DeviceBuffer o_rows(4 * 4 * static_cast<std::size_t>(p.head_dim)), l_rows(3 * 4);
    DeviceBuffer scratch(op->row_scratch_bytes(w, 4));
    op->reference_rows(w, b.inputs, samples, {o_rows.as<float>(), l_rows.as<float>()}, scratch.get(), nullptr);
    const auto got_o = to_host<float>(o_rows.get(), 4 * static_cast<std::size_t>(p.head_dim));
    const auto got_l = to_host<float>(l_rows.get(), 3);
    for (std::size_t s = 0; s < 4; ++s)
      for (int64_t d = 0; d < p.head_dim; ++d)
        EXPECT_EQ(got_o[s * p.head_dim + d], out[samples[0].rows[s] * p.head_dim + d]) << "output sample " << s;
    for (std::size_t s = 0; s < 3; ++s) EXPECT_EQ(got_l[s], lse[samples[1].rows[s]]) << "lse sample " << s;

    // A new trial draws new q, k, v but keeps the layout.
    const auto q_before = c.q;
    op->make_inputs(w, b.inputs, 6, nullptr);
    EXPECT_NE(bf16_to_host(b.inputs[0].data, q_before.size()), q_before);
    const auto& kv_input = b.inputs[def.op_type == "gqa_paged_decode" ? 3 : 4];  // kv_indptr (after qo_indptr)
    EXPECT_EQ(to_host<int32_t>(kv_input.data, static_cast<std::size_t>(kv_input.spec.numel())), p.kv_indptr);
  }
}

// ---- no GPU needed (cpu label)

TEST(GqaOperators, FlopsCountVisiblePairsOnly) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  auto resolved = [&](const std::string& name, const std::string& uuid_tail) {
    return resolve_workload(catalog.definition(name), catalog.find_workload(name, name + uuid_tail));
  };
  {  // decode: every key of every sequence, Hq = 24, D = 128
    ResolvedWorkload w = resolved("gqa_paged_decode_h24_kv8_d128_ps1", "-released");
    EXPECT_DOUBLE_EQ(make_operator("gqa_paged_decode")->flops(w), 4.0 * 9625 * 24 * 128);
  }
  {  // paged prefill, one sequence of 892 queries and 892 keys: the lower triangle with its diagonal
    ResolvedWorkload w = resolved("gqa_paged_prefill_causal_h24_kv8_d128_ps1", "-released");
    EXPECT_DOUBLE_EQ(make_operator("gqa_paged_prefill_causal")->flops(w), 4.0 * (892.0 * 893 / 2) * 24 * 128);
  }
  {  // ragged: Σ_b q(q+1)/2 + q·(kv − q) from the layout
    ResolvedWorkload w = resolved("gqa_ragged_prefill_causal_h32_kv4_d128", "-small");
    auto op = make_operator("gqa_ragged_prefill_causal");
    const SequenceLayout l = dynamic_cast<GqaOperator&>(*op).layout(w);
    double pairs = 0;
    for (int64_t b = 0; b < l.batch(); ++b) {
      const double q = double(l.q_len(b)), kv = double(l.kv_len(b));
      pairs += q * (q + 1) / 2 + q * (kv - q);
    }
    EXPECT_DOUBLE_EQ(op->flops(w), 4.0 * pairs * 32 * 128);
    EXPECT_LT(op->flops(w), 4.0 * 160 * 256 * 32 * 128);  // less than unmasked
  }
}

TEST(GqaOperators, FreshInputsBytesAndTheBaselinesProblem) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  const std::string name = "gqa_paged_decode_h24_kv8_d128_ps1";
  ResolvedWorkload w = resolve_workload(catalog.definition(name), catalog.default_workload(name));
  auto op = make_operator("gqa_paged_decode");
  EXPECT_EQ(op->fresh_inputs(w), (std::vector<std::size_t>{0, 1, 2}));  // q, k_cache, v_cache
  EXPECT_EQ(op->row_length(w, 0), 128);
  EXPECT_EQ(op->row_length(w, 1), 1);
  // Only the 9625 pages the layout names count of the 42784-page caches.
  const double page = 8 * 128 * 2;
  const double want = 15 * 24 * 128 * 2 + 2 * 9625 * page + 16 * 4 + 9625 * 4 + 4 + 15 * 24 * 128 * 2 + 15 * 24 * 4;
  EXPECT_DOUBLE_EQ(op->min_bytes(w), want);

  const GqaProblem p = dynamic_cast<GqaOperator&>(*op).problem(w);
  EXPECT_EQ(p.kind, GqaProblem::Kind::paged_decode);
  EXPECT_EQ(p.num_qo_heads, 24);
  EXPECT_EQ(p.num_kv_heads, 8);
  EXPECT_EQ(p.head_dim, 128);
  EXPECT_EQ(p.num_pages, 42784);
  EXPECT_EQ(p.total_q, 15);
  EXPECT_EQ(p.total_kv, 9625);
  EXPECT_FLOAT_EQ(p.sm_scale, 0.08838834764831843f);
  EXPECT_EQ(p.batch(), 15);
  EXPECT_FALSE(p.causal());
  EXPECT_EQ(p.qo_indptr.size(), 16u);
  EXPECT_EQ(p.qo_indptr.back(), 15);
  EXPECT_EQ(p.kv_indptr.back(), 9625);
  EXPECT_EQ(p.kv_indices.size(), 9625u);
  EXPECT_EQ(p.kv_indices, dynamic_cast<GqaOperator&>(*op).problem(w).kv_indices);  // the same every time

  const std::string ragged = "gqa_ragged_prefill_causal_h32_kv4_d128";
  ResolvedWorkload r = resolve_workload(catalog.definition(ragged), catalog.default_workload(ragged));
  auto rop = make_operator("gqa_ragged_prefill_causal");
  const GqaProblem rp = dynamic_cast<GqaOperator&>(*rop).problem(r);
  EXPECT_TRUE(rp.causal());
  EXPECT_EQ(rp.num_pages, 0);
  EXPECT_EQ(rp.total_kv, 16294);
  EXPECT_TRUE(rp.kv_indices.empty());
  EXPECT_EQ(rp.batch(), 33);
  EXPECT_DOUBLE_EQ(rop->min_bytes(r), rop->Operator::min_bytes(r));  // ragged: every row is read
}

// What the runner's `once` mode (memcheck, runtime SASS) writes into the fixed inputs: the
// layout's exact arrays and the scale, never random numbers; q, k and v stay the seed's.
TEST(GqaOperators, FixedValuesAreTheLayoutAndTheScale) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  const std::string name = "gqa_paged_prefill_causal_h24_kv8_d128_ps1";
  ResolvedWorkload w = resolve_workload(catalog.definition(name), catalog.find_workload(name, name + "-small"));
  auto op = make_operator("gqa_paged_prefill_causal");
  const GqaProblem p = dynamic_cast<GqaOperator&>(*op).problem(w);
  auto as_doubles = [](const std::vector<int32_t>& a) { return std::vector<double>(a.begin(), a.end()); };
  for (std::size_t i : {0, 1, 2}) EXPECT_FALSE(op->fixed_values(w, i).has_value()) << "input " << i;
  EXPECT_EQ(op->fixed_values(w, 3), as_doubles(p.qo_indptr));
  EXPECT_EQ(op->fixed_values(w, 4), as_doubles(p.kv_indptr));
  EXPECT_EQ(op->fixed_values(w, 5), as_doubles(p.kv_indices));
  ASSERT_TRUE(op->fixed_values(w, 6).has_value());
  EXPECT_EQ(*op->fixed_values(w, 6), std::vector<double>{0.08838834764831843});
  EXPECT_THROW((void)op->fixed_values(w, 7), Error);  // past the inputs
  // The other operators: a scalar input is fixed, a random one is not.
  const std::string gemm = "gemm_n7168_k5120";
  ResolvedWorkload g = resolve_workload(catalog.definition(gemm), catalog.default_workload(gemm));
  EXPECT_FALSE(make_operator("gemm")->fixed_values(g, 0).has_value());
}

TEST(GqaOperators, WorkloadsOutsideTheContractAreRefused) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  const std::string name = "gqa_ragged_prefill_causal_h32_kv4_d128";
  const Definition& def = catalog.definition(name);
  auto op = make_operator("gqa_ragged_prefill_causal");
  auto refused = [&](const std::string& line) -> std::string {
    try {
      (void)op->flops(resolve_workload(def, parse_workload(line, "w.jsonl:1", def)));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string head = R"({"definition": ")" + name + R"(", "workload": {"uuid": "u", "axes": {"len_indptr": 3, "total_q": 8, "total_kv": 8}, "inputs": )";
  const std::string good = R"({"qo_indptr": {"type": "derived"}, "kv_indptr": {"type": "derived"}, "sm_scale": {"type": "scalar", "value": 0.1}})";
  EXPECT_EQ(refused(head + good + "}}"), "");
  // An index array the workload would fill at random, a missing scale, impossible totals.
  EXPECT_NE(refused(head + R"({"kv_indptr": {"type": "derived"}, "sm_scale": {"type": "scalar", "value": 0.1}})" + "}}")
                .find("qo_indptr must be \"derived\""),
            std::string::npos);
  EXPECT_NE(refused(head + R"({"qo_indptr": {"type": "derived"}, "kv_indptr": {"type": "derived"}})" + "}}")
                .find("sm_scale must be \"scalar\""),
            std::string::npos);
  const std::string few_keys = R"({"definition": ")" + name +
                               R"(", "workload": {"uuid": "u", "axes": {"len_indptr": 3, "total_q": 8, "total_kv": 4}, "inputs": )";
  EXPECT_NE(refused(few_keys + good + "}}").find("total_kv ≥ total_q"), std::string::npos);
  // Another class's definition is refused by its tensor names.
  const std::string decode = "gqa_paged_decode_h24_kv8_d128_ps1";
  ResolvedWorkload d = resolve_workload(catalog.definition(decode), catalog.default_workload(decode));
  EXPECT_THROW((void)op->flops(d), Error);
}

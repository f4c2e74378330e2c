// The SDPA graphs, written the way cudnn-frontend's composite SDPA nodes lower them (v1.8 and
// v1.13+ agree except where GraphStyle says), because cuDNN's flash engines pattern-match exactly
// that shape of graph: K and V enter transposed through their strides, intermediates are virtual
// fp32, the probabilities feeding a matmul are virtual bf16, scalars are by-value fp32 [1,1,1,1].
//
// Forward (O = softmax(scale·Q·Kᵀ [+ causal mask])·V, Stats = rowmax + log(rowsum exp)):
//   bmm1 Q·Kᵀ → ×scale → [row idx, col idx, row ≥ col, select(·, −inf)] → max → sub → exp
//   → sum → log → add(max, log) = Stats ; div(exp, sum) = P (bf16) → bmm2 P·V = O
// Backward (P recomputed from Stats; Dsum = rowsum(dO∘O) is a scratch tensor):
//   dO∘O → sum → ×1 = Dsum ; Q·Kᵀ → ×scale → −Stats [→ mask] → exp = P
//   Pᵀ (reshape, bf16) · dO = dV ; dO·Vᵀ = dP → −Dsum → ×P → ×scale = dS
//   dSᵀ (reshape, bf16) · Q = dK ; dS · K (reshape of Kᵀ) = dQ_accum (fp32 scratch) → identity = dQ
#include "baseline/mha_cudnn.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <span>
#include <vector>

#include "baseline/cudnn_graph.h"
#include "baseline/mha_cudnn_graph.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"

namespace ptxbench {
namespace {

using cudnn::ExecutionPlan;
using cudnn::GraphBuilder;

// Fixed UIDs of the non-virtual tensors (intermediates get 1000+).
constexpr int64_t kUidQ = 1, kUidK = 2, kUidV = 3, kUidO = 4, kUidStats = 5, kUidDO = 6, kUidDQ = 7, kUidDK = 8,
                  kUidDV = 9, kUidDsum = 10, kUidDQAccum = 11, kUidScale = 20, kUidMaskFill = 21, kUidOne = 22;

constexpr cudnnDataType_t kF32 = CUDNN_DATA_FLOAT, kBF16 = CUDNN_DATA_BFLOAT16;

/// The two places where cudnn-frontend's lowering changed between releases that ran against
/// cuDNN 9; the first is tried first, the other only if no engine accepts it.
struct GraphStyle {
  const char* name;
  cudnnDataType_t gen_index_compute;  // fe113: the context's fp32; fe18: int32
  bool lowest_fill;                   // fe18: FLT_LOWEST; fe113: -inf (from cuDNN 9.10)
  bool bwd_mask_after_stats;          // fe113: (s·scale − stats) is masked; fe18: s·scale is masked
};
constexpr GraphStyle kStyleFe113{"fe113", CUDNN_DATA_FLOAT, false, true};
constexpr GraphStyle kStyleFe18{"fe18", CUDNN_DATA_INT32, true, false};

std::vector<GraphStyle> styles_to_try() {
  const char* forced = std::getenv("PTXBENCH_CUDNN_GRAPH_STYLE");
  if (forced && std::string(forced) == kStyleFe113.name) return {kStyleFe113};
  if (forced && std::string(forced) == kStyleFe18.name) return {kStyleFe18};
  if (forced && *forced)
    throw InputError("cuDNN", std::string("PTXBENCH_CUDNN_GRAPH_STYLE=") + forced + ": expected fe113 or fe18");
  return {kStyleFe113, kStyleFe18};
}

int64_t forced_engine() {
  const char* v = std::getenv("PTXBENCH_CUDNN_ENGINE");
  if (!v || !*v) return -1;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  if (*end || n < 0) throw InputError("cuDNN", std::string("PTXBENCH_CUDNN_ENGINE=") + v + ": expected an engine index");
  return n;
}

float mask_fill(const GraphStyle& style) {
  if (style.lowest_fill || cudnn::runtime_version_number() < 91000) return std::numeric_limits<float>::lowest();
  return -std::numeric_limits<float>::infinity();
}

std::string shape_text(const MhaShape& s) {
  return "B" + std::to_string(s.B) + " H" + std::to_string(s.H) + " S" + std::to_string(s.S) + " D" +
         std::to_string(s.D) + (s.causal ? " causal" : "");
}

// Layouts, all over the same contiguous [B, H, S, D] memory.
struct Layouts {
  std::vector<int64_t> bhsd, bhsd_str;  // Q, K, V, O and their gradients
  std::vector<int64_t> bhds, kt_str;    // Kᵀ, Vᵀ: [B, H, D, S] views of K, V
  std::vector<int64_t> bhss, bhss_str;  // scores
  std::vector<int64_t> bhss_t_str;      // scores transposed (Pᵀ, dSᵀ) as a view
  std::vector<int64_t> bhs1, bhs1_str;  // per-row statistics
  explicit Layouts(const MhaShape& s) {
    const int64_t B = s.B, H = s.H, S = s.S, D = s.D;
    bhsd = {B, H, S, D};
    bhsd_str = {H * S * D, S * D, D, 1};
    bhds = {B, H, D, S};
    kt_str = {H * S * D, S * D, 1, D};
    bhss = {B, H, S, S};
    bhss_str = {H * S * S, S * S, S, 1};
    bhss_t_str = {H * S * S, S * S, 1, S};
    bhs1 = {B, H, S, 1};
    bhs1_str = {H * S, S, 1, 1};
  }
};

/// score → score where row ≥ col, else the fill value (top-left aligned causal mask).
int64_t add_causal_mask(GraphBuilder& g, const GraphStyle& style, const Layouts& L, int64_t score) {
  int64_t row = g.tensor("causal::row_index", CUDNN_DATA_INT32, L.bhss, L.bhss_str, true);
  g.pointwise("causal::gen_row_index", CUDNN_POINTWISE_GEN_INDEX, style.gen_index_compute, score, row, -1, -1, 2);
  int64_t col = g.tensor("causal::col_index", CUDNN_DATA_INT32, L.bhss, L.bhss_str, true);
  g.pointwise("causal::gen_col_index", CUDNN_POINTWISE_GEN_INDEX, style.gen_index_compute, score, col, -1, -1, 3);
  int64_t keep = g.tensor("causal::row>=col", CUDNN_DATA_BOOLEAN, L.bhss, L.bhss_str, true);
  g.pointwise("causal::row>=col", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, keep, col);
  int64_t fill = g.scalar("causal::fill", mask_fill(style), kUidMaskFill);
  int64_t out = g.tensor("causal::masked", kF32, L.bhss, L.bhss_str, true);
  g.pointwise("causal::select", CUDNN_POINTWISE_BINARY_SELECT, kF32, score, out, fill, keep);
  return out;
}

GraphBuilder build_forward(cudnnHandle_t handle, const MhaShape& s, const GraphStyle& style, float scale) {
  GraphBuilder g("sdpa_fwd " + shape_text(s) + " [" + style.name + "]");
  Layouts L(s);
  int64_t q = g.tensor("Q", kBF16, L.bhsd, L.bhsd_str, false, kUidQ);
  int64_t kt = g.tensor("K^T", kBF16, L.bhds, L.kt_str, false, kUidK);
  int64_t v = g.tensor("V", kBF16, L.bhsd, L.bhsd_str, false, kUidV);
  int64_t o = g.tensor("O", kBF16, L.bhsd, L.bhsd_str, false, kUidO);
  int64_t stats = g.tensor("Stats", kF32, L.bhs1, L.bhs1_str, false, kUidStats);
  int64_t scale_t = g.scalar("attn_scale", scale, kUidScale);

  int64_t s_raw = g.tensor("bmm1::S", kF32, L.bhss, L.bhss_str, true);
  g.matmul("bmm1", q, kt, s_raw);
  int64_t score = g.tensor("attn_scale::out", kF32, L.bhss, L.bhss_str, true);
  g.pointwise("attn_scale", CUDNN_POINTWISE_MUL, kF32, s_raw, score, scale_t);
  if (s.causal) score = add_causal_mask(g, style, L, score);

  int64_t mx = g.tensor("softmax::max", kF32, L.bhs1, L.bhs1_str, true);
  g.reduction("softmax::max", CUDNN_REDUCE_TENSOR_MAX, score, mx);
  int64_t centered = g.tensor("softmax::sub", kF32, L.bhss, L.bhss_str, true);
  g.pointwise("softmax::sub", CUDNN_POINTWISE_SUB, kF32, score, centered, mx);
  int64_t e = g.tensor("softmax::exp", kF32, L.bhss, L.bhss_str, true);
  g.pointwise("softmax::exp", CUDNN_POINTWISE_EXP, kF32, centered, e);
  int64_t sum = g.tensor("softmax::sum", kF32, L.bhs1, L.bhs1_str, true);
  g.reduction("softmax::sum", CUDNN_REDUCE_TENSOR_ADD, e, sum);
  int64_t log_sum = g.tensor("softmax::log", kF32, L.bhs1, L.bhs1_str, true);
  g.pointwise("softmax::log", CUDNN_POINTWISE_LOG, kF32, sum, log_sum);
  g.pointwise("softmax::stats", CUDNN_POINTWISE_ADD, kF32, mx, stats, log_sum);
  // The backend wants bmm2's A operand in the I/O type.
  int64_t p = g.tensor("softmax::P", kBF16, L.bhss, L.bhss_str, true);
  g.pointwise("softmax::div", CUDNN_POINTWISE_DIV, kF32, e, p, sum);
  g.matmul("bmm2", p, v, o);
  g.finalize(handle);
  return g;
}

GraphBuilder build_backward(cudnnHandle_t handle, const MhaShape& s, const GraphStyle& style, float scale) {
  GraphBuilder g("sdpa_bwd " + shape_text(s) + " [" + style.name + "]");
  Layouts L(s);
  const int64_t H = s.H, S = s.S, D = s.D;
  int64_t q = g.tensor("Q", kBF16, L.bhsd, L.bhsd_str, false, kUidQ);
  int64_t kt = g.tensor("K^T", kBF16, L.bhds, L.kt_str, false, kUidK);
  int64_t vt = g.tensor("V^T", kBF16, L.bhds, L.kt_str, false, kUidV);
  int64_t o = g.tensor("O", kBF16, L.bhsd, L.bhsd_str, false, kUidO);
  int64_t d_o = g.tensor("dO", kBF16, L.bhsd, L.bhsd_str, false, kUidDO);
  int64_t stats = g.tensor("Stats", kF32, L.bhs1, L.bhs1_str, false, kUidStats);
  int64_t d_q = g.tensor("dQ", kBF16, L.bhsd, L.bhsd_str, false, kUidDQ);
  int64_t d_k = g.tensor("dK", kBF16, L.bhsd, L.bhsd_str, false, kUidDK);
  int64_t d_v = g.tensor("dV", kBF16, L.bhsd, L.bhsd_str, false, kUidDV);
  int64_t scale_t = g.scalar("attn_scale", scale, kUidScale);
  int64_t one = g.scalar("one", 1.0f, kUidOne);

  // Dsum = rowsum(dO ∘ O). The odd strides of the product (s stride H·D) are cudnn-frontend's; the
  // tensor is virtual, so they describe no memory.
  int64_t d_o_o = g.tensor("mul_dO_O", kF32, L.bhsd, {H * S * D, S * D, H * D, 1}, true);
  g.pointwise("mul_dO_O", CUDNN_POINTWISE_MUL, kF32, d_o, d_o_o, o);
  int64_t row_dot = g.tensor("reduce_dO_O", kF32, L.bhs1, L.bhs1_str, true);
  g.reduction("reduce_dO_O", CUDNN_REDUCE_TENSOR_ADD, d_o_o, row_dot);
  int64_t dsum = g.tensor("Dsum", kF32, L.bhs1, L.bhs1_str, false, kUidDsum);
  g.pointwise("scale_dropout_inv", CUDNN_POINTWISE_MUL, kF32, row_dot, dsum, one);

  // P = exp(scale·Q·Kᵀ − Stats), masked.
  int64_t s_raw = g.tensor("matmul_Q_KT", kF32, L.bhss, L.bhss_str, true);
  g.matmul("matmul_Q_KT", q, kt, s_raw);
  int64_t scaled = g.tensor("mul_s_attn_scale", kF32, L.bhss, L.bhss_str, true);
  g.pointwise("mul_s_attn_scale", CUDNN_POINTWISE_MUL, kF32, s_raw, scaled, scale_t);
  int64_t logits = -1;
  if (style.bwd_mask_after_stats) {
    logits = g.tensor("sub_s_m", kF32, L.bhss, L.bhss_str, true);
    g.pointwise("sub_s_m", CUDNN_POINTWISE_SUB, kF32, scaled, logits, stats);
    if (s.causal) logits = add_causal_mask(g, style, L, logits);
  } else {
    int64_t masked = s.causal ? add_causal_mask(g, style, L, scaled) : scaled;
    logits = g.tensor("sub_s_m", kF32, L.bhss, L.bhss_str, true);
    g.pointwise("sub_s_m", CUDNN_POINTWISE_SUB, kF32, masked, logits, stats);
  }
  int64_t p = g.tensor("exp_s", kF32, L.bhss, L.bhss_str, true);
  g.pointwise("exp_s", CUDNN_POINTWISE_EXP, kF32, logits, p);

  // dV = Pᵀ·dO
  int64_t p_t = g.tensor("reshape_p", kBF16, L.bhss, L.bhss_t_str, true);
  g.reshape("reshape_p", p, p_t);
  g.matmul("matmul_pT_dO", p_t, d_o, d_v);

  // dS = P ∘ (dO·Vᵀ − Dsum) · scale
  int64_t d_p = g.tensor("matmul_dO_VT", kF32, L.bhss, L.bhss_str, true);
  g.matmul("matmul_dO_VT", d_o, vt, d_p);
  int64_t t1 = g.tensor("sub_dP_softmax_sum", kF32, L.bhss, L.bhss_str, true);
  g.pointwise("sub_dP_softmax_sum", CUDNN_POINTWISE_SUB, kF32, d_p, t1, dsum);
  int64_t t2 = g.tensor("mul_dP_exp_s", kF32, L.bhss, L.bhss_str, true);
  g.pointwise("mul_dP_exp_s", CUDNN_POINTWISE_MUL, kF32, t1, t2, p);
  int64_t d_s = g.tensor("mul_dS_attn_scale", kF32, L.bhss, L.bhss_str, true);
  g.pointwise("mul_dS_attn_scale", CUDNN_POINTWISE_MUL, kF32, t2, d_s, scale_t);

  // dK = dSᵀ·Q
  int64_t d_s_t = g.tensor("reshape_dS", kBF16, L.bhss, L.bhss_t_str, true);
  g.reshape("reshape_dS", d_s, d_s_t);
  g.matmul("matmul_dST_Q", d_s_t, q, d_k);

  // dQ = dS·K through an fp32 accumulator in memory (cudnn-frontend's non-deterministic path).
  int64_t k = g.tensor("reshape_k", kF32, L.bhsd, L.bhsd_str, true);
  g.reshape("reshape_k", kt, k);
  int64_t dq_accum = g.tensor("dQ_accum", kF32, L.bhsd, L.bhsd_str, false, kUidDQAccum);
  g.matmul("matmul_dS_K", d_s, k, dq_accum);
  g.pointwise("identity_dQ", CUDNN_POINTWISE_IDENTITY, kF32, dq_accum, d_q);
  g.finalize(handle);
  return g;
}

// ---- argument checks ------------------------------------------------------------------------

/// "" when `t` is a contiguous tensor of `dtype` with exactly `shape`; else what differs.
std::string check_tensor(const ptxb_tensor& t, const char* name, int32_t dtype, const std::vector<int64_t>& shape) {
  auto shape_of = [](const ptxb_tensor& x) {
    std::string s = "[";
    for (int i = 0; i < x.ndim && i < 8; ++i) s += (i ? "," : "") + std::to_string(x.shape[i]);
    return s + "]";
  };
  std::string want = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) want += (i ? "," : "") + std::to_string(shape[i]);
  want += "]";
  if (!t.data) return std::string(name) + ": null data pointer";
  if (reinterpret_cast<uintptr_t>(t.data) % 16) return std::string(name) + ": data not 16-byte aligned";
  if (t.dtype != dtype)
    return std::string(name) + ": dtype " + std::to_string(t.dtype) + ", expected " + std::to_string(dtype);
  if (t.ndim != static_cast<int32_t>(shape.size()))
    return std::string(name) + ": shape " + shape_of(t) + ", expected " + want;
  int64_t expect_stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != shape[static_cast<std::size_t>(i)])
      return std::string(name) + ": shape " + shape_of(t) + ", expected " + want;
    if (t.shape[i] != 1 && t.stride[i] != expect_stride)
      return std::string(name) + ": not contiguous (stride[" + std::to_string(i) + "] = " + std::to_string(t.stride[i]) +
             ", expected " + std::to_string(expect_stride) + ")";
    expect_stride *= t.shape[i];
  }
  return "";
}

std::string check_lse(const ptxb_tensor& t, const MhaShape& s) {
  if (t.ndim == 4) return check_tensor(t, "LSE", PTXB_F32, {s.B, s.H, s.S, 1});
  return check_tensor(t, "LSE", PTXB_F32, {s.B, s.H, s.S});
}

// One argument of a baseline, in ABI order: its name and the graph tensor it is.
struct Arg {
  const char* name;
  int64_t uid;
};
constexpr Arg kFwdArgs[] = {{"Q", kUidQ}, {"K", kUidK}, {"V", kUidV}, {"O", kUidO}, {"LSE", kUidStats}};
constexpr Arg kBwdArgs[] = {{"Q", kUidQ},      {"K", kUidK},   {"V", kUidV},   {"O", kUidO},  {"dO", kUidDO},
                            {"LSE", kUidStats}, {"dQ", kUidDQ}, {"dK", kUidDK}, {"dV", kUidDV}};

// cudnn-frontend adds a padding mask for S % 128 != 0 on cuDNN <= 9.15 (a known engine bug);
// this graph has none, so such shapes are refused there rather than computed wrongly.
const MhaShape& check_backward_shape(const MhaShape& s) {
  if (s.S % 128 != 0 && cudnn::runtime_version_number() <= 91500)
    throw InputError("cuDNN", "SDPA backward with S = " + std::to_string(s.S) +
                                  " (not a multiple of 128) needs cuDNN > 9.15; loaded " + cudnn::runtime_version());
  return s;
}

}  // namespace

GraphBuilder build_sdpa_graph(bool backward, const MhaShape& shape, const std::string& style, cudnnHandle_t handle) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(shape.D));
  for (const GraphStyle& st : {kStyleFe113, kStyleFe18})
    if (style == st.name) return (backward ? build_backward : build_forward)(handle, shape, st, scale);
  throw InputError("cuDNN", "unknown SDPA graph style '" + style + "' (fe113 or fe18)");
}

// ---- the part both baselines share ----------------------------------------------------------

struct MhaCudnnBaseline::Plan {
  MhaShape shape;
  cudnn::Handle handle;
  std::unique_ptr<GraphBuilder> graph;
  ExecutionPlan plan;
  MhaPlanInfo info;
  DeviceBuffer workspace;
  cudnn::PlanRunner runner;
  std::vector<int64_t> uids;
  std::vector<void*> pointers;  // by-value scalars filled in once, the rest per call
  std::string label;

  using BuildFn = GraphBuilder (*)(cudnnHandle_t, const MhaShape&, const GraphStyle&, float);

  Plan(const MhaShape& s, const char* what, BuildFn build) : shape(s), label(what) {
    PTXB_ENSURE(s.B > 0 && s.H > 0 && s.S > 0 && s.D > 0, "cuDNN",
                std::string(what) + ": every dimension must be positive (" + shape_text(s) + ")");
    PTXB_ENSURE(cudnn::runtime_version_number() >= 90000, "cuDNN",
                std::string(what) + " needs cuDNN 9 (graph API flash attention); loaded " + cudnn::runtime_version());
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.D));
    const int64_t forced = forced_engine();
    std::string failures;
    for (const GraphStyle& style : styles_to_try()) {
      try {
        auto g = std::make_unique<GraphBuilder>(build(handle.get(), s, style, scale));
        if (cudnn::debug_enabled()) std::fprintf(stderr, "[ptxbench cudnn] %s", g->describe().c_str());
        ExecutionPlan p = ExecutionPlan::select(handle.get(), *g, forced);
        graph = std::move(g);
        plan = std::move(p);
        info.graph_style = style.name;
        break;
      } catch (const Error& e) {
        failures += std::string("\n[") + style.name + "] " + e.what();
        if (cudnn::debug_enabled())
          std::fprintf(stderr, "[ptxbench cudnn] %s: style %s failed: %s\n", what, style.name, e.what());
      }
    }
    if (!graph) throw Error("cuDNN", std::string(what) + " " + shape_text(s) + ": no graph style gave a plan" + failures);

    info.cudnn_version = cudnn::runtime_version();
    info.engine = plan.choice().engine;
    info.engine_config = plan.choice().describe();
    info.workspace_bytes = plan.choice().workspace_bytes;
    info.graph = graph->describe();
    info.plan_json = plan.json();
    workspace = DeviceBuffer(static_cast<std::size_t>(info.workspace_bytes));
    uids = graph->io_uids();
    pointers.assign(uids.size(), nullptr);
    for (std::size_t i = 0; i < uids.size(); ++i)
      if (const void* value = graph->scalar_value(uids[i])) pointers[i] = const_cast<void*>(value);
  }

  void set_pointer(int64_t uid, void* p) {
    for (std::size_t i = 0; i < uids.size(); ++i)
      if (uids[i] == uid) {
        pointers[i] = p;
        return;
      }
  }

  /// Checks the arguments against `expected` (bf16 [B, H, S, D] each, but LSE) and only then points
  /// the graph's tensors at them: 0, or cudaErrorInvalidValue after saying on stderr what is wrong.
  int bind(const ptxb_tensor* args, int32_t nargs, std::span<const Arg> expected) {
    if (nargs != static_cast<int32_t>(expected.size()) || !args) {
      std::string names;
      for (const Arg& a : expected) names += (names.empty() ? "" : ", ") + std::string(a.name);
      return reject("expected " + std::to_string(expected.size()) + " arguments (" + names + "), got " +
                    std::to_string(nargs));
    }
    const std::vector<int64_t> bhsd{shape.B, shape.H, shape.S, shape.D};
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const Arg& a = expected[i];
      std::string why = a.uid == kUidStats ? check_lse(args[i], shape) : check_tensor(args[i], a.name, PTXB_BF16, bhsd);
      if (!why.empty()) return reject(why);
    }
    for (std::size_t i = 0; i < expected.size(); ++i) set_pointer(expected[i].uid, args[i].data);
    return 0;
  }

  int execute(cudaStream_t stream) {
    return runner.run_on_stream(handle.get(), stream, plan, uids, pointers, workspace.get(), label);
  }

  [[nodiscard]] int reject(const std::string& why) const {
    std::fprintf(stderr, "ptxbench: %s: bad arguments: %s\n", label.c_str(), why.c_str());
    return static_cast<int>(cudaErrorInvalidValue);
  }

  [[nodiscard]] std::string describe() const {
    return label + " " + shape_text(shape) + ": cuDNN " + info.cudnn_version + ", graph " + info.graph_style + ", " +
           info.engine_config;
  }
};

MhaCudnnBaseline::MhaCudnnBaseline(std::unique_ptr<Plan> plan) : m_plan(std::move(plan)) {}
MhaCudnnBaseline::~MhaCudnnBaseline() = default;
bool MhaCudnnBaseline::matches(const MhaShape& shape) const noexcept { return shape == m_plan->shape; }
const MhaPlanInfo& MhaCudnnBaseline::plan_info() const noexcept { return m_plan->info; }
std::string MhaCudnnBaseline::describe() const { return m_plan->describe(); }

// ---- forward --------------------------------------------------------------------------------

MhaFwdCudnn::MhaFwdCudnn(MhaShape shape)
    : MhaCudnnBaseline(std::make_unique<Plan>(shape, "cuDNN SDPA forward", build_forward)) {}

std::string MhaFwdCudnn::name() const { return "cuDNN SDPA"; }

int MhaFwdCudnn::run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  if (int rc = m_plan->bind(args, nargs, kFwdArgs); rc != 0) return rc;
  return m_plan->execute(stream);
}

// ---- backward -------------------------------------------------------------------------------

struct MhaBwdCudnn::Scratch {
  DeviceBuffer dsum;      // rowsum(dO∘O), fp32 [B, H, S, 1]
  DeviceBuffer dq_accum;  // fp32 [B, H, S, D]
  bool zero_dq_accum;     // cuDNN < 9.6 does not clear the accumulator itself

  explicit Scratch(const MhaShape& s)
      : dsum(static_cast<std::size_t>(s.B * s.H * s.S) * sizeof(float)),
        dq_accum(static_cast<std::size_t>(s.B * s.H * s.S * s.D) * sizeof(float)),
        zero_dq_accum(cudnn::runtime_version_number() < 90600) {}
};

MhaBwdCudnn::MhaBwdCudnn(MhaShape shape)
    : MhaCudnnBaseline(std::make_unique<Plan>(check_backward_shape(shape), "cuDNN SDPA backward", build_backward)),
      m_scratch(std::make_unique<Scratch>(shape)) {
  m_plan->set_pointer(kUidDsum, m_scratch->dsum.get());
  m_plan->set_pointer(kUidDQAccum, m_scratch->dq_accum.get());
}

MhaBwdCudnn::~MhaBwdCudnn() = default;

std::string MhaBwdCudnn::name() const { return "cuDNN SDPA backward"; }

int MhaBwdCudnn::run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  if (int rc = m_plan->bind(args, nargs, kBwdArgs); rc != 0) return rc;
  if (m_scratch->zero_dq_accum) {
    cudaError_t e = cudaMemsetAsync(m_scratch->dq_accum.get(), 0, m_scratch->dq_accum.bytes(), stream);
    if (e != cudaSuccess) return static_cast<int>(e);
  }
  return m_plan->execute(stream);
}

}  // namespace ptxbench

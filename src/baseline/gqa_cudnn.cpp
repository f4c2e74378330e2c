// The GQA SDPA graphs, written the way cudnn-frontend's composite SDPA node lowers a forward with
// variable sequence lengths (padding mask), ragged offsets, paged K/V caches and a bottom-right
// causal mask, because cuDNN's flash engines pattern-match exactly that shape of graph:
//
//   [paged: K^T = paged_cache_load(k_cache, page table, seq_len_kv)]
//   bmm1 Q·Kᵀ (m, n from seq_len_q, seq_len_kv) → ×scale
//   → padding mask: row < seq_len_q ∧ col < seq_len_kv, else −inf
//   → [causal] bottom-right mask: row + seq_len_kv − seq_len_q ≥ col, else −inf
//   → softmax (max, sub, exp, sum, log, add = Stats; div = P in bf16)
//   [paged: V = paged_cache_load(v_cache, page table, seq_len_kv)]
//   bmm2 P·V (m, k from seq_len_q, seq_len_kv) = O
//
// GQA needs nothing more: K and V have Hkv heads, Q and O have Hq, and the matmuls broadcast. The
// token-major tensors ([token, head, d]) are [B, H, S, D] views whose batch b starts at a ragged
// offset (in elements); page size 1 makes the page caches [num_pages, Hkv, 1, D] containers and the
// call's kv_indices, ragged by kv_indptr, a packed page table.
//
// What is timed per call: the cuDNN plan, then launch_scale_f32 over lse (cuDNN's Stats are
// natural-log logsumexp; the definition's lse is base 2, so lse = Stats·log2(e), a ~1 µs kernel),
// and with a padded page table (only if cuDNN refuses the packed one) the kernel that builds it.
// The conversion cannot join the graph: with a MUL node after Stats, cuDNN 9.19's flash engines
// fail to compile the graph (CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED, planned for an H200).
// Planned once, outside the timed call (as FlashInfer's plan() is): the per-sequence lengths and
// ragged offsets, from the workload's sequence layout in GqaProblem.
//
// Forms tried in order (the first cuDNN plans is used; GqaPlanInfo::form says which): packed page
// table (no extra kernel; cudnn-frontend notes it may be a little slower than a padded one, which
// loads page ids vectorized), then a padded table built per call by launch_pad_page_table; the
// call's sm_scale as a device tensor, then baked in by value. PTXBENCH_CUDNN_GQA_PAGE_TABLE=
// packed|padded keeps one page-table form (to compare them on a GPU).
#include "baseline/gqa_cudnn.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "baseline/cudnn_graph.h"
#include "baseline/gqa_cudnn_graph.h"
#include "baseline/gqa_cudnn_kernels.h"
#include "common/error.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"

namespace ptxbench {
namespace {

using cudnn::GraphBuilder;

// Fixed UIDs of the non-virtual tensors (intermediates get 1000+).
constexpr int64_t kUidQ = 1, kUidK = 2, kUidV = 3, kUidO = 4, kUidStats = 5, kUidScale = 6, kUidSeqQ = 7,
                  kUidSeqKV = 8, kUidTableK = 9, kUidTableV = 10, kUidOffQ = 11, kUidOffK = 12, kUidOffV = 13,
                  kUidOffO = 14, kUidOffStats = 15, kUidOffTableK = 16, kUidOffTableV = 17, kUidPadFill = 20,
                  kUidCausalFill = 21;

constexpr cudnnDataType_t kF32 = CUDNN_DATA_FLOAT, kBF16 = CUDNN_DATA_BFLOAT16, kI32 = CUDNN_DATA_INT32,
                          kI64 = CUDNN_DATA_INT64, kBool = CUDNN_DATA_BOOLEAN;

constexpr float kLog2e = 1.4426950408889634f;

const char* kind_text(GqaProblem::Kind k) {
  switch (k) {
    case GqaProblem::Kind::paged_decode: return "paged_decode";
    case GqaProblem::Kind::paged_prefill_causal: return "paged_prefill_causal";
    case GqaProblem::Kind::ragged_prefill_causal: return "ragged_prefill_causal";
  }
  return "?";
}

float mask_fill() {
  // cudnn-frontend's choice: the lowest float before cuDNN 9.10, −inf from then on.
  if (cudnn::runtime_version_number() < 91000) return std::numeric_limits<float>::lowest();
  return -std::numeric_limits<float>::infinity();
}

int64_t seq_len(const std::vector<int32_t>& indptr, int64_t b) { return int64_t(indptr[b + 1]) - indptr[b]; }

/// The row and column index of every element of a score tensor (GEN_INDEX over its dims 2 and 3),
/// int32 tensors named under `prefix`, computed in `compute`.
struct ScoreIndex {
  cudnn::TensorInfo score;  ///< a copy: adding tensors moves the builder's records
  int64_t row = 0, col = 0;
};
ScoreIndex score_index(GraphBuilder& g, int64_t score, const std::string& prefix, cudnnDataType_t compute) {
  ScoreIndex ix{g.info(score)};
  const cudnn::TensorInfo& s = ix.score;
  ix.row = g.tensor(prefix + "::row_index", kI32, s.dims, s.strides, true);
  g.pointwise(prefix + "::gen_row_index", CUDNN_POINTWISE_GEN_INDEX, compute, score, ix.row, -1, -1, 2);
  ix.col = g.tensor(prefix + "::col_index", kI32, s.dims, s.strides, true);
  g.pointwise(prefix + "::gen_col_index", CUDNN_POINTWISE_GEN_INDEX, compute, score, ix.col, -1, -1, 3);
  return ix;
}

/// score where `keep`, else the mask's fill value (a by-value scalar of uid `fill_uid`).
int64_t keep_or_fill(GraphBuilder& g, const ScoreIndex& ix, int64_t score, int64_t keep, const std::string& prefix,
                     int64_t fill_uid) {
  int64_t fill = g.scalar(prefix + "::fill", mask_fill(), fill_uid);
  int64_t out = g.tensor(prefix + "::masked", kF32, ix.score.dims, ix.score.strides, true);
  g.pointwise(prefix + "::select", CUDNN_POINTWISE_BINARY_SELECT, kF32, score, out, fill, keep);
  return out;
}

/// score → score where row < seq_len_q and col < seq_len_kv, else the fill value.
int64_t add_padding_mask(GraphBuilder& g, int64_t score, int64_t seq_q, int64_t seq_kv) {
  const ScoreIndex ix = score_index(g, score, "padding", kI32);
  const cudnn::TensorInfo& s = ix.score;
  int64_t row_ok = g.tensor("padding::row<seq_q", kBool, s.dims, s.strides, true);
  g.pointwise("padding::row<seq_q", CUDNN_POINTWISE_CMP_LT, kBool, ix.row, row_ok, seq_q);
  int64_t col_ok = g.tensor("padding::col<seq_kv", kBool, s.dims, s.strides, true);
  g.pointwise("padding::col<seq_kv", CUDNN_POINTWISE_CMP_LT, kBool, ix.col, col_ok, seq_kv);
  int64_t keep = g.tensor("padding::keep", kBool, s.dims, s.strides, true);
  g.pointwise("padding::and", CUDNN_POINTWISE_LOGICAL_AND, kBool, row_ok, keep, col_ok);
  return keep_or_fill(g, ix, score, keep, "padding", kUidPadFill);
}

/// score → score where row + seq_len_kv − seq_len_q ≥ col (bottom-right aligned), else the fill.
int64_t add_bottom_right_causal_mask(GraphBuilder& g, int64_t score, int64_t seq_q, int64_t seq_kv) {
  const ScoreIndex ix = score_index(g, score, "causal", kF32);
  const cudnn::TensorInfo& s = ix.score;
  int64_t shifted = g.tensor("causal::row+skv", kI32, s.dims, s.strides, true);
  g.pointwise("causal::row+skv", CUDNN_POINTWISE_ADD, kI32, ix.row, shifted, seq_kv, -1, 3);
  int64_t diag = g.tensor("causal::row+skv-sq", kI32, s.dims, s.strides, true);
  g.pointwise("causal::row+skv-sq", CUDNN_POINTWISE_SUB, kI32, shifted, diag, seq_q, -1, 3);
  int64_t keep = g.tensor("causal::keep", kBool, s.dims, s.strides, true);
  g.pointwise("causal::>=col", CUDNN_POINTWISE_CMP_GE, kBool, diag, keep, ix.col);
  return keep_or_fill(g, ix, score, keep, "causal", kUidCausalFill);
}

// ---- argument checks ------------------------------------------------------------------------

struct ArgSpec {
  const char* name;
  int32_t dtype;
  std::vector<int64_t> shape;  // empty: a scalar (ndim 0, or every extent 1)
  int64_t uid;                 // the graph tensor it binds, or -1
};

std::string shape_text(const int64_t* shape, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

/// "" when `t` is what `a` asks for (contiguous); else what differs.
std::string check_arg(const ptxb_tensor& t, const ArgSpec& a) {
  const std::string name = a.name;
  if (!t.data) return name + ": null data pointer";
  if (t.dtype != a.dtype) return name + ": dtype " + std::to_string(t.dtype) + ", expected " + std::to_string(a.dtype);
  if (t.ndim < 0 || t.ndim > 8) return name + ": ndim " + std::to_string(t.ndim);
  if (reinterpret_cast<uintptr_t>(t.data) % 16) return name + ": data not 16-byte aligned";
  if (a.shape.empty()) {
    for (int i = 0; i < t.ndim; ++i)
      if (t.shape[i] != 1) return name + ": shape " + shape_text(t.shape, t.ndim) + ", expected a scalar";
    return "";
  }
  const std::string want = shape_text(a.shape.data(), static_cast<int>(a.shape.size()));
  if (t.ndim != static_cast<int32_t>(a.shape.size()))
    return name + ": shape " + shape_text(t.shape, t.ndim) + ", expected " + want;
  int64_t expect_stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != a.shape[static_cast<std::size_t>(i)])
      return name + ": shape " + shape_text(t.shape, t.ndim) + ", expected " + want;
    if (t.shape[i] != 1 && t.stride[i] != expect_stride)
      return name + ": not contiguous (stride[" + std::to_string(i) + "] = " + std::to_string(t.stride[i]) +
             ", expected " + std::to_string(expect_stride) + ")";
    expect_stride *= t.shape[i];
  }
  return "";
}

/// The definition's arguments of `p`, in ABI order.
std::vector<ArgSpec> arg_specs(const GqaProblem& p) {
  const int64_t Hq = p.num_qo_heads, Hkv = p.num_kv_heads, D = p.head_dim, B = p.batch();
  const int64_t n_indptr = B + 1, n_indices = static_cast<int64_t>(p.kv_indices.size());
  std::vector<ArgSpec> a{{"q", PTXB_BF16, {p.total_q, Hq, D}, kUidQ}};
  if (p.paged()) {
    a.push_back({"k_cache", PTXB_BF16, {p.num_pages, 1, Hkv, D}, kUidK});
    a.push_back({"v_cache", PTXB_BF16, {p.num_pages, 1, Hkv, D}, kUidV});
  } else {
    a.push_back({"k", PTXB_BF16, {p.total_kv, Hkv, D}, kUidK});
    a.push_back({"v", PTXB_BF16, {p.total_kv, Hkv, D}, kUidV});
  }
  if (p.kind != GqaProblem::Kind::paged_decode) a.push_back({"qo_indptr", PTXB_I32, {n_indptr}, -1});
  a.push_back({"kv_indptr", PTXB_I32, {n_indptr}, -1});
  if (p.paged()) a.push_back({"kv_indices", PTXB_I32, {n_indices}, -1});
  a.push_back({"sm_scale", PTXB_F32, {}, kUidScale});
  a.push_back({"output", PTXB_BF16, {p.total_q, Hq, D}, kUidO});
  a.push_back({"lse", PTXB_F32, {p.total_q, Hq}, kUidStats});
  return a;
}

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

/// Graph variants in the order tried: the call's sm_scale before a baked one; a packed page table
/// (no extra kernel) before a padded one. PTXBENCH_CUDNN_GQA_PAGE_TABLE=packed|padded keeps one.
std::vector<GqaGraphOptions> options_to_try(const GqaProblem& p) {
  std::vector<bool> packed{true};
  if (p.paged()) {
    const std::string forced = env_text("PTXBENCH_CUDNN_GQA_PAGE_TABLE");
    if (forced == "packed") packed = {true};
    else if (forced == "padded") packed = {false};
    else if (forced.empty()) packed = {true, false};
    else throw InputError("cuDNN", "PTXBENCH_CUDNN_GQA_PAGE_TABLE=" + forced + ": expected packed or padded");
  }
  std::vector<GqaGraphOptions> out;
  for (bool pk : packed)
    for (bool by_value : {false, true}) out.push_back(GqaGraphOptions{by_value, pk});
  return out;
}

int64_t forced_engine() {
  const std::string v = env_text("PTXBENCH_CUDNN_ENGINE");
  if (v.empty()) return -1;
  char* end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (*end || n < 0) throw InputError("cuDNN", "PTXBENCH_CUDNN_ENGINE=" + v + ": expected an engine index");
  return n;
}

}  // namespace

// ---- GqaProblem -----------------------------------------------------------------------------

int64_t GqaProblem::max_q_len() const {
  if (kind == Kind::paged_decode) return 1;
  int64_t m = 1;
  for (int64_t b = 0; b + 1 < static_cast<int64_t>(qo_indptr.size()); ++b) m = std::max(m, seq_len(qo_indptr, b));
  return m;
}

int64_t GqaProblem::max_kv_len() const {
  int64_t m = 1;
  for (int64_t b = 0; b + 1 < static_cast<int64_t>(kv_indptr.size()); ++b) m = std::max(m, seq_len(kv_indptr, b));
  return m;
}

std::string GqaProblem::describe() const {
  return std::string(kind_text(kind)) + " B" + std::to_string(batch()) + " Hq" + std::to_string(num_qo_heads) +
         " Hkv" + std::to_string(num_kv_heads) + " D" + std::to_string(head_dim) + " q<=" +
         std::to_string(max_q_len()) + " kv<=" + std::to_string(max_kv_len());
}

void GqaProblem::validate() const {
  auto fail = [&](const std::string& why) { throw InputError("cuDNN", "GQA problem: " + why); };
  if (num_qo_heads <= 0 || num_kv_heads <= 0 || head_dim <= 0) fail("head counts and head_dim must be positive");
  if (num_qo_heads % num_kv_heads) fail("num_qo_heads must be a multiple of num_kv_heads");
  if (kv_indptr.size() < 2) fail("kv_indptr needs batch + 1 >= 2 entries");
  const int64_t B = batch();
  auto check_indptr = [&](const std::vector<int32_t>& v, const char* name, int64_t total) {
    if (static_cast<int64_t>(v.size()) != B + 1) fail(std::string(name) + " has " + std::to_string(v.size()) +
                                                      " entries, expected " + std::to_string(B + 1));
    if (v.front() != 0) fail(std::string(name) + "[0] must be 0");
    for (int64_t b = 0; b < B; ++b)
      if (v[b + 1] < v[b]) fail(std::string(name) + " decreases at " + std::to_string(b));
    if (v.back() != total)
      fail(std::string(name) + " ends at " + std::to_string(v.back()) + ", expected " + std::to_string(total));
  };
  if (kind == Kind::paged_decode) {
    if (total_q != B) fail("decode: total_q must equal the batch size");
    if (!qo_indptr.empty()) check_indptr(qo_indptr, "qo_indptr", total_q);
    for (std::size_t b = 0; b + 1 < qo_indptr.size(); ++b)
      if (seq_len(qo_indptr, static_cast<int64_t>(b)) != 1) fail("decode: one query per sequence");
  } else {
    check_indptr(qo_indptr, "qo_indptr", total_q);
  }
  if (paged()) {
    if (num_pages <= 0) fail("num_pages must be positive");
    check_indptr(kv_indptr, "kv_indptr", static_cast<int64_t>(kv_indices.size()));
    for (int32_t page : kv_indices)
      if (page < 0 || page >= num_pages) fail("kv_indices holds page " + std::to_string(page) + " outside [0, num_pages)");
  } else {
    check_indptr(kv_indptr, "kv_indptr", total_kv);
  }
  // cuDNN's rows with no visible key are not the reference's (output 0, lse −inf): refuse them.
  for (int64_t b = 0; b < B; ++b) {
    const int64_t q = kind == Kind::paged_decode ? 1 : seq_len(qo_indptr, b), kv = seq_len(kv_indptr, b);
    if (q > 0 && (kv == 0 || (causal() && q > kv)))
      fail("sequence " + std::to_string(b) + " has queries that see no key (q_len " + std::to_string(q) +
           ", kv_len " + std::to_string(kv) + "); not supported by the cuDNN baseline");
  }
}

// ---- the graph ------------------------------------------------------------------------------

std::string gqa_graph_form(const GqaProblem& p, const GqaGraphOptions& o) {
  std::string form = p.paged() ? (o.packed_page_table ? "paged, packed page table" : "paged, padded page table")
                               : "ragged";
  if (p.kind == GqaProblem::Kind::paged_prefill_causal) form += ", ragged q";
  return form + (o.scale_by_value ? ", scale by value" : "");
}

GraphBuilder build_gqa_sdpa_graph(const GqaProblem& p, const GqaGraphOptions& opt, cudnnHandle_t handle) {
  p.validate();
  const int64_t B = p.batch(), Hq = p.num_qo_heads, Hkv = p.num_kv_heads, D = p.head_dim;
  const int64_t Sq = p.max_q_len(), Skv = p.max_kv_len();
  const bool ragged_q = p.kind != GqaProblem::Kind::paged_decode;
  GraphBuilder g("gqa_sdpa_fwd " + p.describe() + " [" + gqa_graph_form(p, opt) + "]");

  const std::vector<int64_t> per_batch{B, 1, 1, 1}, offsets{B + 1, 1, 1, 1}, ones{1, 1, 1, 1};
  int64_t seq_q = g.tensor("seq_len_q", kI32, per_batch, ones, false, kUidSeqQ);
  int64_t seq_kv = g.tensor("seq_len_kv", kI32, per_batch, ones, false, kUidSeqKV);
  int64_t off_q = -1, off_o = -1, off_stats = -1;
  if (ragged_q) {
    off_q = g.tensor("ragged_offset_q", kI64, offsets, ones, false, kUidOffQ);
    off_o = g.tensor("ragged_offset_o", kI64, offsets, ones, false, kUidOffO);
    off_stats = g.tensor("ragged_offset_stats", kI64, offsets, ones, false, kUidOffStats);
  }

  // Q and O: [B, Hq, Sq, D] views of the token-major [token, head, d] memory.
  const std::vector<int64_t> q_dims{B, Hq, Sq, D}, q_strides{Sq * Hq * D, D, Hq * D, 1};
  int64_t q = g.tensor("Q", kBF16, q_dims, q_strides, false, kUidQ, off_q);
  int64_t o = g.tensor("O", kBF16, q_dims, q_strides, false, kUidO, off_o);
  int64_t stats = g.tensor("Stats", kF32, {B, Hq, Sq, 1}, {Sq * Hq, 1, Hq, 1}, false, kUidStats, off_stats);
  int64_t scale = opt.scale_by_value ? g.scalar("attn_scale", p.sm_scale, kUidScale)
                                   : g.tensor("attn_scale", kF32, ones, ones, false, kUidScale);

  // K (as Kᵀ) and V: loaded through the page table, or ragged views of [token, head, d].
  int64_t kt = -1, v = -1, k_cache = -1, v_cache = -1, table_k = -1, table_v = -1;
  if (p.paged()) {
    const std::vector<int64_t> cache_dims{p.num_pages, Hkv, 1, D}, cache_strides{Hkv * D, D, D, 1};
    k_cache = g.tensor("k_cache", kBF16, cache_dims, cache_strides, false, kUidK);
    v_cache = g.tensor("v_cache", kBF16, cache_dims, cache_strides, false, kUidV);
    int64_t off_tk = -1, off_tv = -1;
    if (opt.packed_page_table) {
      off_tk = g.tensor("page_table_offset_k", kI32, offsets, ones, false, kUidOffTableK);
      off_tv = g.tensor("page_table_offset_v", kI32, offsets, ones, false, kUidOffTableV);
    }
    const std::vector<int64_t> table_dims{B, 1, Skv, 1}, table_strides{Skv, Skv, 1, 1};
    table_k = g.tensor("page_table_k", kI32, table_dims, table_strides, false, kUidTableK, off_tk);
    table_v = g.tensor("page_table_v", kI32, table_dims, table_strides, false, kUidTableV, off_tv);
    kt = g.tensor("K^T", kBF16, {B, Hkv, D, Skv}, {Hkv * D * Skv, D * Skv, 1, D}, true);
    g.paged_cache_load("paged_k_cache", k_cache, table_k, seq_kv, kt);
  } else {
    int64_t off_k = g.tensor("ragged_offset_k", kI64, offsets, ones, false, kUidOffK);
    int64_t off_v = g.tensor("ragged_offset_v", kI64, offsets, ones, false, kUidOffV);
    kt = g.tensor("K^T", kBF16, {B, Hkv, D, Skv}, {Skv * Hkv * D, D, 1, Hkv * D}, false, kUidK, off_k);
    v = g.tensor("V", kBF16, {B, Hkv, Skv, D}, {Skv * Hkv * D, D, Hkv * D, 1}, false, kUidV, off_v);
  }

  const std::vector<int64_t> s_dims{B, Hq, Sq, Skv}, s_strides{Hq * Sq * Skv, Sq * Skv, Skv, 1};
  const std::vector<int64_t> row_dims{B, Hq, Sq, 1}, row_strides{Hq * Sq, Sq, 1, 1};
  int64_t s_raw = g.tensor("bmm1::S", kF32, s_dims, s_strides, true);
  g.matmul("bmm1", q, kt, s_raw, kF32, cudnn::MatmulOverrides{seq_q, seq_kv, -1});
  int64_t score = g.tensor("attn_scale::out", kF32, s_dims, s_strides, true);
  g.pointwise("attn_scale", CUDNN_POINTWISE_MUL, kF32, s_raw, score, scale);
  score = add_padding_mask(g, score, seq_q, seq_kv);
  if (p.causal()) score = add_bottom_right_causal_mask(g, score, seq_q, seq_kv);

  int64_t mx = g.tensor("softmax::max", kF32, row_dims, row_strides, true);
  g.reduction("softmax::max", CUDNN_REDUCE_TENSOR_MAX, score, mx);
  int64_t centered = g.tensor("softmax::sub", kF32, s_dims, s_strides, true);
  g.pointwise("softmax::sub", CUDNN_POINTWISE_SUB, kF32, score, centered, mx);
  int64_t e = g.tensor("softmax::exp", kF32, s_dims, s_strides, true);
  g.pointwise("softmax::exp", CUDNN_POINTWISE_EXP, kF32, centered, e);
  int64_t sum = g.tensor("softmax::sum", kF32, row_dims, row_strides, true);
  g.reduction("softmax::sum", CUDNN_REDUCE_TENSOR_ADD, e, sum);
  int64_t log_sum = g.tensor("softmax::log", kF32, row_dims, row_strides, true);
  g.pointwise("softmax::log", CUDNN_POINTWISE_LOG, kF32, sum, log_sum);
  g.pointwise("softmax::stats", CUDNN_POINTWISE_ADD, kF32, mx, stats, log_sum);
  // The backend wants bmm2's A operand in the I/O type.
  int64_t prob = g.tensor("softmax::P", kBF16, s_dims, s_strides, true);
  g.pointwise("softmax::div", CUDNN_POINTWISE_DIV, kF32, e, prob, sum);

  if (p.paged()) {
    v = g.tensor("V", kBF16, {B, Hkv, Skv, D}, {Hkv * Skv * D, Skv * D, D, 1}, true);
    g.paged_cache_load("paged_v_cache", v_cache, table_v, seq_kv, v);
  }
  g.matmul("bmm2", prob, v, o, kF32, cudnn::MatmulOverrides{seq_q, -1, seq_kv});
  g.finalize(handle);
  return g;
}

// ---- the baseline ---------------------------------------------------------------------------

struct GqaCudnnBaseline::Plan {
  GqaProblem problem;
  GqaGraphOptions options;
  std::vector<ArgSpec> args;
  cudnn::Handle handle;
  std::unique_ptr<GraphBuilder> graph;
  cudnn::ExecutionPlan plan;
  GqaPlanInfo info;
  DeviceBuffer workspace, layout, padded_table;
  cudnn::PlanRunner runner;
  std::vector<int64_t> uids;
  std::vector<void*> pointers;
  const int32_t* layout_kv_indptr = nullptr;  // in `layout`, for the padded page table kernel
  std::string label;

  explicit Plan(const GqaProblem& p) : problem(p), label("cuDNN GQA " + std::string(kind_text(p.kind))) {
    p.validate();
    PTXB_ENSURE(cudnn::runtime_version_number() >= 91002, "cuDNN",
                label + " needs cuDNN 9.10.2+ (ragged, paged, bottom-right causal SDPA); loaded " +
                    cudnn::runtime_version());
    args = arg_specs(p);
    const int64_t forced = forced_engine();
    std::string failures;
    for (const GqaGraphOptions& o : options_to_try(p)) {
      const std::string form = gqa_graph_form(p, o);
      try {
        auto g = std::make_unique<GraphBuilder>(build_gqa_sdpa_graph(p, o, handle.get()));
        if (cudnn::debug_enabled()) std::fprintf(stderr, "[ptxbench cudnn] %s", g->describe().c_str());
        cudnn::ExecutionPlan chosen = cudnn::ExecutionPlan::select(handle.get(), *g, forced);
        graph = std::move(g);
        plan = std::move(chosen);
        options = o;
        info.form = form;
        break;
      } catch (const Error& e) {
        failures += "\n[" + form + "] " + e.what();
        if (cudnn::debug_enabled())
          std::fprintf(stderr, "[ptxbench cudnn] %s: form '%s' failed: %s\n", label.c_str(), form.c_str(), e.what());
      }
    }
    if (!graph) throw Error("cuDNN", label + " " + p.describe() + ": no graph form gave a plan" + failures);

    info.cudnn_version = cudnn::runtime_version();
    info.scale_by_value = options.scale_by_value;
    info.engine = plan.choice().engine;
    info.engine_config = plan.choice().describe();
    info.workspace_bytes = plan.choice().workspace_bytes;
    info.graph = graph->describe();
    workspace = DeviceBuffer(static_cast<std::size_t>(std::max<int64_t>(info.workspace_bytes, 1)));
    upload_layout();
    if (p.paged() && !options.packed_page_table)
      padded_table = DeviceBuffer(static_cast<std::size_t>(p.batch() * p.max_kv_len()) * sizeof(int32_t));

    uids = graph->io_uids();
    pointers.assign(uids.size(), nullptr);
    for (std::size_t i = 0; i < uids.size(); ++i)
      if (const void* value = graph->scalar_value(uids[i])) pointers[i] = const_cast<void*>(value);
    bind_layout();
  }

  // Per-sequence lengths and ragged offsets (elements) in one device buffer, each array 16-byte
  // aligned: seq_q, seq_kv (i32 [B]); off_q (= off_o), off_kv, off_stats (i64 [B+1]); kv_indptr (i32).
  struct LayoutOffsets {
    std::size_t seq_q, seq_kv, off_q, off_kv, off_stats, kv_indptr, bytes;
  } at{};

  void upload_layout() {
    const GqaProblem& p = problem;
    const int64_t B = p.batch();
    auto aligned = [](std::size_t n) { return (n + 15) / 16 * 16; };
    std::size_t pos = 0;
    auto place = [&](std::size_t bytes) {
      std::size_t here = pos;
      pos += aligned(bytes);
      return here;
    };
    at.seq_q = place(B * 4);
    at.seq_kv = place(B * 4);
    at.off_q = place((B + 1) * 8);
    at.off_kv = place((B + 1) * 8);
    at.off_stats = place((B + 1) * 8);
    at.kv_indptr = place((B + 1) * 4);
    at.bytes = pos;
    std::vector<unsigned char> host(at.bytes, 0);
    auto i32 = [&](std::size_t base) { return reinterpret_cast<int32_t*>(host.data() + base); };
    auto i64 = [&](std::size_t base) { return reinterpret_cast<int64_t*>(host.data() + base); };
    const int64_t Hq = p.num_qo_heads, Hkv = p.num_kv_heads, D = p.head_dim;
    for (int64_t b = 0; b <= B; ++b) {
      const int64_t q0 = p.kind == GqaProblem::Kind::paged_decode ? b : p.qo_indptr[b];
      if (b < B) {
        i32(at.seq_q)[b] = p.kind == GqaProblem::Kind::paged_decode ? 1 : static_cast<int32_t>(seq_len(p.qo_indptr, b));
        i32(at.seq_kv)[b] = static_cast<int32_t>(seq_len(p.kv_indptr, b));
      }
      i64(at.off_q)[b] = q0 * Hq * D;
      i64(at.off_kv)[b] = int64_t(p.kv_indptr[b]) * Hkv * D;
      i64(at.off_stats)[b] = q0 * Hq;
      i32(at.kv_indptr)[b] = p.kv_indptr[b];
    }
    layout = DeviceBuffer(at.bytes);
    PTXB_CUDA_CALL(cudaMemcpy(layout.get(), host.data(), at.bytes, cudaMemcpyHostToDevice));
    layout_kv_indptr = reinterpret_cast<const int32_t*>(layout.as<unsigned char>() + at.kv_indptr);
  }

  void bind_layout() {
    auto base = layout.as<unsigned char>();
    set_pointer(kUidSeqQ, base + at.seq_q);
    set_pointer(kUidSeqKV, base + at.seq_kv);
    set_pointer(kUidOffQ, base + at.off_q);
    set_pointer(kUidOffO, base + at.off_q);
    set_pointer(kUidOffStats, base + at.off_stats);
    set_pointer(kUidOffK, base + at.off_kv);
    set_pointer(kUidOffV, base + at.off_kv);
    set_pointer(kUidOffTableK, base + at.kv_indptr);
    set_pointer(kUidOffTableV, base + at.kv_indptr);
    if (padded_table.get()) {
      set_pointer(kUidTableK, padded_table.get());
      set_pointer(kUidTableV, padded_table.get());
    }
  }

  void set_pointer(int64_t uid, void* ptr) {
    for (std::size_t i = 0; i < uids.size(); ++i)
      if (uids[i] == uid) pointers[i] = ptr;
  }

  [[nodiscard]] int reject(const std::string& why) const {
    std::fprintf(stderr, "ptxbench: %s: bad arguments: %s\n", label.c_str(), why.c_str());
    return static_cast<int>(cudaErrorInvalidValue);
  }

  int run(const ptxb_tensor* a, int32_t nargs, cudaStream_t stream) {
    if (!a || nargs != static_cast<int32_t>(args.size())) {
      std::string names;
      for (const ArgSpec& s : args) names += (names.empty() ? "" : ", ") + std::string(s.name);
      return reject("expected " + std::to_string(args.size()) + " arguments (" + names + "), got " +
                    std::to_string(nargs));
    }
    const int32_t* kv_indices = nullptr;
    float* lse = nullptr;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (std::string why = check_arg(a[i], args[i]); !why.empty()) return reject(why);
      if (std::strcmp(args[i].name, "kv_indices") == 0) kv_indices = static_cast<const int32_t*>(a[i].data);
      if (args[i].uid == kUidStats) lse = static_cast<float*>(a[i].data);
    }
    for (std::size_t i = 0; i < args.size(); ++i)
      if (args[i].uid >= 0 && !(args[i].uid == kUidScale && options.scale_by_value))
        set_pointer(args[i].uid, a[i].data);
    if (problem.paged()) {
      if (options.packed_page_table) {
        set_pointer(kUidTableK, const_cast<int32_t*>(kv_indices));
        set_pointer(kUidTableV, const_cast<int32_t*>(kv_indices));
      } else if (cudaError_t e = launch_pad_page_table(layout_kv_indptr, kv_indices, problem.batch(),
                                                       problem.max_kv_len(), padded_table.as<int32_t>(), stream);
                 e != cudaSuccess) {
        return static_cast<int>(e);
      }
    }

    if (int e = runner.run_on_stream(handle.get(), stream, plan, uids, pointers, workspace.get(), label)) return e;
    return static_cast<int>(launch_scale_f32(lse, problem.total_q * problem.num_qo_heads, kLog2e, stream));
  }
};

GqaCudnnBaseline::GqaCudnnBaseline(const GqaProblem& p) : m_plan(std::make_unique<Plan>(p)) {}
GqaCudnnBaseline::~GqaCudnnBaseline() = default;

std::string GqaCudnnBaseline::name() const { return "cuDNN SDPA (GQA " + std::string(kind_text(m_plan->problem.kind)) + ")"; }

int GqaCudnnBaseline::run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  return m_plan->run(args, nargs, stream);
}

const GqaPlanInfo& GqaCudnnBaseline::plan_info() const noexcept { return m_plan->info; }

std::string GqaCudnnBaseline::describe() const {
  const GqaPlanInfo& i = m_plan->info;
  return m_plan->label + " " + m_plan->problem.describe() + ": cuDNN " + i.cudnn_version + ", " + i.form + ", " +
         i.engine_config;
}

std::unique_ptr<Baseline> make_gqa_cudnn_baseline(const GqaProblem& p) { return std::make_unique<GqaCudnnBaseline>(p); }

}  // namespace ptxbench

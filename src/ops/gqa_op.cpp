#include "ops/gqa_op.h"

#include <algorithm>

#include "common/error.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"
#include "gpu/random_fill.h"
#include "reference/gqa_reference.h"

namespace ptxbench {
namespace {

using bf16 = __nv_bfloat16;

// The checked shape of a workload: the dims the reference takes, where each tensor sits among
// the inputs (q, k, v are 0, 1, 2 in every class), and the key/value rows.
struct GqaShape {
  GqaDims dims;
  bool paged = false;
  int64_t kv_rows = 0;  ///< rows of k and v (paged: pages)
  std::size_t qo_indptr = 0, kv_indptr = 0, kv_indices = 0, sm_scale = 0;  ///< 0: absent (q is 0)
  std::vector<std::size_t> index_inputs;                                    ///< the derived ones
};

std::string shape_text(const std::vector<int64_t>& s) { return TensorSpec{"", DType::bf16, s, {}, false}.shape_text(); }

void expect_tensor(const TensorSpec& t, const std::string& name, const std::vector<int64_t>& shape, DType dtype) {
  PTXB_ENSURE(t.name == name && t.shape == shape && t.dtype == dtype, "ops",
              "GQA tensor " + name + " must be " + shape_text(shape) + " " + dtype_name(dtype) + ", got " + t.name +
                  t.shape_text() + " " + dtype_name(t.dtype));
}

void expect_sampler(const ResolvedWorkload& w, const std::string& name, const std::string& kind) {
  auto it = w.workload.inputs.find(name);
  const std::string got = it == w.workload.inputs.end() ? "random" : it->second.kind;
  if (got != kind)
    throw InputError("ops", w.workload.source + ": GQA input " + name + " must be \"" + kind + "\", got \"" + got + "\"");
}

// `names`: the class's tensors in ABI order. The index arrays' lengths follow from len_indptr and
// num_kv_indices; everything else from q and the key/value tensors.
GqaShape shape_of(const ResolvedWorkload& w, const std::vector<std::string>& names, GqaProblem::Kind kind) {
  PTXB_ENSURE(w.tensors.size() == names.size(), "ops", "GQA expects " + std::to_string(names.size()) + " tensors");
  for (std::size_t i = 0; i < names.size(); ++i)
    PTXB_ENSURE(w.tensors[i].name == names[i], "ops", "GQA tensor " + std::to_string(i) + " must be " + names[i]);
  GqaShape s;
  s.paged = kind != GqaProblem::Kind::ragged_prefill_causal;
  s.dims.causal = kind != GqaProblem::Kind::paged_decode;
  const auto& q = w.tensors.at(0).shape;
  const auto& k = w.tensors.at(1).shape;
  PTXB_ENSURE(q.size() == 3 && k.size() == (s.paged ? 4u : 3u), "ops",
              "GQA expects q [tokens, Hq, D] and k " + std::string(s.paged ? "[pages, 1, Hkv, D]" : "[tokens, Hkv, D]"));
  s.dims.total_q = q[0];
  s.dims.num_qo_heads = q[1];
  s.dims.head_dim = q[2];
  s.kv_rows = k[0];
  s.dims.num_kv_heads = k[k.size() - 2];
  PTXB_ENSURE(s.dims.num_kv_heads > 0 && s.dims.num_qo_heads % s.dims.num_kv_heads == 0, "ops",
              "GQA needs num_qo_heads a multiple of num_kv_heads");
  const int64_t len_indptr = w.axis("len_indptr");
  s.dims.batch = len_indptr - 1;
  PTXB_ENSURE(kind != GqaProblem::Kind::paged_decode || s.dims.total_q == s.dims.batch, "ops",
              "GQA decode needs len_indptr == batch_size + 1");
  const int64_t Hq = s.dims.num_qo_heads, Hkv = s.dims.num_kv_heads, D = s.dims.head_dim;
  const std::vector<int64_t> kv_shape = s.paged ? std::vector<int64_t>{s.kv_rows, 1, Hkv, D}
                                                : std::vector<int64_t>{s.kv_rows, Hkv, D};
  expect_tensor(w.tensors[0], names[0], {s.dims.total_q, Hq, D}, DType::bf16);
  for (std::size_t i : {1, 2}) expect_tensor(w.tensors[i], names[i], kv_shape, DType::bf16);
  for (std::size_t i = 3; i < names.size(); ++i) {
    const std::string& n = names[i];
    const TensorSpec& t = w.tensors[i];
    if (n == "qo_indptr" || n == "kv_indptr") {
      expect_tensor(t, n, {len_indptr}, DType::i32);
      (n == "qo_indptr" ? s.qo_indptr : s.kv_indptr) = i;
      s.index_inputs.push_back(i);
    } else if (n == "kv_indices") {
      expect_tensor(t, n, {w.axis("num_kv_indices")}, DType::i32);
      s.kv_indices = i;
      s.index_inputs.push_back(i);
    } else if (n == "sm_scale") {
      expect_tensor(t, n, {}, DType::f32);
      s.sm_scale = i;
    } else if (n == "output") {
      expect_tensor(t, n, {s.dims.total_q, Hq, D}, DType::bf16);
    } else {
      expect_tensor(t, n, {s.dims.total_q, Hq}, DType::f32);
    }
  }
  for (std::size_t i : {0, 1, 2}) expect_sampler(w, names[i], "random");
  for (std::size_t i : s.index_inputs) expect_sampler(w, names[i], "derived");
  expect_sampler(w, names[s.sm_scale], "scalar");
  s.dims.sm_scale = static_cast<float>(w.workload.inputs.at(names[s.sm_scale]).value);
  return s;
}

// The layout's arrays in the order of the inputs they fill.
const std::vector<int32_t>& array_for(const SequenceLayout& l, const GqaShape& s, std::size_t input) {
  if (input == s.qo_indptr) return l.qo_indptr;
  if (input == s.kv_indptr) return l.kv_indptr;
  return l.kv_indices;
}

// Device copies of the layout the trusted side made itself (never the candidate-visible inputs):
// qo_indptr, kv_indptr, kv_indices one after another at `at`.
std::size_t layout_bytes(const SequenceLayout& l) {
  return sizeof(int32_t) * (l.qo_indptr.size() + l.kv_indptr.size() + l.kv_indices.size());
}

GqaIndexView upload(const SequenceLayout& l, void* at, cudaStream_t stream) {
  auto* p = static_cast<int32_t*>(at);
  GqaIndexView v;
  for (const auto* a : {&l.qo_indptr, &l.kv_indptr, &l.kv_indices}) {
    if (a->empty()) continue;
    PTXB_CUDA_CALL(cudaMemcpyAsync(p, a->data(), a->size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream));
    (a == &l.qo_indptr ? v.qo_indptr : a == &l.kv_indptr ? v.kv_indptr : v.kv_indices) = p;
    p += a->size();
  }
  return v;
}

template <typename T>
const T* in(const std::vector<DeviceTensor>& inputs, std::size_t i) {
  return static_cast<const T*>(inputs.at(i).data);
}

// Pairs (query i, key j) of one sequence that the mask lets through.
int64_t visible_pairs(int64_t q_len, int64_t kv_len, bool causal) {
  if (!causal) return q_len * kv_len;
  int64_t n = 0;
  for (int64_t i = 0; i < q_len; ++i) n += std::clamp<int64_t>(i + 1 + kv_len - q_len, 0, kv_len);
  return n;
}

}  // namespace

SequenceLayout GqaOperator::layout(const ResolvedWorkload& w) const {
  (void)shape_of(w, names(), m_kind);
  return make_sequence_layout(w.workload.uuid, totals(w));
}

GqaProblem GqaOperator::problem(const ResolvedWorkload& w) const {
  const GqaShape s = shape_of(w, names(), m_kind);
  SequenceLayout l = make_sequence_layout(w.workload.uuid, totals(w));
  GqaProblem p;
  p.kind = m_kind;
  p.num_qo_heads = s.dims.num_qo_heads;
  p.num_kv_heads = s.dims.num_kv_heads;
  p.head_dim = s.dims.head_dim;
  p.num_pages = s.paged ? s.kv_rows : 0;
  p.total_q = s.dims.total_q;
  p.total_kv = s.paged ? static_cast<int64_t>(l.kv_indices.size()) : s.kv_rows;
  p.sm_scale = s.dims.sm_scale;
  p.qo_indptr = std::move(l.qo_indptr);
  p.kv_indptr = std::move(l.kv_indptr);
  p.kv_indices = std::move(l.kv_indices);
  return p;
}

void GqaOperator::make_inputs(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, uint64_t seed,
                              cudaStream_t stream) const {
  const GqaShape s = shape_of(w, names(), m_kind);
  const SequenceLayout l = make_sequence_layout(w.workload.uuid, totals(w));
  refresh_inputs(w, inputs, seed, stream);  // q, k, v: the samplers the timed calls refresh with
  fill_constant(inputs.at(s.sm_scale).data, DType::f32, 1, s.dims.sm_scale, stream);
  for (std::size_t i : s.index_inputs) {
    const std::vector<int32_t>& a = array_for(l, s, i);
    PTXB_ENSURE(static_cast<int64_t>(a.size()) == inputs.at(i).spec.numel(), "ops", "GQA layout does not fit " + inputs[i].spec.name);
    PTXB_CUDA_CALL(cudaMemcpyAsync(inputs[i].data, a.data(), a.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream));
  }
  PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
}

void GqaOperator::reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                            const std::vector<float*>& outputs, cudaStream_t stream) const {
  const GqaShape s = shape_of(w, names(), m_kind);
  const SequenceLayout l = make_sequence_layout(w.workload.uuid, totals(w));
  DeviceBuffer index(layout_bytes(l));
  const GqaIndexView view = upload(l, index.get(), stream);
  gqa_reference(in<bf16>(inputs, 0), in<bf16>(inputs, 1), in<bf16>(inputs, 2), view, s.dims, outputs.at(0),
                outputs.at(1), stream);
  PTXB_CUDA_CALL(cudaStreamSynchronize(stream));  // the index copy lives until the kernel is done
}

std::unique_ptr<Baseline> GqaOperator::make_baseline(const ResolvedWorkload& w) const {
  return make_gqa_cudnn_baseline(problem(w));
}

std::vector<std::size_t> GqaOperator::fresh_inputs(const ResolvedWorkload& w) const {
  (void)shape_of(w, names(), m_kind);
  return {0, 1, 2};
}

std::optional<std::vector<double>> GqaOperator::fixed_values(const ResolvedWorkload& w, std::size_t input) const {
  const GqaShape s = shape_of(w, names(), m_kind);
  if (std::find(s.index_inputs.begin(), s.index_inputs.end(), input) == s.index_inputs.end())
    return Operator::fixed_values(w, input);
  const SequenceLayout l = make_sequence_layout(w.workload.uuid, totals(w));
  const std::vector<int32_t>& a = array_for(l, s, input);
  return std::vector<double>(a.begin(), a.end());
}

int64_t GqaOperator::row_length(const ResolvedWorkload& w, std::size_t o) const {
  return o == 1 ? 1 : shape_of(w, names(), m_kind).dims.head_dim;
}

// Scratch: the sample's row indices, then the trusted copy of the layout.
std::size_t GqaOperator::row_scratch_bytes(const ResolvedWorkload& w, int64_t rows) const {
  const SequenceTotals t = totals(w);
  const std::size_t index_ints = 2 * static_cast<std::size_t>(t.batch + 1) + (t.num_pages > 0 ? t.total_kv : 0);
  return static_cast<std::size_t>(rows) * sizeof(int64_t) + index_ints * sizeof(int32_t);
}

void GqaOperator::reference_rows(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                                 const std::vector<RowSample>& samples, const std::vector<float*>& out, void* scratch,
                                 cudaStream_t stream) const {
  const GqaShape s = shape_of(w, names(), m_kind);
  const SequenceLayout l = make_sequence_layout(w.workload.uuid, totals(w));
  std::size_t max_rows = 0;
  for (const auto& sample : samples) max_rows = std::max(max_rows, sample.rows.size());
  auto* rows = static_cast<int64_t*>(scratch);
  const GqaIndexView view = upload(l, rows + max_rows, stream);
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const auto& r = samples[k].rows;
    PTXB_CUDA_CALL(cudaMemcpyAsync(rows, r.data(), r.size() * sizeof(int64_t), cudaMemcpyHostToDevice, stream));
    const bool lse = samples[k].output == 1;
    gqa_reference_rows(in<bf16>(inputs, 0), in<bf16>(inputs, 1), in<bf16>(inputs, 2), view, s.dims, rows,
                       static_cast<int64_t>(r.size()), lse ? nullptr : out.at(k), lse ? out.at(k) : nullptr, stream);
  }
}

double GqaOperator::flops(const ResolvedWorkload& w) const {
  const GqaShape s = shape_of(w, names(), m_kind);
  const SequenceLayout l = make_sequence_layout(w.workload.uuid, totals(w));
  double pairs = 0;
  for (int64_t b = 0; b < l.batch(); ++b) pairs += static_cast<double>(visible_pairs(l.q_len(b), l.kv_len(b), s.dims.causal));
  return 4.0 * pairs * static_cast<double>(s.dims.num_qo_heads * s.dims.head_dim);
}

double GqaOperator::min_bytes(const ResolvedWorkload& w) const {
  const GqaShape s = shape_of(w, names(), m_kind);
  double b = Operator::min_bytes(w);
  if (!s.paged) return b;
  std::vector<int32_t> pages = make_sequence_layout(w.workload.uuid, totals(w)).kv_indices;
  std::sort(pages.begin(), pages.end());
  const auto read = static_cast<int64_t>(std::unique(pages.begin(), pages.end()) - pages.begin());
  for (std::size_t i : {1, 2}) b -= static_cast<double>((s.kv_rows - read) * (w.tensors[i].bytes() / s.kv_rows));
  return b;
}

const std::vector<std::string>& GqaOperator::names() const {
  static const std::vector<std::string> decode = {"q",        "k_cache", "v_cache", "kv_indptr",
                                                  "kv_indices", "sm_scale", "output", "lse"};
  static const std::vector<std::string> paged = {"q",         "k_cache",    "v_cache",  "qo_indptr", "kv_indptr",
                                                 "kv_indices", "sm_scale", "output", "lse"};
  static const std::vector<std::string> ragged = {"q", "k", "v", "qo_indptr", "kv_indptr", "sm_scale", "output", "lse"};
  switch (m_kind) {
    case GqaProblem::Kind::paged_decode: return decode;
    case GqaProblem::Kind::paged_prefill_causal: return paged;
    case GqaProblem::Kind::ragged_prefill_causal: return ragged;
  }
  throw Error("ops", "unknown GQA kind");
}

SequenceTotals GqaOperator::totals(const ResolvedWorkload& w) const {
  switch (m_kind) {
    case GqaProblem::Kind::paged_decode: {
      const int64_t batch = w.axis("batch_size");
      return {batch, batch, w.axis("num_kv_indices"), w.axis("num_pages")};
    }
    case GqaProblem::Kind::paged_prefill_causal:
      return {w.axis("len_indptr") - 1, w.axis("total_q"), w.axis("num_kv_indices"), w.axis("num_pages")};
    case GqaProblem::Kind::ragged_prefill_causal: return {w.axis("len_indptr") - 1, w.axis("total_q"), w.axis("total_kv"), 0};
  }
  throw Error("ops", "unknown GQA kind");
}

}  // namespace ptxbench

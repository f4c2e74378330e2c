#include "ops/mha_op.h"

#include "baseline/mha_cudnn.h"
#include "common/error.h"
#include "gpu/cuda_call.h"
#include "reference/mha_reference.h"
#include "reference/reference_rows.h"

namespace ptxbench {
namespace {

using bf16 = __nv_bfloat16;

// The shape every op of this family shares, checked against the definition: the named tensors in
// ABI order, [B, H, S, D] bf16 except LSE ([B, H, S] fp32).
MhaShape shape_of(const ResolvedWorkload& w, const std::vector<std::string>& names, bool causal) {
  PTXB_ENSURE(w.tensors.size() == names.size(), "ops",
              "attention expects " + std::to_string(names.size()) + " tensors");
  const auto& q = w.tensors.at(0).shape;
  PTXB_ENSURE(q.size() == 4, "ops", "attention expects Q[B, H, S, D]");
  MhaShape s{q[0], q[1], q[2], q[3], causal};
  for (std::size_t i = 0; i < names.size(); ++i) {
    const TensorSpec& t = w.tensors[i];
    const bool lse = names[i] == "LSE";
    std::vector<int64_t> want = lse ? std::vector<int64_t>{s.B, s.H, s.S} : q;
    PTXB_ENSURE(t.name == names[i] && t.shape == want && t.dtype == (lse ? DType::f32 : DType::bf16), "ops",
                "attention tensor " + std::to_string(i) + " must be " + names[i] +
                    (lse ? "[B, H, S] fp32" : "[B, H, S, D] bf16") + ", got " + t.name + t.shape_text());
  }
  return s;
}

AttentionDims dims_of(const MhaShape& s) { return {s.B * s.H, s.S, s.D, s.causal}; }

double forward_flops(const MhaShape& s) {
  double f = 4.0 * double(s.B) * double(s.H) * double(s.S) * double(s.S) * double(s.D);
  return s.causal ? f / 2 : f;
}

const std::vector<std::string> kFwdNames = {"Q", "K", "V", "O", "LSE"};
const std::vector<std::string> kBwdNames = {"Q", "K", "V", "O", "dO", "LSE", "dQ", "dK", "dV"};

template <typename T>
const T* in(const std::vector<DeviceTensor>& inputs, std::size_t i) {
  return static_cast<const T*>(inputs.at(i).data);
}

// The layout of a row reference's scratch: the row indices, what the kernels work in, the
// outputs computed alongside but not sampled (O with LSE, dK with dV), and the backward's D_i.
struct RowScratch {
  int64_t* rows;
  float* work;
  float* spare;
  float* delta;
  static std::size_t bytes(const MhaShape& s, int64_t rows) {
    AttentionDims d = dims_of(s);
    return static_cast<std::size_t>(rows) * sizeof(int64_t) +
           sizeof(float) * static_cast<std::size_t>(mha_rows_scratch_floats(d, rows) + rows * s.D + d.heads * s.S);
  }
  RowScratch(void* base, const MhaShape& s, int64_t rows) {
    AttentionDims d = dims_of(s);
    this->rows = static_cast<int64_t*>(base);
    work = reinterpret_cast<float*>(this->rows + rows);
    spare = work + mha_rows_scratch_floats(d, rows);
    delta = spare + rows * s.D;
  }

  /// For each sample k in turn: its row indices copied to the scratch, then each(k, rows, count).
  template <typename Each>
  void for_each_sample(const std::vector<RowSample>& samples, cudaStream_t stream, Each each) const {
    for (std::size_t k = 0; k < samples.size(); ++k) {
      const auto& r = samples[k].rows;
      PTXB_CUDA_CALL(cudaMemcpyAsync(rows, r.data(), r.size() * sizeof(int64_t), cudaMemcpyHostToDevice, stream));
      each(k, static_cast<const int64_t*>(rows), static_cast<int64_t>(r.size()));
    }
  }
};

int64_t max_rows(const std::vector<RowSample>& samples) {
  std::size_t n = 0;
  for (const auto& s : samples) n = std::max(n, s.rows.size());
  return static_cast<int64_t>(n);
}

}  // namespace

MhaShape MhaOperator::shape(const ResolvedWorkload& w) const {
  return shape_of(w, m_backward ? kBwdNames : kFwdNames, m_causal);
}

std::unique_ptr<Baseline> MhaOperator::make_baseline(const ResolvedWorkload& w) const {
  if (m_backward) return std::make_unique<MhaBwdCudnn>(shape(w));
  return std::make_unique<MhaFwdCudnn>(shape(w));
}

double MhaOperator::flops(const ResolvedWorkload& w) const {
  const double forward = forward_flops(shape(w));
  return m_backward ? 2.5 * forward : forward;
}

std::size_t MhaOperator::row_scratch_bytes(const ResolvedWorkload& w, int64_t rows) const {
  return RowScratch::bytes(shape(w), rows);
}

void MhaFwdOperator::reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                               const std::vector<float*>& outputs, cudaStream_t stream) const {
  MhaShape s = shape(w);
  mha_forward_reference(in<bf16>(inputs, 0), in<bf16>(inputs, 1), in<bf16>(inputs, 2), outputs.at(0), outputs.at(1),
                        dims_of(s), stream);
}

int64_t MhaFwdOperator::row_length(const ResolvedWorkload& w, std::size_t o) const {
  return o == 1 ? 1 : shape(w).D;
}

void MhaFwdOperator::reference_rows(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                                    const std::vector<RowSample>& samples, const std::vector<float*>& out,
                                    void* scratch, cudaStream_t stream) const {
  MhaShape s = shape(w);
  RowScratch sc(scratch, s, max_rows(samples));
  sc.for_each_sample(samples, stream, [&](std::size_t k, const int64_t* rows, int64_t n) {
    const bool lse = samples[k].output == 1;
    mha_forward_reference_rows(in<bf16>(inputs, 0), in<bf16>(inputs, 1), in<bf16>(inputs, 2), rows, n,
                               lse ? sc.spare : out.at(k), lse ? out.at(k) : sc.spare, sc.work, dims_of(s), stream);
  });
}

void MhaBwdOperator::make_inputs(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, uint64_t seed,
                                 cudaStream_t stream) const {
  MhaShape s = shape(w);
  Operator::make_inputs(w, inputs, seed, stream);  // Q, K, V, dO per their samplers (O, LSE overwritten)
  auto derived = [&](const char* name) {
    auto it = w.workload.inputs.find(name);
    return it != w.workload.inputs.end() && it->second.kind == "derived";
  };
  PTXB_ENSURE(derived("O") == derived("LSE"), "ops", "a backward workload derives both O and LSE or neither");
  if (!derived("O")) return;
  mha_forward_reference(in<bf16>(inputs, 0), in<bf16>(inputs, 1), in<bf16>(inputs, 2),
                        static_cast<bf16*>(inputs.at(3).data), static_cast<float*>(inputs.at(5).data), dims_of(s),
                        stream);
}

void MhaBwdOperator::reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                               const std::vector<float*>& outputs, cudaStream_t stream) const {
  MhaShape s = shape(w);
  mha_backward_reference(in<bf16>(inputs, 0), in<bf16>(inputs, 1), in<bf16>(inputs, 2), in<bf16>(inputs, 3),
                         in<bf16>(inputs, 4), in<float>(inputs, 5), outputs.at(0), outputs.at(1), outputs.at(2),
                         dims_of(s), stream);
}

std::vector<std::size_t> MhaBwdOperator::fresh_inputs(const ResolvedWorkload& w) const {
  (void)shape(w);
  return {4};  // dO
}

void MhaBwdOperator::reference_rows(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                                    const std::vector<RowSample>& samples, const std::vector<float*>& out,
                                    void* scratch, cudaStream_t stream) const {
  MhaShape s = shape(w);
  AttentionDims d = dims_of(s);
  RowScratch sc(scratch, s, max_rows(samples));
  const bf16 *Q = in<bf16>(inputs, 0), *K = in<bf16>(inputs, 1), *V = in<bf16>(inputs, 2);
  const bf16 *O = in<bf16>(inputs, 3), *dO = in<bf16>(inputs, 4);
  const float* LSE = in<float>(inputs, 5);
  mha_backward_delta(O, dO, sc.delta, d, stream);
  sc.for_each_sample(samples, stream, [&](std::size_t k, const int64_t* rows, int64_t n) {
    switch (samples[k].output) {
      case 0: mha_backward_dq_rows(Q, K, V, dO, LSE, sc.delta, rows, n, out.at(k), sc.work, d, stream); break;
      case 1: mha_backward_dkdv_rows(Q, K, V, dO, LSE, sc.delta, rows, n, out.at(k), sc.spare, sc.work, d, stream); break;
      default: mha_backward_dkdv_rows(Q, K, V, dO, LSE, sc.delta, rows, n, sc.spare, out.at(k), sc.work, d, stream); break;
    }
  });
}

}  // namespace ptxbench
